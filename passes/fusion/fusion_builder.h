// Turning planned groups into fusion instructions, many at once.
//
// The planners (producer-consumer, post-dominator, multi-output, horizontal,
// fallback) only decide which instructions belong together; this file does
// the rewriting for all of them:
//
//     a   b                          a    b
//      \ /                            \  /
//      add   c        group           fusion(a, b, c) ----- fused_computation:
//        \  /     {add, mul, neg}         |                   p0 p1  p2
//        mul          ====>               |                    \ /   |
//         |                               |                    add   |
//        neg                              |                      \  /
//                                                                 mul
//                                                                  |
//                                                            ROOT neg
//
// Operands from outside a group become parameters (first use first); members
// used outside become outputs (one output is the root, several a tuple read
// back with get-tuple-element). Members move into the fused computation as
// they are (HloComputation::AdoptInstruction: no copy, same name and
// attributes). A member that is itself a fusion is merged: the instructions
// of its fused computation move in, never nested, and an old multi-output
// fusion's get-tuple-element readers are rewired to the new outputs. A member
// marked `duplicated` is copied into the group while the original stays for
// its other users (it is removed once nobody reads it any more); when every
// reader left is in the group, it moves in like any other member.
//
// OutlineInstructions (hlo/outline.h) does the same for one set, but walks the
// whole computation for each call; this builder costs O(group) per group, so
// a pass that makes 100k fusions stays linear.
#ifndef HLOC_PASSES_FUSION_FUSION_BUILDER_H_
#define HLOC_PASSES_FUSION_FUSION_BUILDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_rules.h"

namespace hloc {

struct FusionGroup {
  // Members in an order where operands come before users (post order).
  std::vector<HloInstruction*> members;
  // Parallel to `members` (or empty: none duplicated).
  std::vector<bool> duplicated;
  FusionKind kind = FusionKind::kLoop;
  std::string backend_config;
  std::string instruction_name = "fusion";
  std::string computation_name = "fused_computation";
};

struct BuildResult {
  // One per group, in the order of the groups.
  std::vector<HloInstruction*> fusions;
  // Fused computations of merged fusions: no longer called; the caller
  // removes them with HloModule::RemoveComputations (once per pass).
  std::vector<HloComputation*> dead_computations;
};

// Builds every group in `computation` (which must belong to a module). The
// groups must be disjoint apart from duplicated members, must not form a cycle
// (see GroupsOnCycles) and each must have at least one member that is used
// outside it or is the root. Errors name the offending instruction; on error
// the computation may be partly rewritten (the planners guarantee the
// preconditions, so an error is a bug in a planner).
absl::StatusOr<BuildResult> BuildFusions(HloComputation& computation,
                                         const std::vector<FusionGroup>& groups);

// Whether BuildFusions can make a kernel of `group` in `computation`, decided
// without touching either: the shapes of output the builder cannot express (a
// tuple-valued member, such as a variadic reduce, among several outputs; a
// merged multi-output fusion read whole or as the root). The driver drops a
// refused group before building, so a graph shape the builder cannot handle
// is a recorded decline, not a failed pass.
FusionDecision CheckGroupBuildable(const HloComputation& computation, const FusionGroup& group);

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_BUILDER_H_
