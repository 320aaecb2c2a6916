// The library outlining pass: match, check, order, outline (see
// outline_library_calls.h for the algorithm and its rules).
#include "passes/outlining/outline_library_calls.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/outline.h"
#include "hlo/status_macros.h"
#include "passes/outlining/composite_attributes.h"

namespace hloc {
namespace {

// One accepted match waiting for its turn.
struct Candidate {
  size_t pattern_index = 0;
  int priority = 0;
  int64_t position = 0;  // of the root in the computation's post order
  HloInstruction* root = nullptr;
  std::vector<HloInstruction*> members;
  std::vector<std::pair<const HloInstruction*, int64_t>> member_ids;  // for liveness
  std::vector<std::string> member_names;
  std::vector<std::string> heavy_names;  // the dots and convolutions among the members
  int64_t dots = 0, convolutions = 0;
  absl::flat_hash_set<const HloInstruction*> cheap;
  int64_t size = 0;                   // members that are not cheap
  std::vector<std::string> subjects;  // root first, then the other members
  std::string attributes;
  // The library's operands in order, as (member, operand index): members
  // stay valid while the candidate is alive, outside values may be replaced
  // by earlier calls.
  std::vector<std::pair<HloInstruction*, int64_t>> operand_slots;
};

// Constants, iotas, and broadcasts/reshapes of values outside the match or
// of other cheap members: copying them into a call costs nothing real.
bool IsCheap(const HloInstruction* i, const absl::flat_hash_set<const HloInstruction*>& members,
             int depth = 0) {
  switch (i->opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
      return true;
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape: {
      if (depth > 8) return false;
      const HloInstruction* operand = i->operand(0);
      return !members.contains(operand) || IsCheap(operand, members, depth + 1);
    }
    default:
      return false;
  }
}

std::vector<std::string> SubjectNames(const HloInstruction* root,
                                      const std::vector<HloInstruction*>& members) {
  std::vector<std::string> names = {root->name()};
  for (const HloInstruction* m : members) {
    if (m != root) names.push_back(m->name());
  }
  return names;
}

bool IsDotOrConvolution(const HloInstruction& i) {
  return i.opcode() == HloOpcode::kDot || i.opcode() == HloOpcode::kConvolution;
}

// Computations whose instructions run as ordinary code: the entry, loop
// bodies and conditions, conditional branches and plain call bodies. Fused
// computations, library bodies and reducers are left alone.
bool ShouldScan(const HloModule& module, const HloComputation* computation) {
  if (computation->IsFusionComputation()) return false;
  if (computation == module.entry()) return true;
  std::vector<HloInstruction*> callers = module.CallersOf(computation);
  if (callers.empty()) return false;
  for (const HloInstruction* caller : callers) {
    switch (caller->opcode()) {
      case HloOpcode::kWhile:
      case HloOpcode::kConditional:
        break;
      case HloOpcode::kCall:
        if (caller->is_composite()) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

}  // namespace

const std::string* LibraryCallName(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kCall || !instruction.is_composite()) return nullptr;
  return instruction.FindFrontendAttribute(kCompositeName);
}

OutlineLibraryCalls::OutlineLibraryCalls(std::vector<LibraryPattern> patterns,
                                         LibraryOutliningOptions options, FusionLedger* ledger)
    : patterns_(std::move(patterns)), options_(std::move(options)), ledger_(ledger) {}

void OutlineLibraryCalls::Record(const HloComputation& computation, absl::string_view event,
                                 std::vector<std::string> subjects, bool accepted,
                                 absl::string_view pattern, std::string reason,
                                 std::string result) {
  if (ledger_ == nullptr) return;
  if (!accepted && !ledger_->records_edges() && event != "not-outlined") return;
  LedgerEntry entry;
  entry.pass = std::string(kPassName);
  entry.computation = computation.name();
  entry.event = std::string(event);
  entry.subjects = std::move(subjects);
  entry.accepted = accepted;
  entry.rule = std::string(pattern);
  entry.reason = std::move(reason);
  entry.result = std::move(result);
  ledger_->Add(std::move(entry));
}

absl::StatusOr<bool> OutlineLibraryCalls::Run(HloModule& module) {
  stats_ = LibraryOutliningStats();
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (!ShouldScan(module, computation)) continue;
    HLOC_ASSIGN_OR_RETURN(bool computation_changed, RunOnComputation(computation));
    changed |= computation_changed;
  }
  return changed;
}

absl::StatusOr<bool> OutlineLibraryCalls::RunOnComputation(HloComputation* computation) {
  HloModule* module = computation->parent();
  std::vector<HloInstruction*> post_order = computation->MakeInstructionPostOrder();
  for (const HloInstruction* i : post_order) {
    stats_.dots += i->opcode() == HloOpcode::kDot;
    stats_.convolutions += i->opcode() == HloOpcode::kConvolution;
  }
  // Why each dot/convolution was not taken, by name, for the summary.
  absl::flat_hash_map<std::string, std::vector<std::string>> reasons;
  auto note_reason = [&](const std::vector<std::string>& names, absl::string_view pattern,
                         absl::string_view reason) {
    for (const std::string& name : names) {
      reasons[name].push_back(absl::StrCat(pattern, ": ", reason));
    }
  };
  auto dots_and_convolutions = [](const std::vector<HloInstruction*>& members) {
    std::vector<std::string> names;
    for (const HloInstruction* m : members) {
      if (IsDotOrConvolution(*m)) names.push_back(m->name());
    }
    return names;
  };

  // 1. Match and check.
  std::vector<Candidate> candidates;
  for (int64_t position = 0; position < static_cast<int64_t>(post_order.size()); ++position) {
    HloInstruction* instruction = post_order[position];
    for (size_t p = 0; p < patterns_.size(); ++p) {
      const LibraryPattern& library = patterns_[p];
      if (options_.disabled_patterns.contains(library.name)) continue;
      pattern::Match match;
      if (!pattern::Matches(instruction, library.pattern, &match)) continue;
      std::vector<std::string> subjects = SubjectNames(instruction, match.members());
      Refusal refusal = library.check ? library.check(match, options_.check) : std::nullopt;
      std::vector<const HloInstruction*> operands;
      if (!refusal.has_value() && library.operands) operands = library.operands(match);
      if (refusal.has_value()) {
        Record(*computation, "check", subjects, false, library.name, *refusal);
        note_reason(dots_and_convolutions(match.members()), library.name, *refusal);
        continue;
      }
      Candidate c;
      c.pattern_index = p;
      c.priority = library.priority;
      c.position = position;
      c.root = instruction;
      c.members = match.members();
      absl::flat_hash_set<const HloInstruction*> member_set(c.members.begin(), c.members.end());
      for (const HloInstruction* m : c.members) {
        c.member_ids.emplace_back(m, m->unique_id());
        c.member_names.push_back(m->name());
        c.dots += m->opcode() == HloOpcode::kDot;
        c.convolutions += m->opcode() == HloOpcode::kConvolution;
        if (m != instruction && IsCheap(m, member_set)) c.cheap.insert(m);
      }
      c.size = static_cast<int64_t>(c.members.size() - c.cheap.size());
      c.heavy_names = dots_and_convolutions(c.members);
      c.subjects = std::move(subjects);
      c.attributes = library.attributes ? library.attributes(match) : "{}";
      // Each value's first slot not taken yet (dot(x, x): slots 0 and 1).
      for (const HloInstruction* value : operands) {
        bool found = false;
        for (HloInstruction* m : c.members) {
          for (int64_t k = 0; k < m->operand_count() && !found; ++k) {
            std::pair<HloInstruction*, int64_t> slot(m, k);
            if (m->operand(k) == value && !member_set.contains(value) &&
                std::find(c.operand_slots.begin(), c.operand_slots.end(), slot) ==
                    c.operand_slots.end()) {
              c.operand_slots.push_back(slot);
              found = true;
            }
          }
          if (found) break;
        }
      }
      candidates.push_back(std::move(c));
    }
  }

  // 2. Order.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (a.priority != b.priority) return a.priority > b.priority;
                     if (a.size != b.size) return a.size > b.size;
                     if (a.pattern_index != b.pattern_index)
                       return a.pattern_index < b.pattern_index;
                     return a.position < b.position;
                   });

  // 3. Outline in that order.
  bool changed = false;
  // Non-cheap members of outlined matches -> the call that took them.
  absl::flat_hash_map<const HloInstruction*, std::string> claimed;
  // Live instructions (pointer -> unique id); pointers of removed
  // instructions are never dereferenced.
  absl::flat_hash_map<const HloInstruction*, int64_t> live;
  auto refresh_live = [&] {
    live.clear();
    computation->ForEachInstruction([&](HloInstruction* i) { live[i] = i->unique_id(); });
  };
  refresh_live();
  for (Candidate& c : candidates) {
    const LibraryPattern& library = patterns_[c.pattern_index];
    std::string overlap;
    for (size_t k = 0; k < c.member_ids.size() && overlap.empty(); ++k) {
      const auto& [m, id] = c.member_ids[k];
      auto it = claimed.find(m);
      if (it != claimed.end() && !c.cheap.contains(m)) {
        overlap = absl::StrCat("overlaps ", it->second, ", which took ", c.member_names[k]);
        break;
      }
      auto alive = live.find(m);
      if (alive == live.end() || alive->second != id) {
        overlap = absl::StrCat(c.member_names[k], " was taken by an earlier call");
      }
    }
    if (!overlap.empty()) {
      Record(*computation, "overlap", c.subjects, false, library.name, overlap);
      note_reason(c.heavy_names, library.name, overlap);
      continue;
    }
    absl::flat_hash_set<HloInstruction*> member_set(c.members.begin(), c.members.end());
    std::vector<std::string> used_outside;
    for (HloInstruction* m : c.members) {
      if (m == c.root || c.cheap.contains(m)) continue;
      bool outside = m == computation->root();
      for (HloInstruction* user : m->users()) outside |= !member_set.contains(user);
      if (outside) used_outside.push_back(m->name());
    }
    if (!used_outside.empty() && library.outside_uses == OutsideUsePolicy::kRefuse) {
      std::string reason = absl::StrCat("intermediate ", absl::StrJoin(used_outside, ", "),
                                        " is used outside the match");
      Record(*computation, "outside-use", c.subjects, false, library.name, reason);
      note_reason(c.heavy_names, library.name, reason);
      continue;
    }
    OutlineOptions outline;
    outline.opcode = HloOpcode::kCall;
    outline.computation_name = library.name;
    outline.allow_multiple_outputs = library.outside_uses == OutsideUsePolicy::kExtraOutputs;
    outline.duplicable = c.cheap;
    outline.leading_operands.assign(c.operand_slots.begin(), c.operand_slots.end());
    xla::OpMetadata metadata = c.root->metadata();
    absl::StatusOr<OutlineResult> result = OutlineInstructions(computation, c.members, outline);
    if (!result.ok()) {
      std::string reason(result.status().message());
      absl::string_view event = absl::StrContains(reason, "cycle") ? "cycle" : "outline";
      Record(*computation, event, c.subjects, false, library.name, reason);
      note_reason(c.heavy_names, library.name, reason);
      continue;
    }
    HloInstruction* call = result->caller;
    absl::string_view short_name = library.name;
    if (absl::StartsWith(short_name, "hloc.")) short_name.remove_prefix(5);
    call->set_name(module->UniquifyName(short_name));
    *call->mutable_metadata() = metadata;
    call->set_is_composite(true);
    call->SetFrontendAttribute(kCompositeName, library.name);
    call->SetFrontendAttribute(kCompositeAttributes, c.attributes);
    call->SetFrontendAttribute(kCompositeVersion, absl::StrCat(library.version));
    std::string made = call->name();
    if (result->outputs.size() > 1) {
      absl::StrAppend(&made, " (", result->outputs.size(), " outputs)");
    }
    Record(*computation, "outlined", c.subjects, true, library.name,
           absl::StrCat(library.numerics.ToString(), "; ", c.attributes), made);
    // Members are gone now: only their pointers are used, as keys.
    for (const HloInstruction* m : c.members) {
      if (!c.cheap.contains(m)) claimed[m] = call->name();
    }
    stats_.dots_outlined += c.dots;
    stats_.convolutions_outlined += c.convolutions;
    ++stats_.outlined[library.name];
    changed = true;
    refresh_live();
  }

  // Summary for the dots and convolutions left in place.
  for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
    if (!IsDotOrConvolution(*i)) continue;
    auto it = reasons.find(i->name());
    std::string why =
        it == reasons.end() ? "no library pattern matches it" : absl::StrJoin(it->second, "; ");
    Record(*computation, "not-outlined", {i->name()}, false,
           it == reasons.end() ? "no-pattern" : "refused", why);
    stats_.not_outlined.emplace_back(i->name(), why);
  }
  return changed;
}

}  // namespace hloc
