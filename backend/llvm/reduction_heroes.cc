// Reduction heroes (see reduction_heroes.h).
#include "backend/llvm/reduction_heroes.h"

#include <algorithm>

namespace hloc {
namespace codegen {

const std::vector<int64_t>& ReduceResultDims(const HloInstruction& reduce) {
  return reduce.shape().IsTuple() ? reduce.shape().tuple_shapes(0).dimensions()
                                  : reduce.shape().dimensions();
}

bool ReductionHeroFinder::ContainsReduce(const HloInstruction* hlo) {
  auto it = contains_.find(hlo);
  if (it != contains_.end()) return it->second;
  bool found = hlo->opcode() == HloOpcode::kReduce;
  for (const HloInstruction* operand : hlo->operands()) {
    if (found) break;
    found = ContainsReduce(operand);
  }
  contains_[hlo] = found;
  return found;
}

bool ReductionHeroFinder::Collect(const HloInstruction* hlo, const std::vector<int64_t>& dims) {
  if (!ContainsReduce(hlo)) return true;
  if (hlo->opcode() == HloOpcode::kReduce) {
    if (ReduceResultDims(*hlo) != dims) return false;
    if (std::find(heroes_.begin(), heroes_.end(), hlo) == heroes_.end()) heroes_.push_back(hlo);
    return true;
  }
  if (hlo->opcode() == HloOpcode::kGetTupleElement &&
      hlo->operand(0)->opcode() == HloOpcode::kReduce) {
    return Collect(hlo->operand(0), dims);
  }
  if (!hlo->IsElementwise() || !hlo->shape().IsArray() ||
      hlo->shape().dimensions() != dims) {
    return false;
  }
  for (const HloInstruction* operand : hlo->operands()) {
    if (!operand->shape().IsArray() || operand->shape().dimensions() != dims) {
      if (ContainsReduce(operand)) return false;  // An implicit broadcast of a reduce.
      continue;
    }
    if (!Collect(operand, dims)) return false;
  }
  return true;
}

}  // namespace codegen
}  // namespace hloc
