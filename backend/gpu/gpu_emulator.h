// A host emulator for GPU kernels, for tests that check the emitters with no
// GPU: the kernel's LLVM IR is JIT-compiled for the host with the PTX
// special registers, barriers and warp shuffles replaced by calls into a
// runtime that runs each thread of a block as an OS thread, and libdevice
// calls mapped to libm. It checks the emitters' index math, launch
// dimensions, shuffles and shared-memory tiling; the NVPTX backend and
// ptxas are covered by other tests.
#ifndef HLOC_BACKEND_GPU_GPU_EMULATOR_H_
#define HLOC_BACKEND_GPU_GPU_EMULATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backend/gpu/kernel_codegen.h"
#include "hlo/computation.h"

namespace llvm {
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace hloc {
namespace gpu {

class Emulator {
 public:
  // A kernel's host entry: `entry(buffers)`, the buffers in the kernel's
  // parameter order.
  using Entry = void (*)(void* const*);

  Emulator();
  ~Emulator();

  // Why the JIT could not be set up; "" when it was.
  const std::string& error() const { return error_; }

  // The host entry for a kernel's IR (`second`: its second entry,
  // GpuKernel::second_name). Identical computations share a kernel name:
  // loaded once.
  absl::StatusOr<Entry> Load(const GpuKernel& kernel, bool second = false);

 private:
  absl::Status Compile(const GpuKernel& kernel);

  std::map<std::string, Entry> loaded_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::string error_;
};

// Runs `computation`'s kernel (compiled for `target`) in the emulator and in
// the interpreter on the same random arguments (from `seed`); a failure
// message, or "" when they agree within the default tolerances (looser for
// dot, convolution and atomic scatters). `ran` says whether the comparison
// happened (not for computations with no kernel, or that the interpreter or
// the argument generator cannot handle).
std::string CheckKernel(Emulator& emulator, const HloComputation& computation, uint64_t seed,
                        bool* ran, const GpuTarget& target = GpuTarget());

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_EMULATOR_H_
