// Cost estimates: the LLVM-free half of the kernel compiler (see
// kernel_compiler.h). Cache keys live in backend/llvm/kernel_fingerprint.h.
#include <algorithm>

#include "backend/host/kernel_compiler.h"

namespace hloc {
namespace host {
namespace {

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

double EstimateCost(const HloComputation& computation) {
  double total = 0;
  for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
    double per_element = OpWeight(*hlo);
    // A variadic reduce's (or any tuple's) elements are those of one leaf.
    const Shape& shape = hlo->shape().IsTuple() && hlo->shape().tuple_shapes_size() > 0
                             ? hlo->shape().tuple_shapes(0)
                             : hlo->shape();
    switch (hlo->opcode()) {
      case HloOpcode::kReduce:
      case HloOpcode::kDot:
      case HloOpcode::kConvolution: {
        // Inner loop trip count: operand elements per result element (for
        // dot/convolution, of the larger operand).
        double inner = 1;
        for (const HloInstruction* operand : hlo->operands()) {
          inner = std::max(inner, static_cast<double>(ElementCount(operand->shape())) /
                                      std::max<int64_t>(1, ElementCount(shape)));
        }
        per_element = 2 * inner + 2;
        break;
      }
      case HloOpcode::kReduceWindow: {
        double inner = 1;
        for (const auto& d : hlo->attrs().window->dimensions()) inner *= d.size();
        per_element = 2 * inner + 2;
        break;
      }
      default:
        break;
    }
    total += per_element * static_cast<double>(ElementCount(shape));
  }
  return total;
}

}  // namespace host
}  // namespace hloc
