// Multi-output fusion (see multi_output_fusion.h for the idea).
#include "passes/fusion/multi_output_fusion.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/fusion/fusion_driver.h"
#include "passes/fusion/fusion_groups.h"

namespace hloc {
namespace {

// The index space a kernel iterates over.
struct IterationSpace {
  bool reduction = false;
  std::vector<int64_t> dims;         // output dims (loop) or reduce input dims
  std::vector<int64_t> reduce_dims;  // reduction only
  bool operator==(const IterationSpace& o) const {
    return reduction == o.reduction && dims == o.dims && reduce_dims == o.reduce_dims;
  }
  std::string ToString() const {
    return absl::StrCat(reduction ? "reduce " : "loop ", "[", absl::StrJoin(dims, ","), "]",
                        reduction ? absl::StrCat(" over {", absl::StrJoin(reduce_dims, ","), "}")
                                  : "");
  }
};

std::optional<IterationSpace> SpaceOfReduce(const HloInstruction& reduce) {
  if (reduce.operand_count() < 2 || !reduce.operand(0)->shape().IsArray()) return std::nullopt;
  IterationSpace space;
  space.reduction = true;
  space.dims = reduce.operand(0)->shape().dimensions();
  space.reduce_dims = reduce.dimensions();
  std::sort(space.reduce_dims.begin(), space.reduce_dims.end());
  return space;
}

std::optional<IterationSpace> SpaceOf(const HloInstruction& node, const NodeTraits& traits) {
  if (!traits.fusible || traits.free_leaf || traits.dots > 0) return std::nullopt;
  if (node.opcode() == HloOpcode::kFusion) {
    const HloComputation* body = node.fused_computation();
    std::optional<IterationSpace> space;
    const HloInstruction* root = body->root();
    // A kernel whose one value is a tuple (a variadic reduce, such as argmax's
    // (value, index)) cannot be one output among several.
    if (root->opcode() != HloOpcode::kTuple && root->shape().IsTuple()) return std::nullopt;
    std::vector<const HloInstruction*> outputs;
    if (root->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* element : root->operands()) outputs.push_back(element);
    } else {
      outputs.push_back(root);
    }
    if (traits.reductions == 1) {
      body->ForEachInstruction([&](HloInstruction* i) {
        if (i->opcode() == HloOpcode::kReduce) space = SpaceOfReduce(*i);
      });
      return space;
    }
    IterationSpace loop;
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!outputs[k]->shape().IsArray()) return std::nullopt;
      if (k == 0) loop.dims = outputs[k]->shape().dimensions();
      else if (outputs[k]->shape().dimensions() != loop.dims) return std::nullopt;
    }
    return loop;
  }
  if (node.shape().IsTuple()) return std::nullopt;
  switch (node.opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kParameter:
    case HloOpcode::kGetTupleElement:
      return std::nullopt;
    case HloOpcode::kReduce:
      return SpaceOfReduce(node);
    default:
      break;
  }
  if (!node.shape().IsArray()) return std::nullopt;
  IterationSpace loop;
  loop.dims = node.shape().dimensions();
  return loop;
}

// Two spaces one kernel can iterate over together, and the space it takes.
std::optional<IterationSpace> Combine(const IterationSpace& a, const IterationSpace& b) {
  if (a.reduction && b.reduction) {
    if (a == b) return a;
    return std::nullopt;
  }
  if (a.dims != b.dims) return std::nullopt;
  return a.reduction ? a : b;
}

class MultiOutputPlanner {
 public:
  MultiOutputPlanner(const FusionGraph& graph, FusionLedger* ledger, absl::string_view pass_name)
      : graph_(graph),
        ledger_(ledger),
        edge_ledger_(ledger != nullptr && ledger->records_edges() ? ledger : nullptr),
        pass_name_(pass_name),
        forest_(graph),
        space_(graph.size()) {
    for (int v = 0; v < graph.size(); ++v) space_[v] = SpaceOf(*graph.node(v), graph.traits(v));
  }

  std::vector<FusionGroup> Plan();

 private:
  // Tries to merge the kernels of a and b; `rule` names the kind of merge.
  bool TryMerge(int a, int b, absl::string_view rule);
  // A kernel whose one value is a tuple (no iteration space) is left out of
  // multi-output fusion on the record.
  void LogIfTupleValued(int a, int b, int left_out) const {
    const HloInstruction* node = graph_.node(left_out);
    if (!node->shape().IsTuple() || graph_.traits(left_out).multi_output) return;
    Log(a, b, FusionDecision::Refuse(
                  fusion_rule::kTupleValue,
                  absl::StrCat(node->name(), " is tuple-valued: it cannot be one output of many")));
  }
  void Log(int a, int b, const FusionDecision& decision) const {
    if (edge_ledger_ == nullptr) return;
    edge_ledger_->AddEdge(pass_name_, graph_.computation().name(), "multi-output",
                          graph_.node(a)->name(), graph_.node(b)->name(), decision.ok(),
                          decision.rule(), decision.reason());
  }

  const FusionGraph& graph_;
  FusionLedger* ledger_;
  FusionLedger* edge_ledger_;
  absl::string_view pass_name_;
  GroupForest forest_;
  std::vector<std::optional<IterationSpace>> space_;  // per group representative
};

bool MultiOutputPlanner::TryMerge(int a, int b, absl::string_view rule) {
  const int ga = forest_.Find(a), gb = forest_.Find(b);
  if (ga == gb) return false;
  for (int v : {a, b}) {
    if (UpdatesInPlace(*graph_.node(v))) {
      Log(a, b, FusionDecision::Refuse(fusion_rule::kInPlaceUpdate,
                                       absl::StrCat(graph_.node(v)->name(),
                                                    " updates in place: alone it writes only "
                                                    "its update")));
      return false;
    }
  }
  if (!space_[ga] || !space_[gb]) {
    LogIfTupleValued(a, b, space_[ga] ? b : a);
    return false;
  }
  std::optional<IterationSpace> combined = Combine(*space_[ga], *space_[gb]);
  if (!combined) {
    Log(a, b, FusionDecision::Refuse(fusion_rule::kIterationSpace,
                                     absl::StrCat(space_[ga]->ToString(), " vs ",
                                                  space_[gb]->ToString())));
    return false;
  }
  const int roots[2] = {std::min(ga, gb), std::max(ga, gb)};
  GroupForest::Merge merge;
  GroupForest::MergeOptions options;
  options.reductions_share_space = true;  // Combine() checked the index spaces.
  FusionDecision decision = forest_.CheckMerge(roots, options, &merge);
  if (decision.ok()) {
    bool gave_up = false;
    if (forest_.WouldCreateCycle(roots, &gave_up)) {
      decision = gave_up ? FusionDecision::Refuse(fusion_rule::kBudgetSearch,
                                                  "the search for a cycle gave up")
                         : FusionDecision::Refuse(fusion_rule::kCycle,
                                                  "a path leaves one kernel and enters the other");
    }
  }
  if (decision.ok()) decision = FusionDecision::Allow(rule);
  Log(a, b, decision);
  if (!decision.ok()) return false;
  const int root = forest_.Union(merge);
  space_[root] = combined;
  return true;
}

std::vector<FusionGroup> MultiOutputPlanner::Plan() {
  const int n = graph_.size();
  // 1. A producer read by a kernel and by others becomes an extra output.
  for (int p = 0; p < n; ++p) {
    if (!space_[p] || graph_.traits(p).multi_output) continue;
    absl::Span<const int> users = graph_.users(p);
    const bool read_elsewhere = users.size() >= 2 || (graph_.is_root(p) && !users.empty());
    if (!read_elsewhere) continue;
    for (int c : users) {
      if (!space_[c]) continue;
      if (TryMerge(p, c, fusion_rule::kProducerOutput)) break;
    }
  }
  // 2. Kernels that read the same operand.
  const int64_t max_siblings = graph_.rules().budgets().max_outputs;
  for (int x = 0; x < n; ++x) {
    const HloInstruction* shared = graph_.node(x);
    if (graph_.traits(x).free_leaf || !shared->shape().IsArray()) continue;
    std::optional<int64_t> elements = shared->shape().CheckedElementCount();
    if (!elements || *elements <= 1) continue;
    std::vector<int> siblings;
    for (int u : graph_.users(x)) {
      if (space_[forest_.Find(u)]) {
        siblings.push_back(u);
      } else {
        LogIfTupleValued(x, u, u);
      }
      if (static_cast<int64_t>(siblings.size()) >= max_siblings) break;
    }
    if (siblings.size() < 2) continue;
    for (size_t i = 1; i < siblings.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (forest_.Find(siblings[j]) == forest_.Find(siblings[i])) break;
        if (TryMerge(siblings[j], siblings[i], fusion_rule::kSibling)) break;
      }
    }
  }
  forest_.BreakCycles(ledger_, pass_name_);
  return forest_.ToFusionGroups();
}

}  // namespace

std::vector<FusionGroup> PlanMultiOutputFusion(const FusionGraph& graph, FusionLedger* ledger,
                                               absl::string_view pass_name) {
  return MultiOutputPlanner(graph, ledger, pass_name).Plan();
}

absl::StatusOr<bool> MultiOutputFusion::Run(HloModule& module) {
  return RunFusionPlanner(module, rules_, kName, ledger_,
                          [](const FusionGraph& graph, FusionLedger* ledger) {
                            return PlanMultiOutputFusion(graph, ledger, kName);
                          });
}

}  // namespace hloc
