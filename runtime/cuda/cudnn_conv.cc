// cuDNN forward convolution (see cudnn_conv.h).
#include "runtime/cuda/cudnn_conv.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/cuda/status_util.h"

namespace hloc {
namespace cuda {
namespace {

#define HLOC_CUDNN_STRINGIFY_EXPANDED(x) HLOC_CUDNN_STRINGIFY(x)
#define HLOC_CUDNN_STRINGIFY(x) #x

cudnnDataType_t CudnnType(GpuDataType type) {
  switch (type) {
    case GpuDataType::kF32:
      return CUDNN_DATA_FLOAT;
    case GpuDataType::kF16:
      return CUDNN_DATA_HALF;
    case GpuDataType::kBF16:
      return CUDNN_DATA_BFLOAT16;
  }
  return CUDNN_DATA_FLOAT;
}

// Spatial sizes padded to two dimensions with leading ones.
std::vector<int64_t> AtLeast2(const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> out = v;
  while (out.size() < 2) out.insert(out.begin(), fill);
  return out;
}

CudnnTensorShape Shape(int64_t n, int64_t c, const std::vector<int64_t>& spatial_in,
                       ConvLayout layout) {
  const std::vector<int64_t> spatial = AtLeast2(spatial_in, 1);
  CudnnTensorShape s;
  s.dims.push_back(static_cast<int>(n));
  s.dims.push_back(static_cast<int>(c));
  for (int64_t d : spatial) s.dims.push_back(static_cast<int>(d));
  const size_t rank = s.dims.size();
  s.strides.assign(rank, 1);
  if (layout == ConvLayout::kChannelsFirst) {
    for (int i = static_cast<int>(rank) - 2; i >= 0; --i)
      s.strides[i] = s.strides[i + 1] * s.dims[i + 1];
  } else {
    // Memory order N, spatial..., C.
    s.strides[1] = 1;
    int stride = s.dims[1];
    for (int i = static_cast<int>(rank) - 1; i >= 2; --i) {
      s.strides[i] = stride;
      stride *= s.dims[i];
    }
    s.strides[0] = stride;
  }
  return s;
}

}  // namespace

CudnnTensorShape ConvInputShape(const ConvConfig& c) {
  return Shape(c.batch, c.input_features, c.input_spatial, c.layout);
}
CudnnTensorShape ConvOutputShape(const ConvConfig& c) {
  return Shape(c.batch, c.output_features, c.output_spatial, c.layout);
}
std::vector<int> ConvFilterDims(const ConvConfig& c) {
  std::vector<int> dims = {static_cast<int>(c.output_features),
                           static_cast<int>(c.input_features / c.groups)};
  for (int64_t d : AtLeast2(c.filter_spatial, 1)) dims.push_back(static_cast<int>(d));
  return dims;
}

absl::StatusOr<const CudnnLibrary*> CudnnLibrary::Get() {
  static const absl::StatusOr<const CudnnLibrary*>* const loaded = new absl::StatusOr<
      const CudnnLibrary*>([]() -> absl::StatusOr<const CudnnLibrary*> {
    auto library = DynamicLibrary::Open("cuDNN not available", {"libcudnn.so.9", "libcudnn.so"});
    if (!library.ok()) return library.status();
    auto* lib = new CudnnLibrary();  // Lives for the process.
    lib->library_ = *std::move(library);
    std::string missing;
#define HLOC_CUDNN_RESOLVE(fn)                                   \
  lib->fn = reinterpret_cast<decltype(lib->fn)>(                 \
      lib->library_->Symbol(HLOC_CUDNN_STRINGIFY_EXPANDED(fn))); \
  if (lib->fn == nullptr) absl::StrAppend(&missing, " ", HLOC_CUDNN_STRINGIFY_EXPANDED(fn));
    HLOC_CUDNN_FUNCTIONS(HLOC_CUDNN_RESOLVE)
#undef HLOC_CUDNN_RESOLVE
    if (!missing.empty()) {
      return MissingLibraryError(
          absl::StrCat("cuDNN not available: ", lib->library_->name(), " lacks", missing));
    }
    if (lib->cudnnGetVersion() < 90000) {
      return MissingLibraryError(absl::StrCat("cuDNN not available: ", lib->library_->name(),
                                              " is version ", lib->cudnnGetVersion(),
                                              ", hloc needs 9.x"));
    }
    return lib;
  }());
  return *loaded;
}

absl::Status CudnnLibrary::Check(cudnnStatus_t status, absl::string_view call) const {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string text =
      absl::StrCat(call, ": ", cudnnGetErrorString(status), " (", static_cast<int>(status), ")");
  if (status == CUDNN_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(text);
  if (status == CUDNN_STATUS_BAD_PARAM) return absl::InvalidArgumentError(text);
  if (status == CUDNN_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(text);
  return absl::InternalError(text);
}

absl::StatusOr<std::shared_ptr<CudnnHandle>> CudnnHandle::Create(CudaDevice* device) {
  HLOC_CUDA_ASSIGN_OR_RETURN(const CudnnLibrary* lib, CudnnLibrary::Get());
  HLOC_CUDA_RETURN_IF_ERROR(device->MakeCurrent());
  cudnnHandle_t handle = nullptr;
  HLOC_CUDA_RETURN_IF_ERROR(lib->Check(lib->cudnnCreate(&handle), "cudnnCreate"));
  std::shared_ptr<CudnnHandle> result(new CudnnHandle(lib, handle));
  HLOC_CUDA_RETURN_IF_ERROR(
      lib->Check(lib->cudnnSetStream(handle, reinterpret_cast<cudaStream_t>(device->stream())),
                 "cudnnSetStream"));
  return result;
}

CudnnHandle::~CudnnHandle() {
  if (handle_ != nullptr) lib_->cudnnDestroy(handle_);
}

std::string ConvAutotuneKey(absl::string_view device_name, const ConvConfig& config,
                            int64_t workspace_bytes) {
  return absl::StrCat("cudnn|", device_name, "|", config.ToString(),
                      " workspace=", workspace_bytes);
}

ConvRunner::~ConvRunner() {
  if (input_ != nullptr) lib_->cudnnDestroyTensorDescriptor(input_);
  if (output_ != nullptr) lib_->cudnnDestroyTensorDescriptor(output_);
  if (bias_ != nullptr) lib_->cudnnDestroyTensorDescriptor(bias_);
  if (filter_ != nullptr) lib_->cudnnDestroyFilterDescriptor(filter_);
  if (conv_ != nullptr) lib_->cudnnDestroyConvolutionDescriptor(conv_);
  if (activation_ != nullptr) lib_->cudnnDestroyActivationDescriptor(activation_);
}

absl::Status ConvRunner::BuildDescriptors() {
  const ConvConfig& c = config_;
  const cudnnDataType_t type = CudnnType(c.type);
  auto tensor = [&](cudnnTensorDescriptor_t* desc, const CudnnTensorShape& s,
                    const char* what) -> absl::Status {
    HLOC_CUDA_RETURN_IF_ERROR(
        lib_->Check(lib_->cudnnCreateTensorDescriptor(desc), "cudnnCreateTensorDescriptor"));
    return lib_->Check(
        lib_->cudnnSetTensorNdDescriptor(*desc, type, static_cast<int>(s.dims.size()),
                                         s.dims.data(), s.strides.data()),
        absl::StrCat("cudnnSetTensorNdDescriptor(", what, ")"));
  };
  HLOC_CUDA_RETURN_IF_ERROR(tensor(&input_, ConvInputShape(c), "input"));
  HLOC_CUDA_RETURN_IF_ERROR(tensor(&output_, ConvOutputShape(c), "output"));
  if (c.epilogue != ConvEpilogue::kNone) {
    CudnnTensorShape bias = Shape(1, c.output_features, std::vector<int64_t>(c.spatial_rank(), 1),
                                  ConvLayout::kChannelsFirst);
    HLOC_CUDA_RETURN_IF_ERROR(tensor(&bias_, bias, "bias"));
  }
  HLOC_CUDA_RETURN_IF_ERROR(
      lib_->Check(lib_->cudnnCreateFilterDescriptor(&filter_), "cudnnCreateFilterDescriptor"));
  const std::vector<int> filter_dims = ConvFilterDims(c);
  HLOC_CUDA_RETURN_IF_ERROR(lib_->Check(
      lib_->cudnnSetFilterNdDescriptor(filter_, type,
                                       c.filter_layout == FilterLayout::kOutputInputSpatial
                                           ? CUDNN_TENSOR_NCHW
                                           : CUDNN_TENSOR_NHWC,
                                       static_cast<int>(filter_dims.size()), filter_dims.data()),
      "cudnnSetFilterNdDescriptor"));
  std::vector<int> pad, stride, dilation;
  for (int64_t v : AtLeast2(c.padding, 0)) pad.push_back(static_cast<int>(v));
  for (int64_t v : AtLeast2(c.strides, 1)) stride.push_back(static_cast<int>(v));
  for (int64_t v : AtLeast2(c.dilation, 1)) dilation.push_back(static_cast<int>(v));
  HLOC_CUDA_RETURN_IF_ERROR(lib_->Check(lib_->cudnnCreateConvolutionDescriptor(&conv_),
                                        "cudnnCreateConvolutionDescriptor"));
  HLOC_CUDA_RETURN_IF_ERROR(
      lib_->Check(lib_->cudnnSetConvolutionNdDescriptor(conv_, static_cast<int>(pad.size()),
                                                        pad.data(), stride.data(), dilation.data(),
                                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                  "cudnnSetConvolutionNdDescriptor"));
  if (c.groups > 1) {
    HLOC_CUDA_RETURN_IF_ERROR(
        lib_->Check(lib_->cudnnSetConvolutionGroupCount(conv_, static_cast<int>(c.groups)),
                    "cudnnSetConvolutionGroupCount"));
  }
  // f32 without TF32 must not use tensor-core math that rounds inputs.
  const cudnnMathType_t math = c.type != GpuDataType::kF32 ? CUDNN_TENSOR_OP_MATH
                               : c.allow_tf32              ? CUDNN_DEFAULT_MATH
                                                           : CUDNN_FMA_MATH;
  HLOC_CUDA_RETURN_IF_ERROR(
      lib_->Check(lib_->cudnnSetConvolutionMathType(conv_, math), "cudnnSetConvolutionMathType"));
  if (c.epilogue == ConvEpilogue::kBiasRelu) {
    HLOC_CUDA_RETURN_IF_ERROR(lib_->Check(lib_->cudnnCreateActivationDescriptor(&activation_),
                                          "cudnnCreateActivationDescriptor"));
    HLOC_CUDA_RETURN_IF_ERROR(
        lib_->Check(lib_->cudnnSetActivationDescriptor(activation_, CUDNN_ACTIVATION_RELU,
                                                       CUDNN_NOT_PROPAGATE_NAN, 0.0),
                    "cudnnSetActivationDescriptor"));
  }
  return absl::OkStatus();
}

absl::Status ConvRunner::RunWith(cudnnConvolutionFwdAlgo_t algorithm, const ConvBuffers& b) const {
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  const float one = 1.0f, zero = 0.0f, alpha = static_cast<float>(config_.alpha);
  const size_t workspace = static_cast<size_t>(b.workspace_bytes);
  if (config_.epilogue == ConvEpilogue::kBiasRelu) {
    // z = y with weight 0: y = relu(conv(x, w) + bias).
    return lib_->Check(
        lib_->cudnnConvolutionBiasActivationForward(
            handle_->get(), &alpha, input_, ptr(b.input), filter_, ptr(b.filter), conv_, algorithm,
            ptr(b.workspace), workspace, &zero, output_, ptr(b.output), bias_, ptr(b.bias),
            activation_, output_, ptr(b.output)),
        absl::StrCat("cudnnConvolutionBiasActivationForward(", config_.ToString(), ")"));
  }
  HLOC_CUDA_RETURN_IF_ERROR(lib_->Check(
      lib_->cudnnConvolutionForward(handle_->get(), &alpha, input_, ptr(b.input), filter_,
                                    ptr(b.filter), conv_, algorithm, ptr(b.workspace), workspace,
                                    &zero, output_, ptr(b.output)),
      absl::StrCat("cudnnConvolutionForward(", config_.ToString(), ")")));
  if (config_.epilogue == ConvEpilogue::kBias) {
    HLOC_CUDA_RETURN_IF_ERROR(
        lib_->Check(lib_->cudnnAddTensor(handle_->get(), &one, bias_, ptr(b.bias), &one, output_,
                                         ptr(b.output)),
                    "cudnnAddTensor(bias)"));
  }
  return absl::OkStatus();
}

absl::Status ConvRunner::Run(const ConvBuffers& buffers) const {
  return RunWith(algorithm_, buffers);
}

absl::StatusOr<std::unique_ptr<ConvRunner>> ConvRunner::Create(const ConvConfig& config,
                                                               std::shared_ptr<CudnnHandle> handle,
                                                               CudaDevice* device,
                                                               const ConvBuffers& buffers,
                                                               const ConvTuning& tuning) {
  HLOC_CUDA_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<ConvRunner> runner(new ConvRunner(std::move(handle), config));
  HLOC_CUDA_RETURN_IF_ERROR(runner->BuildDescriptors());
  const CudnnLibrary* lib = runner->lib_;
  const std::string key = ConvAutotuneKey(device->info().name, config, buffers.workspace_bytes);
  if (tuning.cache != nullptr) {
    int cached_algorithm = -1;
    std::optional<std::string> cached = tuning.cache->Lookup(key);
    if (cached.has_value() && absl::SimpleAtoi(*cached, &cached_algorithm) &&
        cached_algorithm >= 0 && cached_algorithm < CUDNN_CONVOLUTION_FWD_ALGO_COUNT) {
      runner->algorithm_ = static_cast<cudnnConvolutionFwdAlgo_t>(cached_algorithm);
      runner->choice_ = "cache";
      return runner;
    }
  }
  constexpr int kCandidates = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  cudnnConvolutionFwdAlgoPerf_t perf[kCandidates];
  int returned = 0;
  HLOC_CUDA_RETURN_IF_ERROR(lib->Check(
      lib->cudnnGetConvolutionForwardAlgorithm_v7(runner->handle_->get(), runner->input_,
                                                  runner->filter_, runner->conv_, runner->output_,
                                                  kCandidates, &returned, perf),
      absl::StrCat("cudnnGetConvolutionForwardAlgorithm_v7(", config.ToString(), ")")));
  std::vector<cudnnConvolutionFwdAlgo_t> usable;
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS &&
        static_cast<int64_t>(perf[i].memory) <= buffers.workspace_bytes) {
      usable.push_back(perf[i].algo);
    }
  }
  if (usable.empty()) {
    return absl::UnimplementedError(absl::StrCat("cuDNN has no algorithm for ", config.ToString(),
                                                 " within ", buffers.workspace_bytes,
                                                 " workspace bytes"));
  }
  runner->algorithm_ = usable[0];
  runner->choice_ = absl::StrCat("heuristic #0 of ", usable.size());
  if (tuning.autotune && usable.size() > 1) {
    HLOC_CUDA_RETURN_IF_ERROR(runner->RunWith(usable[0], buffers));
    double best = -1;
    for (size_t i = 0; i < usable.size(); ++i) {
      absl::StatusOr<double> ms =
          device->TimeOnStream([&] { return runner->RunWith(usable[i], buffers); });
      if (!ms.ok()) continue;  // Some algorithms refuse some shapes at run time.
      if (best < 0 || *ms < best) {
        best = *ms;
        runner->algorithm_ = usable[i];
        runner->choice_ = absl::StrFormat("autotuned: algo %d, %.4f ms", usable[i], *ms);
      }
    }
    HLOC_CUDA_RETURN_IF_ERROR(device->Synchronize());
  }
  if (tuning.cache != nullptr) {
    tuning.cache->Insert(key, absl::StrCat(static_cast<int>(runner->algorithm_)));
  }
  return runner;
}

}  // namespace cuda
}  // namespace hloc
