// The HLO verifier: checks that a module is well formed before passes or
// backends rely on it. Structure (entry, roots, parameter numbering, unique
// names and ids, operand/user and control edges, acyclic graphs and call
// graph), per-op rules (operand and called-computation counts, composite
// calls, fusion back-pointers), shapes (every declared shape valid and
// equal, ignoring layouts, to what shape inference derives) and the module's
// input_output_alias / buffer_donor (existing buffers; aliased arrays of equal
// byte size, as XLA requires, whatever their shapes).
//
// A failure is an InvalidArgument status naming the computation, the
// instruction and the rule that failed:
//   computation main, instruction %dot.3: [shape] declared f32[2,4] but ...
// The first failure found is returned.
#ifndef HLOC_HLO_VERIFIER_H_
#define HLOC_HLO_VERIFIER_H_

#include "absl/status/status.h"
#include "hlo/module.h"

namespace hloc {

struct VerifierOptions {
  // After layout assignment: every array shape carries a layout, values that
  // pass unchanged through tuple / get-tuple-element / while / conditional /
  // call / fusion boundaries keep their layouts, and the module's
  // entry_computation_layout matches the entry's parameters and root
  // exactly. Off: layouts are ignored except that present ones must be valid.
  bool layout_sensitive = false;
  // Floating-point types of different widths may stand in for each other in
  // declared shapes (XLA's allow_mixed_precision).
  bool allow_mixed_precision = false;
  // Compare declared shapes with InferShape. Off: only structure is checked.
  bool check_shapes = true;
};

absl::Status VerifyModule(const HloModule& module, const VerifierOptions& options = {});

}  // namespace hloc

#endif  // HLOC_HLO_VERIFIER_H_
