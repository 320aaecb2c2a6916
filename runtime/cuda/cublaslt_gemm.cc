// cuBLASLt gemm: loading, descriptors, algorithm choice (see cublaslt_gemm.h).
//
// Row-major out[m][n] = lhs[m][k] * rhs[k][n] is, read column-major,
// out^T[n][m] = rhs^T[n][k] * lhs^T[k][m]: cuBLASLt's A is our rhs, its B our
// lhs, its (m, n) our (n, m). A bias along our last dimension n is a bias
// along cuBLASLt's rows, which is what its BIAS epilogues add.
#include "runtime/cuda/cublaslt_gemm.h"

#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/cuda/status_util.h"

namespace hloc {
namespace cuda {
namespace {

#define HLOC_CUBLASLT_STRINGIFY_EXPANDED(x) HLOC_CUBLASLT_STRINGIFY(x)
#define HLOC_CUBLASLT_STRINGIFY(x) #x

cudaDataType_t CudaType(GpuDataType type) {
  switch (type) {
    case GpuDataType::kF32:
      return CUDA_R_32F;
    case GpuDataType::kF16:
      return CUDA_R_16F;
    case GpuDataType::kBF16:
      return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

cublasLtEpilogue_t Epilogue(GemmEpilogue epilogue) {
  switch (epilogue) {
    case GemmEpilogue::kNone:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case GemmEpilogue::kBias:
      return CUBLASLT_EPILOGUE_BIAS;
    case GemmEpilogue::kRelu:
      return CUBLASLT_EPILOGUE_RELU;
    case GemmEpilogue::kBiasRelu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case GemmEpilogue::kGeluTanh:
      return CUBLASLT_EPILOGUE_GELU;
    case GemmEpilogue::kBiasGeluTanh:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace

absl::StatusOr<const CublasLtLibrary*> CublasLtLibrary::Get() {
  static const absl::StatusOr<const CublasLtLibrary*>* const loaded =
      new absl::StatusOr<const CublasLtLibrary*>([]() -> absl::StatusOr<const CublasLtLibrary*> {
        auto library = DynamicLibrary::Open(
            "cuBLASLt not available", {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
        if (!library.ok()) return library.status();
        auto* lib = new CublasLtLibrary();  // Lives for the process.
        lib->library_ = *std::move(library);
        std::string missing;
#define HLOC_CUBLASLT_RESOLVE(fn)                                   \
  lib->fn = reinterpret_cast<decltype(lib->fn)>(                    \
      lib->library_->Symbol(HLOC_CUBLASLT_STRINGIFY_EXPANDED(fn))); \
  if (lib->fn == nullptr) absl::StrAppend(&missing, " ", HLOC_CUBLASLT_STRINGIFY_EXPANDED(fn));
        HLOC_CUBLASLT_FUNCTIONS(HLOC_CUBLASLT_RESOLVE)
#undef HLOC_CUBLASLT_RESOLVE
        if (!missing.empty()) {
          return MissingLibraryError(
              absl::StrCat("cuBLASLt not available: ", lib->library_->name(), " lacks", missing));
        }
        return lib;
      }());
  return *loaded;
}

absl::Status CublasLtLibrary::Check(cublasStatus_t status, absl::string_view call) const {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string text = absl::StrCat(call, ": ", cublasLtGetStatusName(status), " (",
                                        cublasLtGetStatusString(status), ")");
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(text);
  if (status == CUBLAS_STATUS_INVALID_VALUE) return absl::InvalidArgumentError(text);
  if (status == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(text);
  return absl::InternalError(text);
}

absl::StatusOr<std::shared_ptr<CublasLtHandle>> CublasLtHandle::Create() {
  HLOC_CUDA_ASSIGN_OR_RETURN(const CublasLtLibrary* lib, CublasLtLibrary::Get());
  cublasLtHandle_t handle = nullptr;
  HLOC_CUDA_RETURN_IF_ERROR(lib->Check(lib->cublasLtCreate(&handle), "cublasLtCreate"));
  return std::shared_ptr<CublasLtHandle>(new CublasLtHandle(lib, handle));
}

CublasLtHandle::~CublasLtHandle() {
  if (handle_ != nullptr) lib_->cublasLtDestroy(handle_);
}

CublasLtProblem ToCublasLt(const GemmConfig& c) {
  // cuBLASLt's A is our rhs, its B our lhs (see the top of the file).
  // Stored column-major: rhs is n x k (k x n when transposed), lhs is k x m
  // (m x k when transposed), the output n x m.
  CublasLtProblem p;
  p.transpose_a = c.rhs_transposed;
  p.transpose_b = c.lhs_transposed;
  p.a = {c.rhs_transposed ? c.k : c.n, c.rhs_transposed ? c.n : c.k, c.n * c.k};
  p.b = {c.lhs_transposed ? c.m : c.k, c.lhs_transposed ? c.k : c.m, c.m * c.k};
  p.d = {c.n, c.m, c.m * c.n};
  p.m = c.n;
  p.n = c.m;
  p.k = c.k;
  return p;
}

std::string GemmAutotuneKey(absl::string_view device_name, const GemmConfig& config,
                            int64_t workspace_bytes) {
  return absl::StrCat("cublaslt|", device_name, "|", config.ToString(),
                      " workspace=", workspace_bytes);
}

std::string EncodeGemmAlgorithm(const cublasLtMatmulAlgo_t& algorithm) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(&algorithm), sizeof(algorithm)));
}

absl::StatusOr<cublasLtMatmulAlgo_t> DecodeGemmAlgorithm(absl::string_view text) {
  if (text.size() != 2 * sizeof(cublasLtMatmulAlgo_t)) {
    return absl::InvalidArgumentError(absl::StrCat("cached gemm algorithm has ", text.size(),
                                                   " hex digits, expected ",
                                                   2 * sizeof(cublasLtMatmulAlgo_t)));
  }
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("cached gemm algorithm is not hexadecimal");
    }
  }
  const std::string bytes = absl::HexStringToBytes(text);
  cublasLtMatmulAlgo_t algorithm;
  std::memcpy(&algorithm, bytes.data(), sizeof(algorithm));
  return algorithm;
}

GemmRunner::~GemmRunner() {
  if (a_ != nullptr) lib_->cublasLtMatrixLayoutDestroy(a_);
  if (b_ != nullptr) lib_->cublasLtMatrixLayoutDestroy(b_);
  if (d_ != nullptr) lib_->cublasLtMatrixLayoutDestroy(d_);
  if (matmul_ != nullptr) lib_->cublasLtMatmulDescDestroy(matmul_);
}

absl::Status GemmRunner::BuildDescriptors() {
  const GemmConfig& c = config_;
  const cublasComputeType_t compute = c.input_type == GpuDataType::kF32 && c.allow_tf32
                                          ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F;
  HLOC_CUDA_RETURN_IF_ERROR(lib_->Check(
      lib_->cublasLtMatmulDescCreate(&matmul_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate"));
  auto set_desc = [&](cublasLtMatmulDescAttributes_t attribute, const void* value, size_t size,
                      const char* what) {
    return lib_->Check(lib_->cublasLtMatmulDescSetAttribute(matmul_, attribute, value, size),
                       absl::StrCat("cublasLtMatmulDescSetAttribute(", what, ")"));
  };
  const CublasLtProblem p = ToCublasLt(c);
  const cublasOperation_t op_a = p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  HLOC_CUDA_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a), "TRANSA"));
  HLOC_CUDA_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b), "TRANSB"));
  const cublasLtEpilogue_t epilogue = Epilogue(c.epilogue);
  HLOC_CUDA_RETURN_IF_ERROR(
      set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue), "EPILOGUE"));
  if (HasBias(c.epilogue)) {
    const cudaDataType_t bias_type = CudaType(c.output_type);
    HLOC_CUDA_RETURN_IF_ERROR(set_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                       sizeof(bias_type), "BIAS_DATA_TYPE"));
  }
  auto layout = [&](cublasLtMatrixLayout_t* out, cudaDataType_t type,
                    const CublasLtMatrix& matrix) -> absl::Status {
    HLOC_CUDA_RETURN_IF_ERROR(lib_->Check(
        lib_->cublasLtMatrixLayoutCreate(out, type, matrix.rows, matrix.cols, matrix.rows),
        "cublasLtMatrixLayoutCreate"));
    if (c.batch > 1) {
      const int32_t count = static_cast<int32_t>(c.batch);
      HLOC_CUDA_RETURN_IF_ERROR(
          lib_->Check(lib_->cublasLtMatrixLayoutSetAttribute(
                          *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                      "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)"));
      const int64_t stride = matrix.batch_stride;
      HLOC_CUDA_RETURN_IF_ERROR(lib_->Check(
          lib_->cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                 &stride, sizeof(stride)),
          "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)"));
    }
    return absl::OkStatus();
  };
  const cudaDataType_t in = CudaType(c.input_type), out = CudaType(c.output_type);
  HLOC_CUDA_RETURN_IF_ERROR(layout(&a_, in, p.a));
  HLOC_CUDA_RETURN_IF_ERROR(layout(&b_, in, p.b));
  HLOC_CUDA_RETURN_IF_ERROR(layout(&d_, out, p.d));
  alpha_ = static_cast<float>(c.alpha);
  beta_ = static_cast<float>(c.beta);
  return absl::OkStatus();
}

absl::Status GemmRunner::RunWith(const cublasLtMatmulAlgo_t& algorithm, const GemmBuffers& b,
                                 CUstream stream) const {
  if (HasBias(config_.epilogue)) {
    const void* bias = reinterpret_cast<const void*>(b.bias);
    HLOC_CUDA_RETURN_IF_ERROR(
        lib_->Check(lib_->cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                         &bias, sizeof(bias)),
                    "cublasLtMatmulDescSetAttribute(BIAS_POINTER)"));
  }
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  return lib_->Check(
      lib_->cublasLtMatmul(handle_->get(), matmul_, &alpha_, ptr(b.rhs), a_, ptr(b.lhs), b_, &beta_,
                           ptr(b.output), d_, ptr(b.output), d_, &algorithm, ptr(b.workspace),
                           static_cast<size_t>(b.workspace_bytes),
                           reinterpret_cast<cudaStream_t>(stream)),
      absl::StrCat("cublasLtMatmul(", config_.ToString(), ")"));
}

absl::Status GemmRunner::Run(const GemmBuffers& buffers, CUstream stream) const {
  return RunWith(algorithm_, buffers, stream);
}

absl::StatusOr<std::unique_ptr<GemmRunner>> GemmRunner::Create(
    const GemmConfig& config, std::shared_ptr<CublasLtHandle> handle, CudaDevice* device,
    const GemmBuffers& buffers, const GemmTuning& tuning) {
  HLOC_CUDA_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<GemmRunner> runner(new GemmRunner(std::move(handle), config));
  HLOC_CUDA_RETURN_IF_ERROR(runner->BuildDescriptors());
  const CublasLtLibrary* lib = runner->lib_;
  const std::string key = GemmAutotuneKey(device->info().name, config, buffers.workspace_bytes);
  if (tuning.cache != nullptr) {
    if (std::optional<std::string> cached = tuning.cache->Lookup(key)) {
      absl::StatusOr<cublasLtMatmulAlgo_t> algorithm = DecodeGemmAlgorithm(*cached);
      cublasLtMatmulHeuristicResult_t check{};
      if (algorithm.ok() &&
          lib->cublasLtMatmulAlgoCheck(runner->handle_->get(), runner->matmul_, runner->a_,
                                       runner->b_, runner->d_, runner->d_, &*algorithm,
                                       &check) == CUBLAS_STATUS_SUCCESS &&
          static_cast<int64_t>(check.workspaceSize) <= buffers.workspace_bytes) {
        runner->algorithm_ = *algorithm;
        runner->choice_ = "cache";
        return runner;
      }
      // A stale entry (another library version): tune again below.
    }
  }
  cublasLtMatmulPreference_t preference = nullptr;
  HLOC_CUDA_RETURN_IF_ERROR(lib->Check(lib->cublasLtMatmulPreferenceCreate(&preference),
                                       "cublasLtMatmulPreferenceCreate"));
  const uint64_t workspace = static_cast<uint64_t>(buffers.workspace_bytes);
  absl::Status status = lib->Check(
      lib->cublasLtMatmulPreferenceSetAttribute(
          preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)),
      "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  std::vector<cublasLtMatmulHeuristicResult_t> results(std::max(1, tuning.max_candidates));
  int returned = 0;
  if (status.ok()) {
    status = lib->Check(
        lib->cublasLtMatmulAlgoGetHeuristic(
            runner->handle_->get(), runner->matmul_, runner->a_, runner->b_, runner->d_, runner->d_,
            preference, static_cast<int>(results.size()), results.data(), &returned),
        absl::StrCat("cublasLtMatmulAlgoGetHeuristic(", config.ToString(), ")"));
  }
  lib->cublasLtMatmulPreferenceDestroy(preference);
  HLOC_CUDA_RETURN_IF_ERROR(status);
  results.resize(returned);
  std::vector<cublasLtMatmulHeuristicResult_t> usable;
  for (const auto& r : results) {
    if (r.state == CUBLAS_STATUS_SUCCESS) usable.push_back(r);
  }
  if (usable.empty()) {
    return absl::UnimplementedError(
        absl::StrCat("cuBLASLt has no algorithm for ", config.ToString()));
  }
  runner->algorithm_ = usable[0].algo;
  runner->choice_ = absl::StrCat("heuristic #0 of ", usable.size());
  if (tuning.autotune && usable.size() > 1) {
    // One untimed run loads the kernels; then each candidate is timed once.
    HLOC_CUDA_RETURN_IF_ERROR(runner->RunWith(usable[0].algo, buffers, device->stream()));
    double best = -1;
    for (size_t i = 0; i < usable.size(); ++i) {
      absl::StatusOr<double> ms = device->TimeOnStream(
          [&] { return runner->RunWith(usable[i].algo, buffers, device->stream()); });
      if (!ms.ok()) continue;  // A candidate that fails to run is skipped.
      if (best < 0 || *ms < best) {
        best = *ms;
        runner->algorithm_ = usable[i].algo;
        runner->choice_ = absl::StrFormat("autotuned: #%d of %d, %.4f ms", i, usable.size(), *ms);
      }
    }
    HLOC_CUDA_RETURN_IF_ERROR(device->Synchronize());
  }
  if (tuning.cache != nullptr) tuning.cache->Insert(key, EncodeGemmAlgorithm(runner->algorithm_));
  return runner;
}

}  // namespace cuda
}  // namespace hloc
