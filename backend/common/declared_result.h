// A compiled program's result as the module declared it, for every target.
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
#ifndef HLOC_BACKEND_COMMON_DECLARED_RESULT_H_
#define HLOC_BACKEND_COMMON_DECLARED_RESULT_H_

#include <optional>

#include "absl/status/statusor.h"
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

  // `result`, what the program's run wrote for the module's entry root.
  absl::StatusOr<Literal> FromRun(Literal result) const;

 private:
  std::optional<DynamicResultContract> contract_;
};

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_DECLARED_RESULT_H_
