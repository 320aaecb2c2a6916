// A compiled program's entry as the module declared it, for every target:
// its arguments in, its result out.
//
// Compiled programs have static buffers. A module with bounded dynamic
// shapes reaches them through DynamicPadder (passes/dynamic_padder.h),
// which makes the entry return (result at its bound, sizes, checks) and
// records that contract on the module. The program computes the sizes and
// checks where it runs (on the host, or as GPU kernels beside the result)
// and returns them with the result; DeclaredResult, read once at compile
// time, turns each run's padded result into the interpreter's value: array
// leaves cut to their runtime sizes, a failed size check an error naming
// the instruction. For any other module it returns the result unchanged.
//
// Arguments. A dynamic entry parameter (f32[<=8]) is, in the program, a
// parameter at its bound plus trailing s32 size parameters. PadArguments
// takes the declared entry's arguments, each of any size up to its bound,
// checks them (an error names the argument, parameter, dimension, size and
// bound) and returns the program's: copied into arrays of the bound, sizes
// appended. Every run path (HostProgram, GpuProgram, `hloc run` through
// them, the API's executables) goes through it.
#ifndef HLOC_BACKEND_COMMON_DECLARED_RESULT_H_
#define HLOC_BACKEND_COMMON_DECLARED_RESULT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "passes/dynamic_padder.h"

namespace hloc {
namespace backend {

class DeclaredResult {
 public:
  DeclaredResult() = default;  // A module without a contract.

  // The contract DynamicPadder left on `module` (the module a program is
  // built from), if any.
  static absl::StatusOr<DeclaredResult> ForModule(const HloModule& module);

  // Whether runs return a padded result that FromRun cuts.
  bool dynamic() const { return contract_.has_value(); }
  // Whether an entry parameter was dynamic: arguments go through
  // PadArguments.
  bool dynamic_parameters() const {
    return contract_.has_value() && !contract_->parameters.empty();
  }
  // Whether the declared result has a dynamic dimension.
  bool dynamic_result() const { return contract_.has_value() && !contract_->declared.is_static(); }
  // The number of runtime size checks the program reports with its result.
  int64_t num_checks() const {
    return contract_.has_value() ? static_cast<int64_t>(contract_->checks.size()) : 0;
  }
  // The entry result as declared (dynamic() only).
  const Shape& declared_result_shape() const { return contract_->declared; }
  // The entry parameters as declared (dynamic_parameters() only).
  const std::vector<Shape>& declared_parameters() const;
  // Their names, beside them.
  const std::vector<std::string>& declared_parameter_names() const;

  // The program's arguments for `arguments` of the declared entry; see above.
  // Only when dynamic_parameters().
  absl::StatusOr<std::vector<Literal>> PadArguments(absl::Span<const Literal> arguments) const;

  // `result`, what the program's run wrote for the module's entry root.
  absl::StatusOr<Literal> FromRun(Literal result) const;

 private:
  std::optional<DynamicResultContract> contract_;
};

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_DECLARED_RESULT_H_
