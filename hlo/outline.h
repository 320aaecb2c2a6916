// Turning a set of instructions into one `call` or `fusion` of a new
// computation: the mutation primitive behind fusion and library-pattern
// outlining. Operands from outside the set become parameters (in order of first
// use); members used outside the set become outputs — one output is the callee's
// root, several are returned as a tuple and read back with get-tuple-element.
// Cheap members (a constant, a broadcast of a scalar) may be marked duplicable:
// they are copied into the callee and stay in place for their other users.
#ifndef HLOC_HLO_OUTLINE_H_
#define HLOC_HLO_OUTLINE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/module.h"

namespace hloc {

struct OutlineOptions {
  HloOpcode opcode = HloOpcode::kCall;  // kCall or kFusion.
  FusionKind fusion_kind = FusionKind::kLoop;
  std::string computation_name = "outlined";
  // Members whose value is needed outside may also be refused instead of being
  // returned as extra outputs.
  bool allow_multiple_outputs = true;
  // Members copied into the callee instead of being returned when they are
  // also used outside; the original stays for those users. Each one's
  // operands must be outside the set or duplicable themselves.
  absl::flat_hash_set<const HloInstruction*> duplicable;
  // Operand slots (member, operand index) whose outside values become the
  // first parameters, one per slot and in this order (a value in two slots is
  // passed twice); the other operands follow in order of first use. Library
  // calls use it to pass operands in the order the library reads them.
  std::vector<std::pair<const HloInstruction*, int64_t>> leading_operands;
};

struct OutlineResult {
  HloInstruction* caller = nullptr;  // The new call/fusion instruction.
  HloComputation* callee = nullptr;
  // Members in the order their values are returned (the tuple order when
  // there are several).
  std::vector<const HloInstruction*> outputs;
};

// Outlines `instructions` (all in `computation`, which must belong to a
// module). Fails without changing anything when the set is empty, contains a
// parameter or an instruction with control edges, or when outlining would
// make a cycle (an outside instruction both uses a member and feeds one).
// Duplicated members that stay behind are not in `outputs` and are not removed.
absl::StatusOr<OutlineResult> OutlineInstructions(HloComputation* computation,
                                                  absl::Span<HloInstruction* const> instructions,
                                                  const OutlineOptions& options = {});

// A detached computation holding a copy of `hlo` (same name) applied to
// parameters p0, p1, ... shaped like its operands: how a backend compiles one
// unfused op with the same machinery as a fused computation.
std::unique_ptr<HloComputation> WrapInstruction(const HloInstruction& hlo);

}  // namespace hloc

#endif  // HLOC_HLO_OUTLINE_H_
