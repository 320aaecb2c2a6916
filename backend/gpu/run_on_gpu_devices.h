// The CUDA backend on N GPUs of one process: a module that runs on
// replica_count x num_partitions = N devices is compiled once per device
// (one kernel cache, so each kernel is compiled once), device d's program
// is loaded on GPU d with its rank in an NCCL clique of GPUs 0..N-1
// (runtime/cuda/nccl_clique.h), and each run executes the N programs on N
// threads, one rank per GPU: the program's DeviceThreads
// (hlo/evaluator/multi_device.h), started at compile time and kept, so
// thread d runs GPU d every time (device 0 on the caller) and keeps its
// context current. Runs from several threads take turns. N = 1 takes the
// same path.
//
// Loading makes the clique's communicators (all ranks of a group in one
// non-blocking ncclCommInitRankConfig group call, from the loading thread),
// so no rank waits for another before all are loaded. Every NCCL wait has
// RunOnGpuOptions::collective_timeout (the watchdog, nccl_clique.h): a run
// whose collective does not finish in time fails with DeadlineExceeded
// naming the op, and the program's communicators are aborted.
// With N > 1 the programs are not captured into CUDA graphs (the ranks'
// captures would run on separate threads, which this does not try yet).
#ifndef HLOC_BACKEND_GPU_RUN_ON_GPU_DEVICES_H_
#define HLOC_BACKEND_GPU_RUN_ON_GPU_DEVICES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/run_on_gpu.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "runtime/cuda/nccl_clique.h"

namespace hloc {
namespace gpu {

class GpuDevicesProgram {
 public:
  // Opens GPUs 0..N-1 (FailedPrecondition naming the counts when there are
  // fewer; "NCCL not found: ..." without NCCL when the module has
  // collectives), compiles and loads.
  static absl::StatusOr<std::unique_ptr<GpuDevicesProgram>> Compile(
      const HloModule& module, const RunOnGpuOptions& options = {});
  ~GpuDevicesProgram();
  // arguments[d] and result[d] are device d's (d = replica * num_partitions
  // + partition). The first device error is returned, naming the device.
  absl::StatusOr<std::vector<Literal>> Execute(absl::Span<const std::vector<Literal>> arguments);
  int64_t device_count() const { return static_cast<int64_t>(programs_.size()); }
  GpuProgram& program(int64_t device) { return *programs_[device]; }
  // The threads the devices run on.
  const DeviceThreads& threads() const { return *threads_; }

 private:
  GpuDevicesProgram() = default;
  std::vector<std::unique_ptr<cuda::CudaDevice>> devices_;
  std::shared_ptr<cuda::NcclClique> clique_;
  std::vector<std::unique_ptr<GpuProgram>> programs_;  // Freed before the devices.
  std::unique_ptr<DeviceThreads> threads_;
};

// How many CUDA devices this machine has (0 without a driver).
int GpuDeviceCount();

// Compiles, loads and runs once (see GpuDevicesProgram).
absl::StatusOr<std::vector<Literal>> RunOnGpuDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments,
    const RunOnGpuOptions& options = {});

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_RUN_ON_GPU_DEVICES_H_
