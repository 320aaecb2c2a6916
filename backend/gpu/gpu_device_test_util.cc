// Helpers for the tests that run on a GPU (see gpu_device_test_util.h).
#include "backend/gpu/gpu_device_test_util.h"

#include <memory>

#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_pipeline.h"

namespace hloc {
namespace gpu {

cuda::CudaDevice* TestDevice() {
  static cuda::CudaDevice* device = [] {
    absl::StatusOr<std::unique_ptr<cuda::CudaDevice>> d = cuda::CudaDevice::Open(0);
    return d.ok() ? d->release() : nullptr;
  }();
  return device;
}

absl::StatusOr<Literal> RunOnTestDevice(const HloModule& module,
                                        absl::Span<const Literal> arguments, bool use_graph,
                                        std::string* plan) {
  cuda::CudaDevice* device = TestDevice();
  if (device == nullptr) return absl::FailedPreconditionError("no usable GPU");
  std::unique_ptr<HloModule> optimized = module.Clone();
  absl::StatusOr<bool> changed = OptimizeForGpu(*optimized);
  if (!changed.ok()) return changed.status();
  GpuProgramOptions options;
  options.codegen.target = TargetForDevice(device->info());
  absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*optimized, options);
  if (!program.ok()) return program.status();
  if (plan != nullptr) *plan = (*program)->PlanToString();
  cuda::GpuLoadOptions load;
  load.use_cuda_graph = use_graph;
  absl::Status loaded = (*program)->Load(device, load);
  if (!loaded.ok()) return loaded;
  absl::StatusOr<Literal> first = (*program)->Execute(arguments);
  if (!first.ok()) return first.status();
  return (*program)->Execute(arguments);
}

Tolerance GpuTolerance(PrimitiveType type) {
  if (type == xla::BF16) return Tolerance{3e-2, 3e-2};
  if (type == xla::F16) return Tolerance{5e-3, 5e-3};
  return Tolerance{2e-4, 2e-5};
}

}  // namespace gpu
}  // namespace hloc
