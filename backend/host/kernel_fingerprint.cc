// Kernel cache keys and cost estimates: the LLVM-free half of the kernel
// compiler (see kernel_compiler.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "backend/host/kernel_compiler.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace host {
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
        instruction->set_called_computation(
            static_cast<int64_t>(i), Clone(*instruction->called_computations()[i]));
      }
    }
    return raw;
  }
  const std::vector<std::unique_ptr<HloComputation>>& clones() const { return clones_; }

 private:
  absl::flat_hash_map<const HloComputation*, HloComputation*> mapping_;
  std::vector<std::unique_ptr<HloComputation>> clones_;
};

int64_t ElementCount(const Shape& shape) {
  if (!shape.IsArray()) return 1;
  int64_t n = 1;
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

int64_t OpWeight(const HloInstruction& hlo) {
  switch (hlo.opcode()) {
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kSin: case HloOpcode::kCos: case HloOpcode::kTan:
    case HloOpcode::kTanh: case HloOpcode::kErf: case HloOpcode::kCbrt: case HloOpcode::kPower:
    case HloOpcode::kAtan2:
      return 20;
    case HloOpcode::kDivide: case HloOpcode::kRemainder: case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
      return 4;
    default:
      return 1;
  }
}

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

double EstimateCost(const HloComputation& computation) {
  double total = 0;
  for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
    double per_element = OpWeight(*hlo);
    switch (hlo->opcode()) {
      case HloOpcode::kReduce:
      case HloOpcode::kDot:
      case HloOpcode::kConvolution: {
        // Inner loop trip count: operand elements per result element (for
        // dot/convolution, of the larger operand).
        double inner = 1;
        for (const HloInstruction* operand : hlo->operands()) {
          inner = std::max(inner, static_cast<double>(ElementCount(operand->shape())) /
                                      std::max<int64_t>(1, ElementCount(hlo->shape())));
        }
        per_element = 2 * inner + 2;
        break;
      }
      case HloOpcode::kReduceWindow: {
        double inner = 1;
        for (const auto& d : hlo->attrs().window.dimensions()) inner *= d.size();
        per_element = 2 * inner + 2;
        break;
      }
      default:
        break;
    }
    const Shape& shape = hlo->shape().IsTuple() && hlo->shape().tuple_shapes_size() > 0
                             ? hlo->shape().tuple_shapes(0)
                             : hlo->shape();
    total += per_element * static_cast<double>(ElementCount(shape));
  }
  return total;
}

}  // namespace host
}  // namespace hloc
