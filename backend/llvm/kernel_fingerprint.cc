// Kernel cache keys (see kernel_fingerprint.h).
#include "backend/llvm/kernel_fingerprint.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace codegen {
namespace {

// Clones `computation` and everything it calls with positional names, so
// two computations that differ only in names print the same.
class CanonicalCloner {
 public:
  HloComputation* Clone(const HloComputation& computation) {
    auto found = mapping_.find(&computation);
    if (found != mapping_.end()) return found->second;
    std::unique_ptr<HloComputation> clone = computation.Clone("");
    clone->set_name(absl::StrCat("c", clones_.size()));
    HloComputation* raw = clone.get();
    mapping_[&computation] = raw;
    clones_.push_back(std::move(clone));
    int64_t next = 0;
    for (HloInstruction* instruction : raw->MakeInstructionPostOrder()) {
      instruction->set_name(instruction->opcode() == HloOpcode::kParameter
                                ? absl::StrCat("p", instruction->parameter_number())
                                : absl::StrCat("i", next++));
      for (size_t i = 0; i < instruction->called_computations().size(); ++i) {
        instruction->set_called_computation(static_cast<int64_t>(i),
                                            Clone(*instruction->called_computations()[i]));
      }
    }
    return raw;
  }
  const std::vector<std::unique_ptr<HloComputation>>& clones() const { return clones_; }

 private:
  absl::flat_hash_map<const HloComputation*, HloComputation*> mapping_;
  std::vector<std::unique_ptr<HloComputation>> clones_;
};

}  // namespace

std::string KernelFingerprint(const HloComputation& computation) {
  CanonicalCloner cloner;
  cloner.Clone(computation);
  PrintOptions options;
  options.print_metadata = false;
  std::string text;
  for (const auto& clone : cloner.clones()) {
    std::string printed = PrintComputation(*clone, options);
    if (printed.empty()) return "";  // No printer: no reliable key.
    absl::StrAppend(&text, printed, "\n");
  }
  return text;
}

}  // namespace codegen
}  // namespace hloc
