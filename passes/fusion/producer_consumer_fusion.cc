// Producer-consumer fusion (see producer_consumer_fusion.h for the idea).
#include "passes/fusion/producer_consumer_fusion.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "passes/fusion/fusion_driver.h"

namespace hloc {
namespace {

// One group a node belongs to; `reuse`: the group reads the node's elements
// several times (directly or through members downstream of it); `copies`:
// how many times the kernel's code computes the node (once per distinct
// index it is read at, see FusionBudgets::max_code_copies).
struct Home {
  int group;
  bool reuse;
  int64_t copies = 1;
};

struct Group {
  int root;
  std::vector<std::pair<int, bool>> members;  // (node, duplicated), join order
  GroupSummary summary;
  std::vector<int> inputs;  // sorted external operands, free leaves left out
};

// The groups of a producer's users, seen from the producer.
struct Candidate {
  int group;
  bool reuse = false;
  // Code copies of the producer in this group: the most of its readers at
  // their own index (elementwise: those share one computation), plus the
  // copies of every reader that reads it at another index.
  int64_t same_index_copies = 0;
  int64_t other_index_copies = 0;
  int64_t copies() const { return same_index_copies + other_index_copies; }
  absl::InlinedVector<std::pair<int, OperandUse>, 2> users;  // (user, how it reads)
};

class ProducerConsumerPlanner {
 public:
  ProducerConsumerPlanner(const FusionGraph& graph, FusionLedger* ledger,
                          absl::string_view pass_name)
      : graph_(graph),
        rules_(graph.rules()),
        ledger_(ledger != nullptr && ledger->records_edges() ? ledger : nullptr),
        pass_name_(pass_name),
        homes_(graph.size()) {}

  std::vector<FusionGroup> Plan();

 private:
  void Visit(int p);
  FusionDecision CanJoin(int p, const Candidate& candidate) const;
  int64_t InputsAfterJoin(const Group& group, int p) const;
  void Join(int p, const Candidate& candidate, bool duplicated);
  void StartGroup(int p);
  void Log(int p, int consumer, const FusionDecision& decision) const;
  void LogWhy(int p, absl::string_view rule, std::string reason) const;

  const FusionGraph& graph_;
  const FusionRules& rules_;
  FusionLedger* ledger_;
  absl::string_view pass_name_;
  std::vector<absl::InlinedVector<Home, 1>> homes_;
  std::vector<Group> groups_;
};

void ProducerConsumerPlanner::Log(int p, int consumer, const FusionDecision& decision) const {
  if (ledger_ == nullptr) return;
  ledger_->AddEdge(pass_name_, graph_.computation().name(), "edge", graph_.node(p)->name(),
                   graph_.node(consumer)->name(), decision.ok(), decision.rule(),
                   decision.reason());
}

void ProducerConsumerPlanner::LogWhy(int p, absl::string_view rule, std::string reason) const {
  if (ledger_ == nullptr) return;
  LedgerEntry entry;
  entry.pass = std::string(pass_name_);
  entry.computation = graph_.computation().name();
  entry.event = "producer";
  entry.subjects = {graph_.node(p)->name()};
  entry.accepted = false;
  entry.rule = std::string(rule);
  entry.reason = std::move(reason);
  ledger_->Add(std::move(entry));
}

int64_t ProducerConsumerPlanner::InputsAfterJoin(const Group& group, int p) const {
  int64_t count = static_cast<int64_t>(group.inputs.size());
  if (std::binary_search(group.inputs.begin(), group.inputs.end(), p)) --count;
  for (int o : graph_.operands(p)) {
    if (graph_.traits(o).free_leaf) continue;
    if (!std::binary_search(group.inputs.begin(), group.inputs.end(), o)) ++count;
  }
  return count;
}

FusionDecision ProducerConsumerPlanner::CanJoin(int p, const Candidate& candidate) const {
  const NodeTraits& traits = graph_.traits(p);
  const HloInstruction& producer = *graph_.node(p);
  std::string allowed_rule;
  for (const auto& [u, use] : candidate.users) {
    FusionDecision edge =
        rules_.CheckEdge(producer, traits, *graph_.node(u), graph_.traits(u), use);
    if (!edge.ok()) return edge;
    if (allowed_rule.empty()) allowed_rule = edge.rule();
  }
  const Group& group = groups_[candidate.group];
  GroupSummary merged = group.summary;
  merged.Add(traits);
  merged.operands = InputsAfterJoin(group, p);
  FusionDecision budget = rules_.CheckGroup(merged);
  if (!budget.ok()) return budget;
  const int64_t copies = candidate.copies();
  if (!traits.free_leaf && copies > rules_.budgets().max_code_copies) {
    return FusionDecision::Refuse(
        fusion_rule::kBudgetCodeCopies,
        absl::StrCat("the kernel of ", graph_.node(group.root)->name(), " would compute ",
                     producer.name(), " ", copies, " times (read at that many indices) > ",
                     rules_.budgets().max_code_copies));
  }
  if (traits.expensive && candidate.reuse) {
    return FusionDecision::Refuse(
        fusion_rule::kExpensiveIntoReuse,
        absl::StrCat(producer.name(), " is expensive and the kernel of ",
                     graph_.node(group.root)->name(), " reads each of its elements many times"));
  }
  return FusionDecision::Allow(allowed_rule);
}

void ProducerConsumerPlanner::Join(int p, const Candidate& candidate, bool duplicated) {
  Group& group = groups_[candidate.group];
  group.members.emplace_back(p, duplicated);
  group.summary.Add(graph_.traits(p));
  auto it = std::lower_bound(group.inputs.begin(), group.inputs.end(), p);
  if (it != group.inputs.end() && *it == p) group.inputs.erase(it);
  for (int o : graph_.operands(p)) {
    if (graph_.traits(o).free_leaf) continue;
    auto at = std::lower_bound(group.inputs.begin(), group.inputs.end(), o);
    if (at == group.inputs.end() || *at != o) group.inputs.insert(at, o);
  }
  homes_[p].push_back(Home{candidate.group, candidate.reuse, std::max<int64_t>(1, candidate.copies())});
}

void ProducerConsumerPlanner::StartGroup(int p) {
  Group group;
  group.root = p;
  group.members.emplace_back(p, false);
  group.summary.Add(graph_.traits(p));
  for (int o : graph_.operands(p)) {
    if (!graph_.traits(o).free_leaf) group.inputs.push_back(o);
  }
  std::sort(group.inputs.begin(), group.inputs.end());
  homes_[p].push_back(Home{static_cast<int>(groups_.size()), false});
  groups_.push_back(std::move(group));
}

void ProducerConsumerPlanner::Visit(int p) {
  const NodeTraits& traits = graph_.traits(p);
  if (!traits.fusible) return;
  // Where the users are: groups (with the users in each), or outside any.
  absl::InlinedVector<Candidate, 2> candidates;
  int outside_user = -1;
  for (int u : graph_.users(p)) {
    if (homes_[u].empty()) {
      if (outside_user < 0) outside_user = u;
      if (ledger_ != nullptr) {
        Log(p, u, rules_.CheckEdge(*graph_.node(p), traits, *graph_.node(u), graph_.traits(u),
                                   graph_.Use(p, u)));
      }
      continue;
    }
    const OperandUse use = graph_.Use(p, u);
    for (const Home& home : homes_[u]) {
      Candidate* candidate = nullptr;
      for (Candidate& c : candidates) {
        if (c.group == home.group) candidate = &c;
      }
      if (candidate == nullptr) {
        candidates.push_back(Candidate{home.group});
        candidate = &candidates.back();
      }
      candidate->users.emplace_back(u, use);
      candidate->reuse = candidate->reuse || use.reuses || home.reuse;
      if (use.kind == OpPatternKind::kElementwise) {
        candidate->same_index_copies = std::max(candidate->same_index_copies, home.copies);
      } else {
        candidate->other_index_copies += home.copies;
      }
    }
  }
  const bool outside = outside_user >= 0 || graph_.is_root(p);

  absl::InlinedVector<bool, 2> accepted(candidates.size(), false);
  bool all_accepted = true;
  for (size_t k = 0; k < candidates.size(); ++k) {
    FusionDecision decision = CanJoin(p, candidates[k]);
    accepted[k] = decision.ok();
    all_accepted = all_accepted && decision.ok();
    Log(p, candidates[k].users.front().first, decision);
  }

  if (traits.free_leaf) {
    // Copies cost nothing: every kernel that accepts one gets one, however
    // many there are; the original stays only for the others.
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (accepted[k]) Join(p, candidates[k], /*duplicated=*/true);
    }
    if (outside || !all_accepted) StartGroup(p);
    return;
  }
  if (!outside && all_accepted && candidates.size() == 1) {
    Join(p, candidates[0], /*duplicated=*/false);
    return;
  }
  const int64_t max_copies = rules_.budgets().max_duplicated_users;
  if (!outside && all_accepted && candidates.size() > 1) {
    if (traits.duplicable && static_cast<int64_t>(candidates.size()) <= max_copies) {
      for (const Candidate& candidate : candidates) Join(p, candidate, /*duplicated=*/true);
      return;
    }
    if (!traits.duplicable) {
      LogWhy(p, fusion_rule::kNotDuplicable,
             absl::StrCat("read by ", candidates.size(), " kernels and too costly to copy"));
    } else {
      LogWhy(p, fusion_rule::kBudgetDuplication,
             absl::StrCat("read by ", candidates.size(), " kernels > ", max_copies));
    }
  } else if (outside && !candidates.empty()) {
    LogWhy(p, fusion_rule::kOutsideUse,
           graph_.is_root(p) ? std::string("it is the computation's root")
                             : absl::StrCat("read by ", graph_.node(outside_user)->name(),
                                            ", which does not fuse"));
  } else if (!all_accepted && candidates.size() > 1) {
    LogWhy(p, fusion_rule::kPartialDuplication,
           "not every kernel reading it accepts it, so it stays a kernel of its own");
  }
  StartGroup(p);
}

std::vector<FusionGroup> ProducerConsumerPlanner::Plan() {
  for (int p = graph_.size() - 1; p >= 0; --p) Visit(p);
  std::vector<FusionGroup> result;
  // Groups were started root-last-first; build them in post order of roots.
  for (auto it = groups_.rbegin(); it != groups_.rend(); ++it) {
    const Group& group = *it;
    if (group.members.size() < 2) continue;
    FusionGroup fusion_group;
    FillGroupMembers(graph_, group.members, &fusion_group);
    fusion_group.kind = FusionRules::KindForGroup(
        group.summary, FusionRules::IsRealTranspose(*graph_.node(group.root)));
    result.push_back(std::move(fusion_group));
  }
  return result;
}

}  // namespace

std::vector<FusionGroup> PlanProducerConsumerFusion(const FusionGraph& graph,
                                                    FusionLedger* ledger,
                                                    absl::string_view pass_name) {
  return ProducerConsumerPlanner(graph, ledger, pass_name).Plan();
}

absl::StatusOr<bool> ProducerConsumerFusion::Run(HloModule& module) {
  return RunFusionPlanner(module, rules_, kName, ledger_,
                          [](const FusionGraph& graph, FusionLedger* ledger) {
                            return PlanProducerConsumerFusion(graph, ledger, kName);
                          });
}

}  // namespace hloc
