// Constant folding through the reference interpreter: an instruction whose
// operands are all constants is replaced by the constant it computes, when
// that constant is small (max_result_bytes). Broadcasts and iotas are left
// alone (folding them only makes large constants), as are side-effecting and
// random ops.
#ifndef HLOC_PASSES_CONSTANT_FOLDING_H_
#define HLOC_PASSES_CONSTANT_FOLDING_H_

#include <cstdint>

#include "passes/pass.h"

namespace hloc {

class ConstantFolding : public HloPass {
 public:
  explicit ConstantFolding(int64_t max_result_bytes = 1 << 20)
      : max_result_bytes_(max_result_bytes) {}
  absl::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  int64_t max_result_bytes_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_CONSTANT_FOLDING_H_
