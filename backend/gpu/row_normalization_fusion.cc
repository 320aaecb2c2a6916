// RowNormalizationFusion (see row_normalization_fusion.h): candidate groups
// by union-find over the computation's fusions, a trial merge on a scratch
// copy of the module, then the real merge of the groups that passed.
#include "backend/gpu/row_normalization_fusion.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "hlo/status_macros.h"
#include "passes/fusion/fusion_builder.h"

namespace hloc {
namespace gpu {
namespace {

// The row shape a node's reductions reduce (trailing `reduced` dimensions).
struct RowKey {
  std::vector<int64_t> shape;
  int64_t reduced = 0;
  bool operator==(const RowKey& o) const { return shape == o.shape && reduced == o.reduced; }
};

enum class NodeKind { kNone, kReduction, kLight };

struct NodeInfo {
  NodeKind kind = NodeKind::kNone;
  RowKey key;  // kReduction only.
};

bool IsLight(const HloInstruction& hlo) {
  if (hlo.IsElementwise()) return true;
  switch (hlo.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kConstant:
    case HloOpcode::kParameter:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kIota: return true;
    default: return false;
  }
}

// The key of a reduction a row-normalization kernel could run; nullopt
// when it cannot.
std::optional<RowKey> ReductionKey(const HloInstruction& reduce,
                                   const RowNormalizationLimits& limits) {
  if (reduce.operand_count() != 2 || reduce.shape().IsTuple()) return std::nullopt;
  const Shape& input = reduce.operand(0)->shape();
  const PrimitiveType type = input.element_type();
  if (type != xla::F32 && type != xla::BF16 && type != xla::F16) return std::nullopt;
  std::vector<int64_t> dims = reduce.dimensions();
  std::sort(dims.begin(), dims.end());
  const int64_t k = static_cast<int64_t>(dims.size());
  if (k == 0) return std::nullopt;
  int64_t length = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (dims[i] != input.rank() - k + i) return std::nullopt;
    length *= input.dimensions(dims[i]);
    if (length > limits.max_row_length) return std::nullopt;
  }
  if (length < 2) return std::nullopt;
  return RowKey{input.dimensions(), k};
}

NodeInfo Classify(const HloInstruction& hlo, const RowNormalizationLimits& limits) {
  NodeInfo info;
  std::vector<const HloInstruction*> reductions;
  if (hlo.opcode() == HloOpcode::kFusion) {
    if (IsRowNormalizationFusion(hlo) || hlo.fused_computation() == nullptr) return info;
    if (hlo.fusion_kind() == FusionKind::kCustom) return info;  // A backend's own kernel.
    bool light = true;
    hlo.fused_computation()->ForEachInstruction([&](const HloInstruction* inner) {
      if (inner->opcode() == HloOpcode::kReduce) {
        reductions.push_back(inner);
      } else if (!IsLight(*inner)) {
        light = false;
      }
    });
    if (!light) return info;
  } else if (hlo.opcode() == HloOpcode::kReduce) {
    reductions.push_back(&hlo);
  } else if (!IsLight(hlo) || hlo.opcode() == HloOpcode::kParameter ||
             hlo.opcode() == HloOpcode::kConstant || hlo.opcode() == HloOpcode::kTuple ||
             hlo.opcode() == HloOpcode::kGetTupleElement || !hlo.shape().IsArray()) {
    return info;
  }
  if (reductions.empty()) {
    info.kind = NodeKind::kLight;
    return info;
  }
  for (const HloInstruction* reduce : reductions) {
    std::optional<RowKey> key = ReductionKey(*reduce, limits);
    if (!key.has_value()) return NodeInfo{};
    if (info.kind == NodeKind::kReduction && !(*key == info.key)) return NodeInfo{};
    info.kind = NodeKind::kReduction;
    info.key = *std::move(key);
  }
  return info;
}

std::vector<int64_t> WithoutOnes(absl::Span<const int64_t> dims) {
  std::vector<int64_t> kept;
  for (int64_t d : dims) {
    if (d != 1) kept.push_back(d);
  }
  return kept;
}

// Whether every output of a light node is row-shaped or per row for `key`.
bool FitsKey(const HloInstruction& hlo, const RowKey& key) {
  std::vector<const Shape*> leaves;
  if (hlo.shape().IsTuple()) {
    for (const Shape& s : hlo.shape().tuple_shapes()) leaves.push_back(&s);
  } else {
    leaves.push_back(&hlo.shape());
  }
  const std::vector<int64_t> per_row = WithoutOnes(
      absl::MakeConstSpan(key.shape.data(), key.shape.size() - static_cast<size_t>(key.reduced)));
  for (const Shape* leaf : leaves) {
    if (!leaf->IsArray()) return false;
    if (leaf->dimensions() != key.shape && WithoutOnes(leaf->dimensions()) != per_row) {
      return false;
    }
  }
  return true;
}

class Planner {
 public:
  Planner(HloComputation& computation, const RowNormalizationLimits& limits)
      : order_(computation.MakeInstructionPostOrder()), root_(computation.root()) {
    for (size_t i = 0; i < order_.size(); ++i) {
      position_[order_[i]] = static_cast<int>(i);
      info_.push_back(Classify(*order_[i], limits));
      parent_.push_back(static_cast<int>(i));
      has_reduction_.push_back(info_.back().kind == NodeKind::kReduction);
    }
  }

  // Candidate groups: members in post order, get-tuple-elements of member
  // multi-output fusions included.
  std::vector<std::vector<HloInstruction*>> Plan() {
    const int n = static_cast<int>(order_.size());
    for (int i = 0; i < n; ++i) {
      if (info_[i].kind != NodeKind::kReduction) continue;
      for (int p : Producers(i)) {
        if (info_[p].kind == NodeKind::kReduction && info_[p].key == info_[i].key) Union(p, i);
      }
    }
    // Light neighbours join, a hop per round.
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      for (int i = 0; i < n; ++i) {
        if (info_[i].kind != NodeKind::kLight || has_reduction_[Find(i)]) continue;
        std::vector<int> neighbours = Producers(i);
        std::vector<int> consumers = Consumers(i);
        neighbours.insert(neighbours.end(), consumers.begin(), consumers.end());
        const RowKey* key = nullptr;
        for (int m : neighbours) {
          const int r = Find(m);
          if (!has_reduction_[r]) continue;
          const RowKey& k = key_of(r);
          if (key != nullptr && !(k == *key)) continue;
          if (key == nullptr && !FitsKey(*order_[i], k)) continue;
          key = &k;
          Union(r, i);
          changed = true;
        }
      }
      if (!changed) break;
    }
    absl::flat_hash_map<int, std::vector<int>> groups;
    std::vector<int> roots;
    for (int i = 0; i < n; ++i) {
      if (info_[i].kind == NodeKind::kNone) continue;
      const int r = Find(i);
      if (!has_reduction_[r]) continue;
      if (!groups.contains(r)) roots.push_back(r);
      groups[r].push_back(i);
    }
    std::vector<std::vector<HloInstruction*>> result;
    for (int r : roots) {
      std::vector<int> members = groups[r];
      bool ok = true;
      for (int m : std::vector<int>(members)) {
        if (!order_[m]->shape().IsTuple()) continue;
        if (order_[m] == root_) ok = false;
        for (HloInstruction* user : order_[m]->users()) {
          if (user->opcode() != HloOpcode::kGetTupleElement || Pos(user) < 0) {
            ok = false;
          } else {
            members.push_back(Pos(user));
          }
        }
      }
      if (!ok) continue;
      std::sort(members.begin(), members.end());
      members.erase(std::unique(members.begin(), members.end()), members.end());
      if (ClosesCycle(members)) continue;
      std::vector<HloInstruction*> group;
      for (int m : members) group.push_back(order_[m]);
      result.push_back(std::move(group));
    }
    return result;
  }

 private:
  int Find(int i) {
    while (parent_[i] != i) {
      parent_[i] = parent_[parent_[i]];
      i = parent_[i];
    }
    return i;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (has_reduction_[b] && !has_reduction_[a]) std::swap(a, b);
    parent_[b] = a;
    if (!has_reduction_[a] && has_reduction_[b]) has_reduction_[a] = true;
  }
  // The key of a group with a reduction: any of its reduction members'.
  const RowKey& key_of(int root) {
    auto it = group_key_.find(root);
    if (it != group_key_.end() && Find(it->second) == root) return info_[it->second].key;
    for (size_t i = 0; i < info_.size(); ++i) {
      if (info_[i].kind == NodeKind::kReduction && Find(static_cast<int>(i)) == root) {
        group_key_[root] = static_cast<int>(i);
        return info_[i].key;
      }
    }
    return info_[root].key;  // Unreachable: the group has a reduction.
  }

  int Pos(const HloInstruction* hlo) const {
    auto it = position_.find(hlo);
    return it == position_.end() ? -1 : it->second;
  }

  // Operand nodes, looking through get-tuple-elements of fusions.
  std::vector<int> Producers(int i) const {
    std::vector<int> result;
    for (const HloInstruction* operand : order_[i]->operands()) {
      if (operand->opcode() == HloOpcode::kGetTupleElement &&
          operand->operand(0)->opcode() == HloOpcode::kFusion) {
        operand = operand->operand(0);
      }
      auto it = position_.find(operand);
      if (it != position_.end()) result.push_back(it->second);
    }
    return result;
  }
  std::vector<int> Consumers(int i) const {
    std::vector<int> result;
    for (const HloInstruction* user : order_[i]->users()) {
      if (user->opcode() == HloOpcode::kGetTupleElement) {
        for (const HloInstruction* u : user->users()) {
          if (Pos(u) >= 0) result.push_back(Pos(u));
        }
      } else if (Pos(user) >= 0) {
        result.push_back(Pos(user));
      }
    }
    return result;
  }

  // True when a path leaves `members` and comes back (merging would make
  // the fusion depend on itself).
  bool ClosesCycle(const std::vector<int>& members) const {
    absl::flat_hash_set<int> in(members.begin(), members.end());
    const int last = members.back();
    std::deque<int> queue;
    absl::flat_hash_set<int> seen;
    for (int m : members) {
      for (const HloInstruction* user : order_[m]->users()) {
        const int u = Pos(user);
        if (u >= 0 && !in.contains(u) && seen.insert(u).second) queue.push_back(u);
      }
    }
    while (!queue.empty()) {
      const int x = queue.front();
      queue.pop_front();
      if (x > last) continue;  // Nothing after the last member feeds it.
      for (const HloInstruction* user : order_[x]->users()) {
        const int u = Pos(user);
        if (u < 0) continue;
        if (in.contains(u)) return true;
        if (seen.insert(u).second) queue.push_back(u);
      }
    }
    return false;
  }

  std::vector<HloInstruction*> order_;
  const HloInstruction* root_;
  absl::flat_hash_map<const HloInstruction*, int> position_;
  std::vector<NodeInfo> info_;
  std::vector<int> parent_;
  std::vector<bool> has_reduction_;
  absl::flat_hash_map<int, int> group_key_;
};

FusionGroup MakeGroup(std::vector<HloInstruction*> members) {
  FusionGroup group;
  group.members = std::move(members);
  group.kind = FusionKind::kCustom;
  group.instruction_name = "row_normalization_fusion";
  group.computation_name = "fused_row_normalization";
  return group;
}

std::vector<std::string> Names(const std::vector<HloInstruction*>& members) {
  std::vector<std::string> names;
  for (const HloInstruction* m : members) names.push_back(m->name());
  return names;
}

}  // namespace

bool IsRowNormalizationFusion(const HloInstruction& fusion) {
  if (fusion.opcode() != HloOpcode::kFusion) return false;
  const std::string* strategy = fusion.FindFrontendAttribute(kFusionStrategyAttribute);
  return strategy != nullptr && *strategy == kRowNormalizationStrategy;
}

absl::StatusOr<bool> RowNormalizationFusion::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    HLOC_ASSIGN_OR_RETURN(bool c, RunOnComputation(module, *computation));
    changed = changed || c;
  }
  return changed;
}

absl::StatusOr<bool> RowNormalizationFusion::RunOnComputation(HloModule& module,
                                                              HloComputation& computation) {
  Planner planner(computation, limits_);
  std::vector<std::vector<HloInstruction*>> candidates = planner.Plan();
  if (candidates.empty()) return false;
  auto record = [&](const std::vector<std::string>& subjects, bool accepted,
                    absl::string_view reason, absl::string_view result) {
    if (ledger_ == nullptr) return;
    LedgerEntry entry;
    entry.pass = std::string(kPassName);
    entry.computation = computation.name();
    entry.event = "group";
    entry.subjects = subjects;
    entry.accepted = accepted;
    entry.rule = kRowNormalizationStrategy;
    entry.reason = std::string(reason);
    entry.result = std::string(result);
    ledger_->Add(std::move(entry));
  };
  bool changed = false;
  // A lone fusion that already is a row normalization only needs its mark.
  std::vector<std::vector<HloInstruction*>> merges;
  for (std::vector<HloInstruction*>& group : candidates) {
    if (group.size() > 1) {
      merges.push_back(std::move(group));
      continue;
    }
    HloInstruction* only = group[0];
    if (only->opcode() != HloOpcode::kFusion) continue;
    absl::StatusOr<RowNormalizationPlan> plan =
        AnalyzeRowNormalization(*only->fused_computation(), limits_);
    if (!plan.ok()) continue;  // An ordinary reduction fusion: nothing to say.
    only->mutable_attrs()->fusion_kind = FusionKind::kCustom;
    only->SetFrontendAttribute(kFusionStrategyAttribute, kRowNormalizationStrategy);
    record({only->name()}, true, "already one row normalization", only->name());
    changed = true;
  }
  if (merges.empty()) return changed;

  // Trial merge on a copy: which groups fuse into a row normalization.
  std::unique_ptr<HloModule> scratch = module.Clone();
  HloComputation* copy = scratch->FindComputation(computation.name());
  if (copy == nullptr) return changed;
  absl::flat_hash_map<std::string, HloInstruction*> by_name;
  copy->ForEachInstruction([&](HloInstruction* hlo) { by_name[hlo->name()] = hlo; });
  std::vector<FusionGroup> trials;
  for (const std::vector<HloInstruction*>& group : merges) {
    std::vector<HloInstruction*> members;
    for (const HloInstruction* m : group) {
      auto it = by_name.find(m->name());
      if (it == by_name.end()) return changed;  // The copy differs: leave everything.
      members.push_back(it->second);
    }
    trials.push_back(MakeGroup(std::move(members)));
  }
  absl::StatusOr<BuildResult> trial = BuildFusions(*copy, trials);
  if (!trial.ok()) {
    for (const std::vector<HloInstruction*>& group : merges) {
      record(Names(group), false, absl::StrCat("trial merge failed: ", trial.status().message()),
             "");
    }
    return changed;
  }
  std::vector<FusionGroup> accepted;
  for (size_t g = 0; g < merges.size(); ++g) {
    absl::StatusOr<RowNormalizationPlan> plan =
        AnalyzeRowNormalization(*trial->fusions[g]->fused_computation(), limits_);
    if (!plan.ok()) {
      record(Names(merges[g]), false, plan.status().message(), "");
      continue;
    }
    accepted.push_back(MakeGroup(merges[g]));
  }
  if (accepted.empty()) return changed;
  std::vector<std::vector<std::string>> accepted_names;
  for (const FusionGroup& group : accepted) accepted_names.push_back(Names(group.members));
  HLOC_ASSIGN_OR_RETURN(BuildResult built, BuildFusions(computation, accepted));
  for (size_t g = 0; g < built.fusions.size(); ++g) {
    built.fusions[g]->SetFrontendAttribute(kFusionStrategyAttribute, kRowNormalizationStrategy);
    record(accepted_names[g], true,
           absl::StrCat("one kernel, a block or warp per row, for ", accepted_names[g].size(),
                        " instructions"),
           built.fusions[g]->name());
  }
  HLOC_RETURN_IF_ERROR(module.RemoveComputations(built.dead_computations));
  return true;
}

}  // namespace gpu
}  // namespace hloc
