// Tuple simplification: get-tuple-element(tuple(a0, a1, ...), k) becomes ak,
// and tuple(gte(x, 0), ..., gte(x, n-1)) of all of x's elements becomes x.
#ifndef HLOC_PASSES_TUPLE_SIMPLIFIER_H_
#define HLOC_PASSES_TUPLE_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hloc {

class TupleSimplifier : public HloPass {
 public:
  absl::string_view name() const override { return "tuple-simplifier"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_TUPLE_SIMPLIFIER_H_
