// Forward convolutions through cuDNN 9, loaded with dlopen. A ConvRunner is
// made once per conv call of a program: tensor, filter and convolution
// descriptors from the ConvConfig (a 1-D convolution gets a unit height,
// since cuDNN wants at least two spatial dimensions), then an algorithm:
// cudnnGetConvolutionForwardAlgorithm_v7's candidates that fit the
// workspace, timed once each when autotuning, the choice cached on disk like
// cuBLASLt's. The bias+relu epilogue runs fused through
// cudnnConvolutionBiasActivationForward; a bias alone is added with
// cudnnAddTensor after the convolution (the fused call's identity
// activation only works with one algorithm).
//
// This is cuDNN's legacy (descriptor) API, deprecated in cuDNN 9 but present
// and supported in it; it takes symmetric padding only, which the compiler
// checks before choosing cuDNN.
#ifndef HLOC_RUNTIME_CUDA_CUDNN_CONV_H_
#define HLOC_RUNTIME_CUDA_CUDNN_CONV_H_

#include <cuda.h>
#include <cudnn.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/dynamic_library.h"
#include "runtime/cuda/library_call_configs.h"

namespace hloc {
namespace cuda {

#define HLOC_CUDNN_FUNCTIONS(X)             \
  X(cudnnGetVersion)                        \
  X(cudnnGetErrorString)                    \
  X(cudnnCreate)                            \
  X(cudnnDestroy)                           \
  X(cudnnSetStream)                         \
  X(cudnnCreateTensorDescriptor)            \
  X(cudnnDestroyTensorDescriptor)           \
  X(cudnnSetTensorNdDescriptor)             \
  X(cudnnCreateFilterDescriptor)            \
  X(cudnnDestroyFilterDescriptor)           \
  X(cudnnSetFilterNdDescriptor)             \
  X(cudnnCreateConvolutionDescriptor)       \
  X(cudnnDestroyConvolutionDescriptor)      \
  X(cudnnSetConvolutionNdDescriptor)        \
  X(cudnnSetConvolutionGroupCount)          \
  X(cudnnSetConvolutionMathType)            \
  X(cudnnCreateActivationDescriptor)        \
  X(cudnnDestroyActivationDescriptor)       \
  X(cudnnSetActivationDescriptor)           \
  X(cudnnGetConvolutionForwardAlgorithm_v7) \
  X(cudnnConvolutionForward)                \
  X(cudnnConvolutionBiasActivationForward)  \
  X(cudnnAddTensor)

class CudnnLibrary {
 public:
  // Fails with IsLibraryMissing(status) when libcudnn cannot be opened.
  static absl::StatusOr<const CudnnLibrary*> Get();
  absl::Status Check(cudnnStatus_t status, absl::string_view call) const;

#define HLOC_CUDNN_DECLARE(fn) decltype(&::fn) fn = nullptr;
  HLOC_CUDNN_FUNCTIONS(HLOC_CUDNN_DECLARE)
#undef HLOC_CUDNN_DECLARE

 private:
  CudnnLibrary() = default;
  std::shared_ptr<DynamicLibrary> library_;
};

class CudnnHandle {
 public:
  // A handle bound to `device`'s stream.
  static absl::StatusOr<std::shared_ptr<CudnnHandle>> Create(CudaDevice* device);
  ~CudnnHandle();
  cudnnHandle_t get() const { return handle_; }
  const CudnnLibrary& library() const { return *lib_; }

 private:
  CudnnHandle(const CudnnLibrary* lib, cudnnHandle_t handle) : lib_(lib), handle_(handle) {}
  const CudnnLibrary* lib_;
  cudnnHandle_t handle_;
};

struct ConvBuffers {
  CUdeviceptr input = 0, filter = 0, bias = 0, output = 0, workspace = 0;
  int64_t workspace_bytes = 0;
};

struct ConvTuning {
  bool autotune = true;
  AutotuneCache* cache = nullptr;
};

std::string ConvAutotuneKey(absl::string_view device_name, const ConvConfig& config,
                            int64_t workspace_bytes);

// cuDNN's dimensions and strides for a tensor of the config (N, C, spatial
// order; at least two spatial dimensions). Exposed for tests.
struct CudnnTensorShape {
  std::vector<int> dims, strides;
};
CudnnTensorShape ConvInputShape(const ConvConfig& config);
CudnnTensorShape ConvOutputShape(const ConvConfig& config);
std::vector<int> ConvFilterDims(const ConvConfig& config);

class ConvRunner {
 public:
  static absl::StatusOr<std::unique_ptr<ConvRunner>> Create(const ConvConfig& config,
                                                            std::shared_ptr<CudnnHandle> handle,
                                                            CudaDevice* device,
                                                            const ConvBuffers& buffers,
                                                            const ConvTuning& tuning);
  ~ConvRunner();
  absl::Status Run(const ConvBuffers& buffers) const;
  const std::string& choice() const { return choice_; }

 private:
  ConvRunner(std::shared_ptr<CudnnHandle> handle, ConvConfig config)
      : handle_(std::move(handle)), lib_(&handle_->library()), config_(std::move(config)) {}
  absl::Status BuildDescriptors();
  absl::Status RunWith(cudnnConvolutionFwdAlgo_t algorithm, const ConvBuffers& buffers) const;
  std::shared_ptr<CudnnHandle> handle_;
  const CudnnLibrary* lib_;
  ConvConfig config_;
  cudnnTensorDescriptor_t input_ = nullptr, output_ = nullptr, bias_ = nullptr;
  cudnnFilterDescriptor_t filter_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnActivationDescriptor_t activation_ = nullptr;
  cudnnConvolutionFwdAlgo_t algorithm_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  std::string choice_;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_CUDNN_CONV_H_
