// Which reductions a reduction kernel is built around. A kernel whose every
// output is a reduce ("hero") or an elementwise epilogue over heroes read at
// the output's own index can run one loop nest over the reduced dimensions
// feeding all heroes' accumulators, the epilogue reading the accumulators
// where it would read the reduce. Shared by the host and GPU emitters.
#ifndef HLOC_BACKEND_LLVM_REDUCTION_HEROES_H_
#define HLOC_BACKEND_LLVM_REDUCTION_HEROES_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/instruction.h"

namespace hloc {
namespace codegen {

// The result dimensions of a (possibly variadic) reduce.
const std::vector<int64_t>& ReduceResultDims(const HloInstruction& reduce);

class ReductionHeroFinder {
 public:
  // Whether `hlo` depends on a reduce of the same computation.
  bool ContainsReduce(const HloInstruction* hlo);

  // True when `hlo`, evaluated at an output index of `dims`, reads reduces
  // only at that same index through elementwise ops; collects the reduces.
  bool Collect(const HloInstruction* hlo, const std::vector<int64_t>& dims);

  const std::vector<const HloInstruction*>& heroes() const { return heroes_; }

 private:
  absl::flat_hash_map<const HloInstruction*, bool> contains_;
  std::vector<const HloInstruction*> heroes_;
};

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_REDUCTION_HEROES_H_
