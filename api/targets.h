// The API's targets: how a verified module is optimized for a backend and
// turned into an ExecutableImpl. One function pair per backend; client.cc
// picks among them and owns everything around (loading, verifying, caching).
#ifndef HLOC_API_TARGETS_H_
#define HLOC_API_TARGETS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/api_internal.h"
#include "api/hloc.h"
#include "backend/host/kernel_compiler.h"
#include "hlo/custom_call_targets.h"
#include "hlo/module.h"
#include "passes/fusion/fusion_ledger.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace cuda {
class CudaDevice;
}  // namespace cuda
namespace api {

// Pipeline names CompileOptions::pipeline takes.
bool IsKnownPipeline(const std::string& name);

// Runs `options.pipeline` for `backend` on `module` (in place), recording
// decisions in `ledger`. The interpreter runs modules as given: its
// "default" is "none".
absl::Status OptimizeForBackend(Backend backend, const CompileOptions& options, HloModule& module,
                                FusionLedger* ledger);

// What the host target shares across a client's executables.
struct HostTargetContext {
  std::shared_ptr<runtime::ThreadPool> pool;
  std::shared_ptr<host::KernelCompiler> kernel_compiler;
};

// Custom-call targets a compile sees: the client's registry's snapshot
// taken when the compile started (its fingerprint is in the cache key).
using CustomCalls = std::shared_ptr<const CustomCallTargets>;

absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForHostTarget(
    const HloModule& optimized, const CompileOptions& options, const HostTargetContext& context,
    CustomCalls custom_calls);
// Fails now for a custom call whose target the interpreter lacks.
absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForInterpreterTarget(
    const HloModule& module, int num_threads, CustomCalls custom_calls);
// `buffers_device`: the client's hold on the device, which device results
// are allocated and copied through (its own stream, so copies of results
// never land on the stream a run is capturing into a CUDA graph). Calls to
// `custom_calls` run on the host between the GPU's steps (CustomCallThunk).
// `collective_timeout`: the NCCL watchdog's (GpuLoadOptions).
absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForCudaTarget(
    const HloModule& optimized, const CompileOptions& options,
    ClientDevice buffers_device, CustomCalls custom_calls,
    absl::Duration collective_timeout);

// CompileOptions::devices != 1, or a shard_map module: `module` (verified;
// rewritten here to the per-device module, then optimized) compiled for its
// devices on the host or the interpreter, taking and returning global arrays
// (devices.cc). Describes its own entry (global shapes). Errors are marked
// compile errors except a device count the module does not fit
// (InvalidArgument) and the machine's (FailedPrecondition, ResourceExhausted).
absl::StatusOr<std::unique_ptr<ExecutableImpl>> CompileForDevices(
    HloModule& module, Backend backend, const CompileOptions& options,
    const HostTargetContext* host, int num_threads, CustomCalls custom_calls,
    FusionLedger* ledger, absl::Duration collective_timeout);

// ClientOptions::collective_timeout_seconds (resolved by Client::Create) as
// a duration.
absl::Duration CollectiveTimeout(const ClientOptions& options);

// parameters/results/result_shape of `impl` from the module's entry.
void DescribeEntry(const HloModule& module, ExecutableImpl* impl);

}  // namespace api
}  // namespace hloc

#endif  // HLOC_API_TARGETS_H_
