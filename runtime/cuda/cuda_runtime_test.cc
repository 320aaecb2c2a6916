// The parts of the CUDA runtime that need no GPU, tested for real on any
// machine: driver and library loading failures and their messages, the
// autotuning cache on disk, library-call configurations (printing,
// checking, cuDNN shapes), algorithm encoding, and program placement and
// printing. (cuda_device_test.cc holds the tests that need a GPU.)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/cuda/autotune_cache.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cudnn_conv.h"
#include "runtime/cuda/gpu_executable.h"
#include "runtime/cuda/library_call_configs.h"

namespace hloc {
namespace cuda {
namespace {

std::string TempPath(absl::string_view name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

TEST(CudaDriverTest, MissingLibraryIsAClearStatus) {
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::Load({"libcuda_missing.so.1"});
  ASSERT_FALSE(driver.ok());
  EXPECT_TRUE(IsLibraryMissing(driver.status())) << driver.status();
  EXPECT_TRUE(absl::StartsWith(driver.status().message(),
                               "no CUDA driver: dlopen libcuda_missing.so.1 failed: "))
      << driver.status();
}

std::string FakeDriverPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "runtime/cuda/libfake_cuda.so";
  return absl::StrCat(srcdir, "/", workspace, "/runtime/cuda/libfake_cuda.so");
}

TEST(CudaDriverTest, DriverLackingFunctionsNamesThemByVersionedSymbol) {
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::Load({FakeDriverPath()});
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(driver.status().message());
  EXPECT_TRUE(absl::StrContains(message, "lacks functions hloc needs: cuDeviceGetCount"))
      << message;
  // cuda.h maps these to versioned symbols; the loader asks for those.
  for (const char* name :
       {"cuMemAlloc_v2", "cuMemFree_v2", "cuStreamDestroy_v2", "cuMemcpyHtoDAsync_v2",
        "cuStreamBeginCapture_v2", "cuGraphInstantiateWithFlags", "cuLaunchKernel"}) {
    EXPECT_TRUE(absl::StrContains(message, name)) << name << " missing from: " << message;
  }
  // What the fake has is not listed.
  EXPECT_FALSE(absl::StrContains(message, "cuInit")) << message;
  EXPECT_FALSE(absl::StrContains(message, "cuGetErrorName")) << message;
}

TEST(CudaDriverTest, ProcessDriverAgreesWithNoGpuReason) {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  const std::string reason = NoGpuReason();
  if (!driver.ok()) {
    EXPECT_EQ(reason, driver.status().message());
    // Either libcuda is absent or cuInit failed; both name what failed.
    EXPECT_TRUE(absl::StartsWith(reason, "no CUDA driver: dlopen libcuda.so.1 failed: ") ||
                absl::StartsWith(reason, "cuInit: "))
        << reason;
  }
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  EXPECT_EQ(device.ok(), reason.empty()) << reason;
  if (!device.ok() && !driver.ok()) {
    EXPECT_EQ(device.status(), driver.status());
  }
}

TEST(CudaDriverTest, ResultErrorsNameTheCall) {
  absl::Status status = CudaResultError(700, "cuLaunchKernel");
  EXPECT_EQ(status.message(), "cuLaunchKernel: CUDA error 700");
  EXPECT_FALSE(IsLibraryMissing(status));
}

TEST(DynamicLibraryTest, ListsEveryNameTried) {
  auto library = DynamicLibrary::Open("cuDNN not available", {"libnope_a.so", "libnope_b.so"});
  ASSERT_FALSE(library.ok());
  EXPECT_TRUE(IsLibraryMissing(library.status()));
  EXPECT_TRUE(absl::StrContains(library.status().message(), "dlopen libnope_a.so failed"));
  EXPECT_TRUE(absl::StrContains(library.status().message(), "; dlopen libnope_b.so failed"));
  auto libc = DynamicLibrary::Open("libc", {"libc.so.6"});
  ASSERT_TRUE(libc.ok()) << libc.status();
  EXPECT_NE((*libc)->Symbol("malloc"), nullptr);
  EXPECT_EQ((*libc)->Symbol("no_such_symbol_in_libc"), nullptr);
}

// The libraries load without a GPU when installed (this image has them);
// where they are not, the failure must be detectable.
TEST(GpuLibrariesTest, LoadOrReportMissing) {
  absl::StatusOr<const CublasLtLibrary*> cublaslt = CublasLtLibrary::Get();
  if (cublaslt.ok()) {
    EXPECT_GT((*cublaslt)->version(), 0u);
  } else {
    EXPECT_TRUE(IsLibraryMissing(cublaslt.status())) << cublaslt.status();
    EXPECT_TRUE(absl::StartsWith(cublaslt.status().message(), "cuBLASLt not available: "));
  }
  absl::StatusOr<const CudnnLibrary*> cudnn = CudnnLibrary::Get();
  if (cudnn.ok()) {
    EXPECT_GE((*cudnn)->cudnnGetVersion(), 90000u);
    EXPECT_EQ((*cudnn)->Check(CUDNN_STATUS_SUCCESS, "x"), absl::OkStatus());
    absl::Status bad = (*cudnn)->Check(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor");
    EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(bad.message(), "cudnnSetTensorNdDescriptor: ")) << bad;
  } else {
    EXPECT_TRUE(IsLibraryMissing(cudnn.status())) << cudnn.status();
  }
  if (cublaslt.ok()) {
    absl::Status unsupported = (*cublaslt)->Check(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul");
    EXPECT_EQ(unsupported.code(), absl::StatusCode::kUnimplemented);
    EXPECT_TRUE(absl::StrContains(unsupported.message(), "CUBLAS_STATUS_NOT_SUPPORTED"))
        << unsupported;
  }
}

TEST(AutotuneCacheTest, RoundTripsThroughTheFile) {
  const std::string path = TempPath("autotune/sub/cache.tsv");
  std::remove(path.c_str());
  {
    absl::StatusOr<std::unique_ptr<AutotuneCache>> cache = AutotuneCache::Open(path);
    ASSERT_TRUE(cache.ok()) << cache.status();
    EXPECT_EQ((*cache)->size(), 0u);
    (*cache)->Insert("cublaslt|H100|gemm m=8", "00ff");
    (*cache)->Insert("key\twith\ttabs", "value\nwith newline");
    ASSERT_TRUE((*cache)->Save().ok());
  }
  absl::StatusOr<std::unique_ptr<AutotuneCache>> again = AutotuneCache::Open(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->size(), 2u);
  EXPECT_EQ((*again)->Lookup("cublaslt|H100|gemm m=8"), "00ff");
  EXPECT_EQ((*again)->Lookup("key with tabs"), "value with newline");
  EXPECT_EQ((*again)->Lookup("key\twith\ttabs"), "value with newline");
  EXPECT_FALSE((*again)->Lookup("absent").has_value());

  // A second writer merges with what is on disk; its own entries win.
  absl::StatusOr<std::unique_ptr<AutotuneCache>> other = AutotuneCache::Open(path);
  ASSERT_TRUE(other.ok());
  (*again)->Insert("new", "1");
  ASSERT_TRUE((*again)->Save().ok());
  (*other)->Insert("cublaslt|H100|gemm m=8", "abcd");
  ASSERT_TRUE((*other)->Save().ok());
  absl::StatusOr<std::unique_ptr<AutotuneCache>> merged = AutotuneCache::Open(path);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ((*merged)->size(), 3u);
  EXPECT_EQ((*merged)->Lookup("new"), "1");
  EXPECT_EQ((*merged)->Lookup("cublaslt|H100|gemm m=8"), "abcd");
}

TEST(AutotuneCacheTest, RejectsForeignFiles) {
  const std::string path = TempPath("not_a_cache.tsv");
  std::ofstream(path) << "hello\n";
  absl::StatusOr<std::unique_ptr<AutotuneCache>> cache = AutotuneCache::Open(path);
  ASSERT_FALSE(cache.ok());
  EXPECT_TRUE(absl::StrContains(cache.status().message(), "not an hloc autotune cache"))
      << cache.status();
  std::map<std::string, std::string> entries;
  absl::Status bad = ParseAutotuneFile("# hloc autotune cache v1\nno tab here\n", "f", &entries);
  EXPECT_EQ(bad.message(), "f:2: expected 'key<TAB>value'");
}

TEST(AutotuneCacheTest, MissingFileIsEmptyAndMemoryCacheSavesNothing) {
  absl::StatusOr<std::unique_ptr<AutotuneCache>> cache =
      AutotuneCache::Open(TempPath("never/written.tsv"));
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ((*cache)->size(), 0u);
  AutotuneCache memory;
  memory.Insert("a", "b");
  EXPECT_TRUE(memory.Save().ok());
  EXPECT_EQ(memory.Lookup("a"), "b");
  EXPECT_TRUE(absl::EndsWith(AutotuneCache::DefaultPath(), "autotune.tsv"));
}

TEST(GemmConfigTest, PrintsAndChecks) {
  GemmConfig c;
  c.m = 8;
  c.n = 64;
  c.k = 32;
  c.rhs_transposed = true;
  c.epilogue = GemmEpilogue::kBiasRelu;
  EXPECT_EQ(c.ToString(),
            "gemm batch=1 m=8 n=64 k=32 lhs=N rhs=T f32->f32 compute=32F alpha=1 beta=0 "
            "epilogue=bias_relu");
  EXPECT_TRUE(c.Validate().ok());
  EXPECT_EQ(c.bias_bytes(), 64 * 4);
  EXPECT_EQ(c.lhs_bytes(), 8 * 32 * 4);
  c.allow_tf32 = true;
  EXPECT_EQ(c.compute_type(), "32F_FAST_TF32");
  c.input_type = GpuDataType::kBF16;
  EXPECT_EQ(c.compute_type(), "32F");  // TF32 only concerns f32 inputs.
  c.m = 0;
  EXPECT_FALSE(c.Validate().ok());
  c.m = 8;
  c.input_type = GpuDataType::kF32;
  c.output_type = GpuDataType::kF16;
  EXPECT_FALSE(c.Validate().ok());
  EXPECT_EQ(GemmAutotuneKey("NVIDIA H100", GemmConfig{}, 1024),
            "cublaslt|NVIDIA H100|gemm batch=1 m=0 n=0 k=0 lhs=N rhs=N f32->f32 compute=32F "
            "alpha=1 beta=0 epilogue=none workspace=1024");
}

TEST(GemmConfigTest, AlgorithmEncodingRoundTrips) {
  cublasLtMatmulAlgo_t algorithm;
  for (int i = 0; i < 8; ++i) algorithm.data[i] = 0x0123456789abcdefull * (i + 1);
  const std::string text = EncodeGemmAlgorithm(algorithm);
  EXPECT_EQ(text.size(), 2 * sizeof(algorithm));
  absl::StatusOr<cublasLtMatmulAlgo_t> back = DecodeGemmAlgorithm(text);
  ASSERT_TRUE(back.ok()) << back.status();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(back->data[i], algorithm.data[i]);
  EXPECT_FALSE(DecodeGemmAlgorithm("abc").ok());
  EXPECT_FALSE(DecodeGemmAlgorithm(std::string(text.size(), 'z')).ok());
}

// cuBLASLt's definition, column-major: D[i + j*ldd] = sum_l op(A)(i,l) op(B)(l,j),
// with op(X)(i,l) = X[i + l*ld] or, transposed, X[l + i*ld], per batch.
std::vector<double> ColumnMajorGemm(const CublasLtProblem& p, int64_t batch,
                                    const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d(batch * p.d.batch_stride, 0);
  for (int64_t t = 0; t < batch; ++t) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < p.k; ++l) {
          const double x = p.transpose_a ? a[t * p.a.batch_stride + l + i * p.a.rows]
                                         : a[t * p.a.batch_stride + i + l * p.a.rows];
          const double y = p.transpose_b ? b[t * p.b.batch_stride + j + l * p.b.rows]
                                         : b[t * p.b.batch_stride + l + j * p.b.rows];
          sum += x * y;
        }
        d[t * p.d.batch_stride + i + j * p.d.rows] = sum;
      }
    }
  }
  return d;
}

TEST(GemmConfigTest, ColumnMajorTranslationComputesTheRowMajorProduct) {
  for (int variant = 0; variant < 8; ++variant) {
    GemmConfig c;
    c.batch = variant & 4 ? 3 : 1;
    c.m = 5;
    c.n = 7;
    c.k = 4;
    c.lhs_transposed = variant & 1;
    c.rhs_transposed = variant & 2;
    const CublasLtProblem p = ToCublasLt(c);
    // The shapes cuBLASLt checks: op(A) is m x k, op(B) k x n, D m x n.
    EXPECT_EQ(p.transpose_a ? p.a.cols : p.a.rows, p.m);
    EXPECT_EQ(p.transpose_a ? p.a.rows : p.a.cols, p.k);
    EXPECT_EQ(p.transpose_b ? p.b.cols : p.b.rows, p.k);
    EXPECT_EQ(p.transpose_b ? p.b.rows : p.b.cols, p.n);
    EXPECT_EQ(p.d.rows, p.m);
    EXPECT_EQ(p.d.cols, p.n);
    std::vector<double> lhs(c.batch * c.m * c.k), rhs(c.batch * c.k * c.n);
    for (size_t i = 0; i < lhs.size(); ++i) lhs[i] = static_cast<double>((i * 7) % 11) - 5;
    for (size_t i = 0; i < rhs.size(); ++i) rhs[i] = static_cast<double>((i * 5) % 13) - 6;
    // Our buffers are cuBLASLt's A (rhs) and B (lhs) as they are, no copies.
    const std::vector<double> d = ColumnMajorGemm(p, c.batch, rhs, lhs);
    for (int64_t t = 0; t < c.batch; ++t) {
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) {
          double expected = 0;
          for (int64_t l = 0; l < c.k; ++l) {
            const double x =
                c.lhs_transposed ? lhs[(t * c.k + l) * c.m + i] : lhs[(t * c.m + i) * c.k + l];
            const double y =
                c.rhs_transposed ? rhs[(t * c.n + j) * c.k + l] : rhs[(t * c.k + l) * c.n + j];
            expected += x * y;
          }
          // Row-major out[t][i][j] is the output buffer's element (t*m + i)*n + j.
          ASSERT_EQ(d[(t * c.m + i) * c.n + j], expected)
              << c.ToString() << " at " << t << "," << i << "," << j;
        }
      }
    }
  }
}

ConvConfig Conv2d(ConvLayout layout) {
  ConvConfig c;
  c.layout = layout;
  c.filter_layout = layout == ConvLayout::kChannelsFirst ? FilterLayout::kOutputInputSpatial
                                                         : FilterLayout::kOutputSpatialInput;
  c.batch = 2;
  c.input_features = 4;
  c.output_features = 6;
  c.groups = 2;
  c.input_spatial = {9, 7};
  c.filter_spatial = {3, 3};
  c.strides = {2, 1};
  c.padding = {1, 0};
  c.dilation = {1, 2};
  c.output_spatial = {5, 3};  // (9+2-3)/2+1, (7-5)/1+1
  c.epilogue = ConvEpilogue::kBiasRelu;
  return c;
}

TEST(ConvConfigTest, ChecksOutputSizes) {
  ConvConfig c = Conv2d(ConvLayout::kChannelsLast);
  EXPECT_TRUE(c.Validate().ok()) << c.Validate();
  EXPECT_EQ(c.ToString(),
            "conv2d f32 NHWC filter=OHWI batch=2 in=4 out=6 groups=2 input=9x7 filter=3x3 "
            "output=5x3 stride=2x1 pad=1x0 dilation=1x2 epilogue=bias_relu");
  EXPECT_EQ(c.filter_bytes(), 6 * 2 * 9 * 4);
  c.output_spatial = {5, 4};
  absl::Status bad = c.Validate();
  EXPECT_TRUE(absl::StrContains(bad.message(), "output size 4 in spatial dimension 1 should be 3"))
      << bad;
  c = Conv2d(ConvLayout::kChannelsFirst);
  c.groups = 3;
  EXPECT_FALSE(c.Validate().ok());
}

TEST(ConvConfigTest, CudnnShapesFollowTheLayout) {
  ConvConfig c = Conv2d(ConvLayout::kChannelsFirst);
  CudnnTensorShape in = ConvInputShape(c);
  EXPECT_EQ(in.dims, (std::vector<int>{2, 4, 9, 7}));
  EXPECT_EQ(in.strides, (std::vector<int>{4 * 9 * 7, 9 * 7, 7, 1}));
  c = Conv2d(ConvLayout::kChannelsLast);
  in = ConvInputShape(c);
  EXPECT_EQ(in.dims, (std::vector<int>{2, 4, 9, 7}));
  EXPECT_EQ(in.strides, (std::vector<int>{9 * 7 * 4, 1, 7 * 4, 4}));
  EXPECT_EQ(ConvFilterDims(c), (std::vector<int>{6, 2, 3, 3}));
  // 1-D convolutions get a unit height.
  ConvConfig one;
  one.layout = ConvLayout::kChannelsLast;
  one.batch = 1;
  one.input_features = 3;
  one.output_features = 5;
  one.input_spatial = {10};
  one.filter_spatial = {3};
  one.output_spatial = {8};
  one.strides = {1};
  one.padding = {0};
  one.dilation = {1};
  CudnnTensorShape out = ConvOutputShape(one);
  EXPECT_EQ(out.dims, (std::vector<int>{1, 5, 1, 8}));
  EXPECT_EQ(out.strides, (std::vector<int>{40, 1, 40, 5}));
  EXPECT_EQ(ConvFilterDims(one), (std::vector<int>{5, 3, 1, 3}));
}

runtime::BufferSpec Buffer(runtime::BufferSpec::Kind kind, int64_t size, int64_t first = 0,
                           int64_t last = 0) {
  runtime::BufferSpec b;
  b.kind = kind;
  b.size = size;
  b.live = {size, first, last};
  if (kind == runtime::BufferSpec::Kind::kConstant) b.data.assign(size, 7);
  return b;
}

TEST(GpuExecutableTest, PlacesRegionsWithoutADevice) {
  GpuProgramSpec spec;
  using Kind = runtime::BufferSpec::Kind;
  spec.buffers.push_back(Buffer(Kind::kParameter, 100));  // 0: lhs
  spec.buffers[0].parameter = 0;
  spec.buffers.push_back(Buffer(Kind::kConstant, 10));     // 1
  spec.buffers.push_back(Buffer(Kind::kTemp, 300, 1, 2));  // 2
  spec.buffers.push_back(Buffer(Kind::kTemp, 300, 3, 4));  // 3: may reuse 2's bytes
  spec.buffers.push_back(Buffer(Kind::kParameter, 4));     // 4
  spec.buffers[4].parameter = 1;
  auto image = std::make_shared<KernelImage>();
  image->name = "hloc_add";
  image->ptx = ".version 8.0";
  LaunchConfig launch;
  launch.grid[0] = 2;
  launch.block[0] = 128;
  spec.thunks.push_back(std::make_unique<KernelThunk>(
      "%fusion", image, launch, std::vector<BufferId>{0, 1, 2}, "loop"));
  ThunkSequence condition, body;
  body.push_back(std::make_unique<CopyThunk>(2, 3, 300));
  spec.thunks.push_back(
      std::make_unique<WhileThunk>("%while", std::move(condition), 4, std::move(body)));
  spec.outputs = {3};
  absl::StatusOr<std::unique_ptr<GpuExecutable>> e = GpuExecutable::Create(std::move(spec));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->num_parameters(), 2);
  EXPECT_EQ((*e)->parameter_size(0), 100);
  EXPECT_EQ((*e)->output_size(0), 300);
  // constants 256 + parameters 2*256 + arena 512 (two disjoint 300-byte temps share it).
  EXPECT_EQ((*e)->device_bytes(), 256 + 512 + 512);
  EXPECT_FALSE((*e)->graph_capturable());  // The while loop reads its predicate back.
  EXPECT_EQ((*e)->ThunksToString(),
            "kernel %fusion hloc_add loop grid=2,1,1 block=128,1,1 buffers=(0, 1, 2) ptx=12B "
            "cubin=0B\n"
            "while %while predicate=4\n"
            "  condition:\n"
            "  body:\n"
            "    copy 2 -> 3 (300 B)\n");
  EXPECT_TRUE(absl::StrContains((*e)->MemoryReport(), "constants 256 B, parameters 512 B"))
      << (*e)->MemoryReport();
  EXPECT_EQ((*e)->Execute({}, {}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(GpuExecutableTest, RejectsInconsistentSpecs) {
  using Kind = runtime::BufferSpec::Kind;
  GpuProgramSpec gap;
  gap.buffers.push_back(Buffer(Kind::kParameter, 4));
  gap.buffers[0].parameter = 1;  // Parameter 0 has no buffer.
  EXPECT_FALSE(GpuExecutable::Create(std::move(gap)).ok());
  GpuProgramSpec bad_output;
  bad_output.buffers.push_back(Buffer(Kind::kTemp, 4));
  bad_output.outputs = {3};
  EXPECT_FALSE(GpuExecutable::Create(std::move(bad_output)).ok());
  GpuProgramSpec bad_constant;
  bad_constant.buffers.push_back(Buffer(Kind::kConstant, 4));
  bad_constant.buffers[0].data.resize(3);
  EXPECT_FALSE(GpuExecutable::Create(std::move(bad_constant)).ok());
}

TEST(GpuThunkTest, LibraryThunksPrintTheirParameters) {
  GemmConfig gemm;
  gemm.batch = 4;
  gemm.m = 16;
  gemm.n = 8;
  gemm.k = 32;
  gemm.lhs_transposed = true;
  GemmThunk thunk("%dot", gemm, {0, 1, 2, 3}, 1 << 20);
  std::string text;
  thunk.AppendTo(&text, 1);
  EXPECT_EQ(text,
            "  cublaslt %dot gemm batch=4 m=16 n=8 k=32 lhs=T rhs=N f32->f32 compute=32F alpha=1 "
            "beta=0 epilogue=none buffers=(0, 1, 2, 3) workspace=1048576B\n");
}

}  // namespace
}  // namespace cuda
}  // namespace hloc
