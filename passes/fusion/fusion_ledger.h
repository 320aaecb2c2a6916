// The decision ledger: an append-only record of what the fusion passes (and
// the library outliner) considered and why they did or did not do it. Each
// entry names the pass, the computation, the kind of event, the instructions
// involved, the verdict and the rule behind it:
//
//   producer-consumer-fusion main: edge exp.3 -> broadcast.4 refused
//       (expensive-into-reuse) exponential would be recomputed for every read
//   producer-consumer-fusion main: group fusion.2 kLoop [add.1 exp.3 ...] committed
//
// Entries are kept in the order the passes make their decisions; the passes
// decide in post order of instruction ids, never in pointer order, so the same
// input gives the same ledger byte for byte. It prints as readable text or as
// JSON (an array of objects with the fields of LedgerEntry).
#ifndef HLOC_PASSES_FUSION_FUSION_LEDGER_H_
#define HLOC_PASSES_FUSION_FUSION_LEDGER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace hloc {

struct LedgerEntry {
  std::string pass;         // "producer-consumer-fusion", "outline-library-calls", ...
  std::string computation;  // where it happened
  std::string event;        // "edge", "group", "duplicate", "merge", "cycle-guard", ...
  std::vector<std::string> subjects;  // instruction names: producer, consumer / members
  bool accepted = false;
  std::string rule;    // the rule that decided (see fusion_rules.h: fusion_rule::*)
  std::string reason;  // the same in words
  std::string result;  // what was made (a fusion's name), when something was
};

class FusionLedger {
 public:
  enum class Detail {
    kGroups,  // only what was made (and groups broken up)
    kAll,     // also every edge and candidate considered
  };
  explicit FusionLedger(Detail detail = Detail::kAll) : detail_(detail) {}

  bool records_edges() const { return detail_ == Detail::kAll; }
  void Add(LedgerEntry entry) { entries_.push_back(std::move(entry)); }
  // Shorthand for the common two-instruction edge event.
  void AddEdge(absl::string_view pass, absl::string_view computation, absl::string_view event,
               absl::string_view producer, absl::string_view consumer, bool accepted,
               absl::string_view rule, absl::string_view reason);

  const std::vector<LedgerEntry>& entries() const { return entries_; }
  void Clear() { entries_.clear(); }
  // Entries of one pass / accepted or refused by one rule (for tests and tools).
  std::vector<const LedgerEntry*> Find(absl::string_view pass, absl::string_view rule) const;

  // One line per entry (see the top of this file).
  std::string ToText() const;
  // [{"pass":...,"computation":...,"event":...,"subjects":[...],
  //   "accepted":true,"rule":...,"reason":...,"result":...}, ...]
  std::string ToJson() const;

 private:
  Detail detail_;
  std::vector<LedgerEntry> entries_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_LEDGER_H_
