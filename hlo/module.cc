#include "hlo/module.h"

#include <algorithm>
#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

// Splits "add.12" into ("add", 12); names without a numeric suffix give -1.
std::pair<absl::string_view, int64_t> SplitNumericSuffix(absl::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot + 1 == name.size()) return {name, -1};
  int64_t number;
  absl::string_view digits = name.substr(dot + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); }) ||
      digits.size() > 15 || !absl::SimpleAtoi(digits, &number)) {
    return {name, -1};
  }
  return {name.substr(0, dot), number};
}

// Records `base` in `taken` when it is free (returns true); otherwise
// records and stores in *renamed the next free "stem.N".
bool Uniquify(absl::string_view base, absl::flat_hash_set<std::string>* taken,
              absl::flat_hash_map<std::string, int64_t>* next_suffix, std::string* renamed) {
  if (base.empty()) base = "instruction";
  // Fused computations make millions of names: hash once, copy only when new.
  bool inserted = false;
  taken->lazy_emplace(base, [&](const auto& construct) {
    inserted = true;
    construct(base.data(), base.size());
  });
  if (inserted) return true;
  auto [stem, unused] = SplitNumericSuffix(base);
  auto it = next_suffix->find(stem);
  if (it == next_suffix->end()) it = next_suffix->emplace(std::string(stem), 0).first;
  int64_t& next = it->second;
  std::string candidate;
  do {
    candidate = absl::StrCat(stem, ".", ++next);
  } while (!taken->insert(candidate).second);
  *renamed = std::move(candidate);
  return false;
}

std::string Uniquify(absl::string_view base, absl::flat_hash_set<std::string>* taken,
                     absl::flat_hash_map<std::string, int64_t>* next_suffix) {
  if (base.empty()) base = "instruction";
  std::string renamed;
  return Uniquify(base, taken, next_suffix, &renamed) ? std::string(base) : renamed;
}

}  // namespace

std::string HloModule::UniquifyName(absl::string_view base) {
  return Uniquify(base, &names_, &next_suffix_);
}

std::string HloModule::UniquifyComputationName(absl::string_view base) {
  return Uniquify(base, &computation_names_, &next_suffix_);
}

void HloModule::RegisterInstruction(HloInstruction* instruction) {
  const absl::string_view base = instruction->name().empty()
                                     ? HloOpcodeName(instruction->opcode())
                                     : absl::string_view(instruction->name());
  std::string renamed;
  if (!Uniquify(base, &names_, &next_suffix_, &renamed) || instruction->name().empty()) {
    instruction->set_name(renamed.empty() ? std::string(base) : std::move(renamed));
  }
  instruction->set_unique_id(next_instruction_id_++);
}

void HloModule::UnregisterInstruction(HloInstruction* instruction) {
  names_.erase(instruction->name());
}

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  HloComputation* raw = computation.get();
  raw->parent_ = this;
  raw->set_name(UniquifyComputationName(raw->name()));
  raw->set_unique_id(next_computation_id_++);
  names_.reserve(names_.size() + raw->instruction_count());  // One rehash at most.
  raw->ForEachInstruction([&](HloInstruction* i) { RegisterInstruction(i); });
  computations_.push_back(std::move(computation));
  return raw;
}

HloComputation* HloModule::AddEntryComputation(std::unique_ptr<HloComputation> computation) {
  entry_ = AddComputation(std::move(computation));
  return entry_;
}

absl::Status HloModule::RemoveComputation(HloComputation* computation) {
  if (computation == entry_) {
    return absl::FailedPreconditionError("cannot remove the entry computation");
  }
  if (!CallersOf(computation).empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove computation ", computation->name(), ": it is still called"));
  }
  for (auto it = computations_.begin(); it != computations_.end(); ++it) {
    if (it->get() != computation) continue;
    computation->ForEachInstruction([&](HloInstruction* i) { UnregisterInstruction(i); });
    computation_names_.erase(computation->name());
    computations_.erase(it);
    return absl::OkStatus();
  }
  return absl::NotFoundError(
      absl::StrCat("computation ", computation->name(), " is not in module ", name_));
}

absl::Status HloModule::RemoveComputations(absl::Span<HloComputation* const> computations) {
  absl::flat_hash_set<const HloComputation*> doomed(computations.begin(), computations.end());
  if (doomed.empty()) return absl::OkStatus();
  if (doomed.contains(entry_)) {
    return absl::FailedPreconditionError("cannot remove the entry computation");
  }
  size_t found = 0;
  for (const auto& c : computations_) {
    if (doomed.contains(c.get())) {
      ++found;
      continue;
    }
    const HloInstruction* caller = nullptr;
    const HloComputation* callee_found = nullptr;
    c->ForEachInstruction([&](HloInstruction* i) {
      for (HloComputation* callee : i->called_computations()) {
        if (caller == nullptr && doomed.contains(callee)) {
          caller = i;
          callee_found = callee;
        }
      }
    });
    if (caller != nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("cannot remove computation ",
                                                        callee_found->name(), ": ",
                                                        caller->name(), " still calls it"));
    }
  }
  if (found != doomed.size()) {
    return absl::NotFoundError(absl::StrCat("a computation to remove is not in module ", name_));
  }
  for (const auto& c : computations_) {
    if (!doomed.contains(c.get())) continue;
    c->ForEachInstruction([&](HloInstruction* i) { UnregisterInstruction(i); });
    computation_names_.erase(c->name());
  }
  computations_.erase(std::remove_if(computations_.begin(), computations_.end(),
                                     [&](const std::unique_ptr<HloComputation>& c) {
                                       return doomed.contains(c.get());
                                     }),
                      computations_.end());
  return absl::OkStatus();
}

std::vector<HloComputation*> HloModule::computations() const {
  std::vector<HloComputation*> result;
  result.reserve(computations_.size());
  for (const auto& c : computations_) result.push_back(c.get());
  return result;
}

HloComputation* HloModule::FindComputation(absl::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_map<const HloComputation*, uint8_t> state;
  // Iterative DFS over the call graph, callees first.
  std::vector<std::pair<HloComputation*, std::vector<HloComputation*>>> stack;
  auto callees_of = [](HloComputation* c) {
    std::vector<HloComputation*> callees;
    c->ForEachInstruction([&](HloInstruction* i) {
      for (HloComputation* callee : i->called_computations()) callees.push_back(callee);
    });
    std::reverse(callees.begin(), callees.end());
    return callees;
  };
  for (const auto& root : computations_) {
    if (state[root.get()] != 0) continue;
    state[root.get()] = 1;
    stack.push_back({root.get(), callees_of(root.get())});
    while (!stack.empty()) {
      auto& [node, pending] = stack.back();
      if (!pending.empty()) {
        HloComputation* next = pending.back();
        pending.pop_back();
        if (state[next] == 0) {
          state[next] = 1;
          stack.push_back({next, callees_of(next)});
        }
        continue;
      }
      state[node] = 2;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<HloInstruction*> HloModule::CallersOf(const HloComputation* computation) const {
  std::vector<HloInstruction*> callers;
  for (const auto& c : computations_) {
    c->ForEachInstruction([&](HloInstruction* i) {
      for (HloComputation* callee : i->called_computations()) {
        if (callee == computation) {
          callers.push_back(i);
          break;
        }
      }
    });
  }
  return callers;
}

int64_t HloModule::instruction_count() const {
  int64_t count = 0;
  for (const auto& c : computations_) count += c->instruction_count();
  return count;
}

std::unique_ptr<HloModule> HloModule::Clone(const std::string& suffix) const {
  auto clone = std::make_unique<HloModule>(suffix.empty() ? name_ : absl::StrCat(name_, "-", suffix));
  clone->config_ = config_;
  absl::flat_hash_map<const HloComputation*, HloComputation*> mapping;
  for (HloComputation* computation : MakeComputationPostOrder()) {
    std::unique_ptr<HloComputation> copy = computation->Clone(/*suffix=*/"");
    copy->set_name(computation->name());
    copy->ForEachInstruction([&](HloInstruction* i) {
      for (size_t k = 0; k < i->called_computations().size(); ++k) {
        i->set_called_computation(k, mapping[i->called_computations()[k]]);
      }
      if (i->opcode() == HloOpcode::kFusion && i->fused_computation()) {
        i->fused_computation()->set_fusion_instruction(i);
      }
    });
    HloComputation* added = clone->AddComputation(std::move(copy));
    mapping[computation] = added;
    if (computation == entry_) clone->entry_ = added;
  }
  return clone;
}

}  // namespace hloc
