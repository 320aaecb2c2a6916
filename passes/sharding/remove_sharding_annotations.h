// RemoveShardingAnnotations: on a module that runs on ONE device, the
// custom calls that only say how values are laid out over devices are
// identities; this pass replaces them by their operand so that every backend
// (interpreter, host, GPU) runs the module. What JAX writes (jax.jit with
// with_sharding_constraint or out_shardings, compiled for one device):
//
//   c = f32[8,6] custom-call(d), custom_call_target="Sharding", sharding={replicated}
//   r = f32[8,6] custom-call(m), custom_call_target="xla.sdy.FuncResultSharding",
//       custom_call_has_side_effect=true
//
// Removed: "Sharding", "xla.sdy.FuncResultSharding", and "SPMDFullToShardShape"
// / "SPMDShardToFullShape" (on one device the shard is the whole array),
// each only with one operand of the result's shape and no control
// dependencies (a result layout other than the operand's becomes a copy); an "xla.sdy.ShardingGroup" nobody uses. The sharding=
// attributes on other instructions stay (they mean nothing on one device).
//
// Modules for several devices are left alone: there the annotations are the
// SPMD partitioner's input (passes/sharding/per_device_module.h).
#ifndef HLOC_PASSES_SHARDING_REMOVE_SHARDING_ANNOTATIONS_H_
#define HLOC_PASSES_SHARDING_REMOVE_SHARDING_ANNOTATIONS_H_

#include "hlo/module.h"
#include "passes/pass.h"

namespace hloc {

class RemoveShardingAnnotations : public HloPass {
 public:
  absl::string_view name() const override { return "remove-sharding-annotations"; }
  // False when the module names more than one device or has none.
  absl::StatusOr<bool> Run(HloModule& module) override;
};

// Whether `hlo` is one of the identity annotations the pass removes.
bool IsOneDeviceShardingAnnotation(const HloInstruction& hlo);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_REMOVE_SHARDING_ANNOTATIONS_H_
