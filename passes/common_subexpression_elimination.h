// Common-subexpression elimination: two instructions of one computation with the
// same opcode, shape, operands and attributes compute the same value; the
// later one is replaced by the earlier. Side-effecting and random ops are never
// merged; constants merge when their literals are bitwise equal.
#ifndef HLOC_PASSES_COMMON_SUBEXPRESSION_ELIMINATION_H_
#define HLOC_PASSES_COMMON_SUBEXPRESSION_ELIMINATION_H_

#include "passes/pass.h"

namespace hloc {

class CommonSubexpressionElimination : public HloPass {
 public:
  absl::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_COMMON_SUBEXPRESSION_ELIMINATION_H_
