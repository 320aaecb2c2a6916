// Where a module needs GPU kernels, after the pass pipeline: every fusion,
// and every other op the kernel emitters may cover, wrapped as a one-op
// computation (the same split the host compiler makes). Ops that only
// regroup buffers (tuples, bitcasts, copies) need no kernel; sort, topk
// (and the "TopK" custom call) and scatter have kernels of their own; other
// custom calls, rng and friends go to libraries or host fallbacks. Control flow
// (while, conditional, call, composite library calls) is looked through, so
// nested computations contribute their kernels too. LLVM-free.
#ifndef HLOC_BACKEND_GPU_KERNEL_SITES_H_
#define HLOC_BACKEND_GPU_KERNEL_SITES_H_

#include <memory>
#include <string>
#include <vector>

#include "hlo/computation.h"
#include "hlo/module.h"

namespace hloc {
namespace gpu {

struct KernelSite {
  const HloInstruction* instruction;        // The fusion or the op.
  const HloComputation* computation;        // Its fused computation or wrapper.
  std::shared_ptr<HloComputation> wrapper;  // Owns the one-op wrapper.
  bool fused = false;
};

struct KernelSites {
  std::vector<KernelSite> kernels;
  // Ops handled outside generated kernels: "sort (%sort.3)", ...
  std::vector<const HloInstruction*> library_ops;
};

// Whether `hlo` runs in a generated kernel when no fusion covers it.
bool NeedsKernel(const HloInstruction& hlo);

KernelSites CollectKernelSites(const HloModule& module);

// The ops of a fused computation as one-op kernel sites, for a fusion no
// kernel covers (the runtime then runs it op by op).
KernelSites SplitFusion(const HloInstruction& fusion);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_KERNEL_SITES_H_
