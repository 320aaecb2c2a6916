// Union-find of would-be kernels with merge checks (see fusion_groups.h).
#include "passes/fusion/fusion_groups.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "passes/fusion/fusion_driver.h"

namespace hloc {
namespace {

GroupSummary SummaryOfNode(const FusionGraph& graph, int v) {
  GroupSummary summary;
  summary.Add(graph.traits(v));
  return summary;
}

}  // namespace

GroupForest::GroupForest(const FusionGraph& graph)
    : graph_(graph),
      parent_(graph.size()),
      members_(graph.size()),
      inputs_(graph.size()),
      min_index_(graph.size()),
      max_index_(graph.size()),
      leaves_(graph.size()),
      mark_(graph.size(), 0),
      carries_(graph.size(), 0) {
  summary_.reserve(graph.size());
  for (int v = 0; v < graph.size(); ++v) {
    parent_[v] = v;
    min_index_[v] = max_index_[v] = v;
    summary_.push_back(SummaryOfNode(graph, v));
  }
}

int GroupForest::Find(int node) const {
  int root = node;
  while (parent_[root] != root) root = parent_[root];
  while (parent_[node] != root) {
    int next = parent_[node];
    parent_[node] = root;
    node = next;
  }
  return root;
}

std::vector<int> GroupForest::Members(int root) const {
  if (members_[root].empty()) return {root};
  return members_[root];
}

int64_t GroupForest::MemberCount(int root) const {
  return members_[root].empty() ? 1 : static_cast<int64_t>(members_[root].size());
}

const std::vector<int>& GroupForest::Leaves(int root) const { return leaves_[root]; }

FusionDecision GroupForest::CheckMerge(absl::Span<const int> roots, const MergeOptions& options,
                                       Merge* merge) const {
  const FusionRules& rules = graph_.rules();
  const int epoch = ++mark_epoch_;
  merge->roots.assign(roots.begin(), roots.end());
  merge->members.clear();
  merge->inputs.clear();
  merge->summary = GroupSummary();
  for (int r : roots) {
    merge->summary.Merge(summary_[r]);
    if (members_[r].empty()) {
      mark_[r] = epoch;
      merge->members.push_back(r);
    } else {
      for (int m : members_[r]) {
        mark_[m] = epoch;
        merge->members.push_back(m);
      }
    }
  }
  merge->summary.reductions_share_space = options.reductions_share_space;
  // Cheap budget first: instructions need no walk.
  FusionDecision early = rules.CheckGroup(merge->summary);
  if (!early.ok()) return early;

  for (int r : roots) {
    if (members_[r].empty()) {
      for (int o : graph_.operands(r)) {
        if (mark_[o] != epoch && !graph_.traits(o).free_leaf) merge->inputs.push_back(o);
      }
    } else {
      for (int o : inputs_[r]) {
        if (mark_[o] != epoch) merge->inputs.push_back(o);
      }
    }
  }
  std::sort(merge->inputs.begin(), merge->inputs.end());
  merge->inputs.erase(std::unique(merge->inputs.begin(), merge->inputs.end()),
                      merge->inputs.end());
  int64_t outputs = 0;
  for (int m : merge->members) {
    bool out = graph_.is_root(m);
    for (int u : graph_.users(m)) out = out || mark_[u] != epoch;
    if (out) ++outputs;
  }
  merge->summary.operands = static_cast<int64_t>(merge->inputs.size());
  merge->summary.outputs = std::max<int64_t>(outputs, 1);
  FusionDecision budget = rules.CheckGroup(merge->summary);
  if (!budget.ok()) return budget;

  if (options.check_edges) {
    for (int m : merge->members) {
      for (int u : graph_.users(m)) {
        if (mark_[u] != epoch || Find(u) == Find(m)) continue;
        FusionDecision edge = rules.CheckEdge(*graph_.node(m), graph_.traits(m), *graph_.node(u),
                                              graph_.traits(u), graph_.Use(m, u));
        if (!edge.ok()) return edge;
      }
    }
  }
  if (merge->summary.expensive_ops > 0) {
    // Does an expensive value reach, inside the merged group, a read that
    // takes each element many times?
    std::vector<int> order = merge->members;
    std::sort(order.begin(), order.end());
    FusionDecision verdict = FusionDecision::Allow(fusion_rule::kCommitted);
    for (int m : order) {
      bool carries = graph_.traits(m).expensive;
      for (int o : graph_.operands(m)) {
        if (mark_[o] != epoch || !carries_[o]) continue;
        carries = true;
        if (verdict.ok() && graph_.Use(o, m).reuses) {
          verdict = FusionDecision::Refuse(
              fusion_rule::kExpensiveIntoReuse,
              absl::StrCat(graph_.node(m)->name(), " would recompute the expensive value of ",
                           graph_.node(o)->name(), " for each read"));
        }
      }
      carries_[m] = carries ? 1 : 0;
    }
    for (int m : order) carries_[m] = 0;
    if (!verdict.ok()) return verdict;
  }
  return FusionDecision::Allow(fusion_rule::kCommitted);
}

int GroupForest::Union(const Merge& merge) {
  int root = merge.roots.front();
  for (int r : merge.roots) {
    if (MemberCount(r) > MemberCount(root)) root = r;
  }
  int lo = min_index_[root], hi = max_index_[root];
  for (int r : merge.roots) {
    lo = std::min(lo, min_index_[r]);
    hi = std::max(hi, max_index_[r]);
    if (r == root) continue;
    parent_[r] = root;
    std::vector<int>().swap(members_[r]);
    std::vector<int>().swap(inputs_[r]);
  }
  members_[root] = merge.members;
  inputs_[root] = merge.inputs;
  summary_[root] = merge.summary;
  min_index_[root] = lo;
  max_index_[root] = hi;
  return root;
}

void GroupForest::Dissolve(int root) {
  std::vector<int> members = Members(root);
  for (int m : members) {
    parent_[m] = m;
    std::vector<int>().swap(members_[m]);
    std::vector<int>().swap(inputs_[m]);
    summary_[m] = SummaryOfNode(graph_, m);
    min_index_[m] = max_index_[m] = m;
    leaves_[m].clear();
  }
}

bool GroupForest::WouldCreateCycle(absl::Span<const int> roots, bool* gave_up) const {
  *gave_up = false;
  const int epoch = ++mark_epoch_;
  int hi = -1;
  std::vector<int> members;
  for (int r : roots) {
    hi = std::max(hi, max_index_[r]);
    for (int m : Members(r)) {
      mark_[m] = epoch;
      members.push_back(m);
    }
  }
  std::vector<int> sources;
  for (int m : members) {
    for (int u : graph_.users(m)) {
      if (mark_[u] != epoch && u < hi) sources.push_back(u);
    }
  }
  FusionGraph::Reach reach = graph_.SearchForward(
      sources, hi, [&](int n) { return mark_[n] == epoch; }, [](int) { return true; },
      graph_.rules().budgets().max_search_nodes);
  if (reach == FusionGraph::Reach::kUnknown) *gave_up = true;
  return reach != FusionGraph::Reach::kNo;
}

void GroupForest::AbsorbFreeLeaves() {
  const FusionRules& rules = graph_.rules();
  for (int f = 0; f < graph_.size(); ++f) {
    if (!graph_.traits(f).free_leaf) continue;
    for (int u : graph_.users(f)) {
      if (!graph_.traits(u).fusible || graph_.traits(u).free_leaf) continue;
      const int r = Find(u);
      std::vector<int>& leaves = leaves_[r];
      if (!leaves.empty() && leaves.back() == f) continue;
      if (!rules.CheckEdge(*graph_.node(f), graph_.traits(f), *graph_.node(u), graph_.traits(u),
                           graph_.Use(f, u))
               .ok()) {
        continue;
      }
      const int64_t size = graph_.traits(f).size;
      if (summary_[r].instructions + size > rules.budgets().max_instructions) continue;
      leaves.push_back(f);
      summary_[r].instructions += size;
    }
  }
}

int GroupForest::BreakCycles(FusionLedger* ledger, absl::string_view pass_name) {
  int dissolved = 0;
  while (true) {
    std::vector<int> group_of(graph_.size(), -1);
    std::vector<int> root_of_id;
    for (int v = 0; v < graph_.size(); ++v) {
      if (Find(v) != v || MemberCount(v) < 2) continue;
      const int id = static_cast<int>(root_of_id.size());
      root_of_id.push_back(v);
      for (int m : members_[v]) group_of[m] = id;
    }
    std::vector<int> cyclic =
        GroupsOnCycles(graph_, group_of, static_cast<int>(root_of_id.size()));
    if (cyclic.empty()) return dissolved;
    for (int id : cyclic) {
      const int root = root_of_id[id];
      if (ledger != nullptr) {
        LedgerEntry entry;
        entry.pass = std::string(pass_name);
        entry.computation = graph_.computation().name();
        entry.event = "cycle-guard";
        for (int m : Members(root)) entry.subjects.push_back(graph_.node(m)->name());
        entry.accepted = false;
        entry.rule = std::string(fusion_rule::kCycle);
        entry.reason = "building this group would close a cycle through other groups";
        ledger->Add(std::move(entry));
      }
      Dissolve(root);
      ++dissolved;
    }
  }
}

std::vector<FusionGroup> GroupForest::ToFusionGroups() const {
  std::vector<std::pair<int, int>> order;  // (last member, root)
  for (int v = 0; v < graph_.size(); ++v) {
    if (Find(v) != v) continue;
    if (MemberCount(v) + static_cast<int64_t>(leaves_[v].size()) < 2) continue;
    order.emplace_back(max_index_[v], v);
  }
  std::sort(order.begin(), order.end());
  std::vector<FusionGroup> groups;
  groups.reserve(order.size());
  for (const auto& [last, root] : order) {
    std::vector<std::pair<int, bool>> members;
    for (int m : Members(root)) members.emplace_back(m, false);
    for (int f : leaves_[root]) members.emplace_back(f, true);
    FusionGroup group;
    FillGroupMembers(graph_, std::move(members), &group);
    group.kind = FusionRules::KindForGroup(summary_[root],
                                           FusionRules::IsRealTranspose(*graph_.node(last)));
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace hloc
