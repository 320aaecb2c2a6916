// Matrix multiplies through cuBLASLt, loaded with dlopen. A GemmRunner is
// made once per gemm call of a program: it translates the row-major
// GemmConfig into cuBLASLt's column-major descriptors (computing
// out^T = rhs^T * lhs^T, so no data moves), asks
// cublasLtMatmulAlgoGetHeuristic for candidate algorithms within the
// workspace, and — when autotuning — times each candidate once on the
// program's own buffers and keeps the fastest. The choice is cached on disk
// under a key of device name + configuration, so later compilations pick the
// same algorithm without timing.
#ifndef HLOC_RUNTIME_CUDA_CUBLASLT_GEMM_H_
#define HLOC_RUNTIME_CUDA_CUBLASLT_GEMM_H_

#include <cublasLt.h>
#include <cuda.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/dynamic_library.h"
#include "runtime/cuda/library_call_configs.h"

namespace hloc {
namespace cuda {

#define HLOC_CUBLASLT_FUNCTIONS(X)        \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtGetVersion)                   \
  X(cublasLtGetStatusName)                \
  X(cublasLtGetStatusString)              \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmulAlgoCheck)              \
  X(cublasLtMatmul)

// The cuBLASLt library: its functions, resolved once per process.
class CublasLtLibrary {
 public:
  // Fails with IsLibraryMissing(status) when libcublasLt cannot be opened.
  static absl::StatusOr<const CublasLtLibrary*> Get();
  absl::Status Check(cublasStatus_t status, absl::string_view call) const;
  size_t version() const { return cublasLtGetVersion(); }

#define HLOC_CUBLASLT_DECLARE(fn) decltype(&::fn) fn = nullptr;
  HLOC_CUBLASLT_FUNCTIONS(HLOC_CUBLASLT_DECLARE)
#undef HLOC_CUBLASLT_DECLARE

 private:
  CublasLtLibrary() = default;
  std::shared_ptr<DynamicLibrary> library_;
};

// A cuBLASLt handle (one per device; shared by the runners of a program).
class CublasLtHandle {
 public:
  static absl::StatusOr<std::shared_ptr<CublasLtHandle>> Create();
  ~CublasLtHandle();
  cublasLtHandle_t get() const { return handle_; }
  const CublasLtLibrary& library() const { return *lib_; }

 private:
  CublasLtHandle(const CublasLtLibrary* lib, cublasLtHandle_t handle)
      : lib_(lib), handle_(handle) {}
  const CublasLtLibrary* lib_;
  cublasLtHandle_t handle_;
};

// Device pointers of one gemm call.
struct GemmBuffers {
  CUdeviceptr lhs = 0, rhs = 0, bias = 0, output = 0, workspace = 0;
  int64_t workspace_bytes = 0;
};

struct GemmTuning {
  bool autotune = true;
  AutotuneCache* cache = nullptr;  // May be null.
  int max_candidates = 8;
};

// How a row-major GemmConfig reads in cuBLASLt's column-major terms
// (D = op(A) op(B), every matrix packed: leading dimension = rows). Pure
// arithmetic, tested on the host against a column-major reference.
struct CublasLtMatrix {
  int64_t rows = 0, cols = 0;  // As stored (before op).
  int64_t batch_stride = 0;    // Elements between batches.
};
struct CublasLtProblem {
  bool transpose_a = false, transpose_b = false;
  CublasLtMatrix a, b, d;       // a is our rhs, b our lhs, d our output.
  int64_t m = 0, n = 0, k = 0;  // cuBLASLt's: rows of D, columns of D, contraction.
};
CublasLtProblem ToCublasLt(const GemmConfig& config);

// The autotuning key of `config` on a device named `device_name`.
std::string GemmAutotuneKey(absl::string_view device_name, const GemmConfig& config,
                            int64_t workspace_bytes);
// An algorithm as cache text (hex of the opaque struct) and back.
std::string EncodeGemmAlgorithm(const cublasLtMatmulAlgo_t& algorithm);
absl::StatusOr<cublasLtMatmulAlgo_t> DecodeGemmAlgorithm(absl::string_view text);

class GemmRunner {
 public:
  // Builds descriptors and picks the algorithm (cache, else heuristics and,
  // with tuning.autotune, timing on `buffers`, which it overwrites).
  static absl::StatusOr<std::unique_ptr<GemmRunner>> Create(const GemmConfig& config,
                                                            std::shared_ptr<CublasLtHandle> handle,
                                                            CudaDevice* device,
                                                            const GemmBuffers& buffers,
                                                            const GemmTuning& tuning);
  ~GemmRunner();
  absl::Status Run(const GemmBuffers& buffers, CUstream stream) const;
  // "heuristic #0 of 8" / "autotuned: 3 of 8, 0.012 ms" / "cache".
  const std::string& choice() const { return choice_; }

 private:
  GemmRunner(std::shared_ptr<CublasLtHandle> handle, GemmConfig config)
      : handle_(std::move(handle)), lib_(&handle_->library()), config_(config) {}
  absl::Status BuildDescriptors();
  absl::Status RunWith(const cublasLtMatmulAlgo_t& algorithm, const GemmBuffers& buffers,
                       CUstream stream) const;
  std::shared_ptr<CublasLtHandle> handle_;
  const CublasLtLibrary* lib_;
  GemmConfig config_;
  cublasLtMatmulDesc_t matmul_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algorithm_{};
  float alpha_ = 1, beta_ = 0;
  std::string choice_;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_CUBLASLT_GEMM_H_
