// Dense post-order view of a computation, fusible computations, cycle guard.
#include "passes/fusion/fusion_graph.h"

#include <algorithm>

namespace hloc {

FusionGraph::FusionGraph(const HloComputation& computation, const FusionRules& rules)
    : computation_(&computation), rules_(&rules) {
  nodes_ = computation.MakeInstructionPostOrder();
  const int n = static_cast<int>(nodes_.size());
  index_.reserve(n);
  for (int i = 0; i < n; ++i) index_[nodes_[i]] = i;
  stamp_.assign(n, 0);

  // Distinct operands per node, then users by counting.
  operand_begin_.assign(n + 1, 0);
  std::vector<int> seen(n, -1);
  for (int i = 0; i < n; ++i) {
    operand_begin_[i] = static_cast<int>(operand_list_.size());
    for (const HloInstruction* operand : nodes_[i]->operands()) {
      auto it = index_.find(operand);
      if (it == index_.end() || seen[it->second] == i) continue;
      seen[it->second] = i;
      operand_list_.push_back(it->second);
    }
  }
  operand_begin_[n] = static_cast<int>(operand_list_.size());
  std::vector<int> user_count(n + 1, 0);
  for (int o : operand_list_) ++user_count[o];
  user_begin_.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) user_begin_[i + 1] = user_begin_[i] + user_count[i];
  user_list_.assign(operand_list_.size(), 0);
  std::vector<int> fill(user_begin_.begin(), user_begin_.end() - 1);
  for (int i = 0; i < n; ++i) {  // Ascending i: each user list comes out sorted.
    for (int k = operand_begin_[i]; k < operand_begin_[i + 1]; ++k) {
      user_list_[fill[operand_list_[k]]++] = i;
    }
  }

  traits_.reserve(n);
  for (int i = 0; i < n; ++i) traits_.push_back(rules.Describe(*nodes_[i]));
  root_ = IndexOf(computation.root());
}

int FusionGraph::IndexOf(const HloInstruction* instruction) const {
  auto it = index_.find(instruction);
  return it == index_.end() ? -1 : it->second;
}

OperandUse FusionGraph::Use(int producer, int consumer) const {
  const HloInstruction* c = nodes_[consumer];
  const HloInstruction* p = nodes_[producer];
  auto fused = fusion_uses_.end();
  if (c->opcode() == HloOpcode::kFusion) {
    fused = fusion_uses_.find(consumer);
    if (fused == fusion_uses_.end()) {
      fused = fusion_uses_.emplace(consumer, rules_->OperandUsesOfFusion(*c)).first;
    }
  }
  OperandUse result{OpPatternKind::kElementwise, false};
  for (int64_t slot = 0; slot < c->operand_count(); ++slot) {
    if (c->operand(slot) != p) continue;
    OperandUse use;
    if (fused != fusion_uses_.end()) {
      use = slot < static_cast<int64_t>(fused->second.size()) ? fused->second[slot]
                                                              : OperandUse{};
    } else {
      use = OperandUse{FusionRules::IsOrderPreservingReshape(*c) ? OpPatternKind::kElementwise
                                                                 : traits_[consumer].kind,
                       rules_->ReusesOperand(*c, slot)};
    }
    if (static_cast<int>(use.kind) > static_cast<int>(result.kind)) result.kind = use.kind;
    result.reuses = result.reuses || use.reuses;
  }
  return result;
}

int FusionGraph::NextStamp() const {
  if (++current_stamp_ == INT32_MAX) {
    std::fill(stamp_.begin(), stamp_.end(), 0);
    current_stamp_ = 1;
  }
  return current_stamp_;
}

namespace {

bool IsControlFlowCall(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  return (opcode == HloOpcode::kCall && !instruction.is_composite()) ||
         opcode == HloOpcode::kWhile || opcode == HloOpcode::kConditional;
}

}  // namespace

std::vector<HloComputation*> FusibleComputations(const HloModule& module) {
  std::vector<HloComputation*> result;
  if (module.entry() == nullptr) return result;
  // Only control flow leads from the entry to other fusible computations;
  // without any, skip the sweep over every (fused) computation below.
  bool entry_calls = false;
  module.entry()->ForEachInstruction([&](HloInstruction* instruction) {
    entry_calls = entry_calls ||
                  (IsControlFlowCall(*instruction) && !instruction->called_computations().empty());
  });
  if (!entry_calls) return {module.entry()};

  // A computation is fusible when every instruction that calls it is a plain
  // call, a while or a conditional.
  absl::flat_hash_map<const HloComputation*, bool> callable_only;
  for (HloComputation* computation : module.computations()) {
    computation->ForEachInstruction([&](HloInstruction* instruction) {
      if (instruction->called_computations().empty()) return;
      const bool control_flow = IsControlFlowCall(*instruction);
      for (HloComputation* callee : instruction->called_computations()) {
        auto [it, inserted] = callable_only.emplace(callee, control_flow);
        if (!inserted) it->second = it->second && control_flow;
      }
    });
  }
  // Callees first, walking down from the entry through control flow only
  // (fused computations and reducers are never entered).
  absl::flat_hash_map<const HloComputation*, int> state;  // 1 open, 2 done
  std::vector<std::pair<HloComputation*, std::vector<HloComputation*>>> stack;
  auto callees_of = [&](HloComputation* computation) {
    std::vector<HloComputation*> callees;
    computation->ForEachInstruction([&](HloInstruction* instruction) {
      for (HloComputation* callee : instruction->called_computations()) {
        auto it = callable_only.find(callee);
        if (it != callable_only.end() && it->second && !callee->IsFusionComputation()) {
          callees.push_back(callee);
        }
      }
    });
    std::reverse(callees.begin(), callees.end());
    return callees;
  };
  state[module.entry()] = 1;
  stack.emplace_back(module.entry(), callees_of(module.entry()));
  while (!stack.empty()) {
    auto& [computation, pending] = stack.back();
    if (!pending.empty()) {
      HloComputation* next = pending.back();
      pending.pop_back();
      if (state[next] == 0) {
        state[next] = 1;
        stack.emplace_back(next, callees_of(next));
      }
      continue;
    }
    state[computation] = 2;
    result.push_back(computation);
    stack.pop_back();
  }
  return result;
}

std::vector<int> GroupsOnCycles(const FusionGraph& graph, absl::Span<const int> group_of,
                                int group_count) {
  const int n = graph.size();
  const int q = group_count + n;
  auto qid = [&](int i) { return group_of[i] >= 0 ? group_of[i] : group_count + i; };
  std::vector<std::pair<int, int>> edges;
  edges.reserve(n);
  for (int i = 0; i < n; ++i) {
    for (int o : graph.operands(i)) {
      int a = qid(o), b = qid(i);
      if (a != b) edges.emplace_back(a, b);
    }
  }
  // Kahn's algorithm from both ends: what neither end can peel off lies on a
  // cycle (or between two cycles).
  auto peel = [&](bool forward) {
    std::vector<int> degree(q, 0), begin(q + 1, 0), list(edges.size());
    for (const auto& [a, b] : edges) {
      ++degree[forward ? b : a];
      ++begin[(forward ? a : b) + 1];
    }
    for (int k = 0; k < q; ++k) begin[k + 1] += begin[k];
    std::vector<int> fill(begin.begin(), begin.end() - 1);
    for (const auto& [a, b] : edges) {
      if (forward) list[fill[a]++] = b;
      else list[fill[b]++] = a;
    }
    std::vector<int> queue;
    std::vector<bool> peeled(q, false);
    for (int k = 0; k < q; ++k) {
      if (degree[k] == 0) queue.push_back(k);
    }
    for (size_t head = 0; head < queue.size(); ++head) {
      int k = queue[head];
      peeled[k] = true;
      for (int e = begin[k]; e < begin[k + 1]; ++e) {
        if (--degree[list[e]] == 0) queue.push_back(list[e]);
      }
    }
    return peeled;
  };
  std::vector<bool> forward = peel(true);
  std::vector<bool> backward = peel(false);
  std::vector<int> cyclic;
  for (int g = 0; g < group_count; ++g) {
    if (!forward[g] && !backward[g]) cyclic.push_back(g);
  }
  return cyclic;
}

}  // namespace hloc
