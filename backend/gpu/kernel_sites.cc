// Kernel sites of a module (see kernel_sites.h).
#include "backend/gpu/kernel_sites.h"

#include "hlo/outline.h"
#include "hlo/shape.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace gpu {
namespace {

bool IsBufferOnly(const HloInstruction& hlo) {
  switch (hlo.opcode()) {
    case HloOpcode::kBitcast:
      // Unless its layouts move elements: then a kernel reads through them.
      return hlo.operand_count() != 1 || !hlo.shape().IsArray() ||
             !hlo.operand(0)->shape().IsArray() ||
             BitcastIsRowMajorReshape(hlo.operand(0)->shape(), hlo.shape());
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kReshape:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kAddDependency:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kAfterAll:
    case HloOpcode::kCopy: return true;
    default: return false;
  }
}

class SiteCollector {
 public:
  void Walk(const HloComputation& computation) {
    if (!visited_.insert(&computation).second) return;
    for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
      switch (hlo->opcode()) {
        case HloOpcode::kFusion:
          sites_.kernels.push_back({hlo, hlo->fused_computation(), nullptr, true});
          continue;
        case HloOpcode::kWhile:
        case HloOpcode::kConditional:
        case HloOpcode::kCall:
          // Composite calls may run in a library; their bodies are what
          // runs when the library is missing, so they get kernels too.
          for (const HloComputation* called : hlo->called_computations()) Walk(*called);
          continue;
        default: break;
      }
      if (IsBufferOnly(*hlo)) continue;
      if (!NeedsKernel(*hlo)) {
        sites_.library_ops.push_back(hlo);
        continue;
      }
      std::shared_ptr<HloComputation> wrapper = hloc::WrapInstruction(*hlo);
      const HloComputation* raw = wrapper.get();
      sites_.kernels.push_back({hlo, raw, std::move(wrapper), false});
    }
  }
  KernelSites Take() { return std::move(sites_); }

 private:
  absl::flat_hash_set<const HloComputation*> visited_;
  KernelSites sites_;
};

}  // namespace

bool NeedsKernel(const HloInstruction& hlo) {
  const HloOpcode op = hlo.opcode();
  if (IsBufferOnly(hlo) || IsAsyncOrCommunication(op)) return false;
  switch (op) {
    case HloOpcode::kCustomCall:
      // XLA's TopK call has a sort kernel; other targets run on the host.
      return hlo.attrs().custom_call_target == "TopK";
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
    case HloOpcode::kFusion: return false;
    default: return true;
  }
}

KernelSites CollectKernelSites(const HloModule& module) {
  SiteCollector collector;
  if (module.entry() != nullptr) collector.Walk(*module.entry());
  return collector.Take();
}

KernelSites SplitFusion(const HloInstruction& fusion) {
  SiteCollector collector;
  collector.Walk(*fusion.fused_computation());
  return collector.Take();
}

}  // namespace gpu
}  // namespace hloc
