// Producer-consumer fusion, XLA style: walk from the outputs towards the
// inputs and pull each producer into the kernel of its consumers.
//
//   p0   p1                  visiting order (users before operands):
//    \   /                     sub -> starts group G (it is the root)
//     add    c=1               mul -> all its users are in G: joins G
//     |  \   /                 add -> its users mul and sub are in G: joins G
//     |   mul                  c=1 -> a free leaf: copied into G
//      \   |
//       sub   <- root          result: G = {add, mul, sub, c}, one kLoop fusion
//
// A producer whose users all sit in one group moves into it. A producer whose
// users sit in several groups is copied into each of them when it is cheap
// (elementwise, broadcast, reshape-like, never expensive) and every group
// accepts it; otherwise it stays a kernel output of its own and starts a new
// group. Small constants and iotas are copied into every group that accepts
// them. A group holding a reduction is a kInput fusion (the reduction is its
// "hero", producers before it are its prologue), one whose output is a real
// transpose is also kInput, one with a dot or convolution is kOutput (bias and
// activation after it are its epilogue), everything else is kLoop.
//
// Each join asks the FusionRules: the edge table for every edge into the
// group, the budgets (instructions, distinct operands), one hero per kernel,
// and the reuse rule: an expensive producer (exp, divide, reduce, dot, ...)
// never joins a group that reads its elements several times (through a
// broadcast, gather, reduce-window or a dot/convolution operand).
//
// Why no cycle can appear: a producer joins only groups that hold *all* of its
// users (copies included), so by induction no path leaves a group and comes
// back to it, and such groups form an acyclic graph. No reachability query is
// made; the pass is linear in the size of the computation.
//
// Existing fusions are ordinary nodes (their kind is that of what they hold),
// so running the pass on its own output merges fusions into fusions and
// reaches a fixed point: a second run changes nothing.
#ifndef HLOC_PASSES_FUSION_PRODUCER_CONSUMER_FUSION_H_
#define HLOC_PASSES_FUSION_PRODUCER_CONSUMER_FUSION_H_

#include <vector>

#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_graph.h"
#include "passes/fusion/fusion_ledger.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/pass.h"

namespace hloc {

// The groups producer-consumer fusion would build in one computation.
std::vector<FusionGroup> PlanProducerConsumerFusion(const FusionGraph& graph,
                                                    FusionLedger* ledger,
                                                    absl::string_view pass_name);

class ProducerConsumerFusion : public HloPass {
 public:
  static constexpr absl::string_view kName = "producer-consumer-fusion";
  explicit ProducerConsumerFusion(FusionRules rules = FusionRules(),
                                  FusionLedger* ledger = nullptr)
      : rules_(std::move(rules)), ledger_(ledger) {}
  absl::string_view name() const override { return kName; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  FusionRules rules_;
  FusionLedger* ledger_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_PRODUCER_CONSUMER_FUSION_H_
