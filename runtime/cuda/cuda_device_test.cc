// CUDA runtime tests that need a GPU: device memory, module loading and
// launches, CUDA graphs, GpuExecutable, and cuBLASLt/cuDNN calls checked
// against straightforward host loops. Each test reports SKIPPED with the
// reason (no driver, no device) on a machine without a GPU.
#include "runtime/cuda/cuda_device.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cudnn_conv.h"
#include "runtime/cuda/gpu_executable.h"

namespace hloc {
namespace cuda {
namespace {

#define SKIP_WITHOUT_GPU()                       \
  do {                                           \
    const std::string reason = NoGpuReason();    \
    if (!reason.empty()) GTEST_SKIP() << reason; \
  } while (0)

// out[i] = in[i] + 1 for i = global thread index (launch exactly n threads).
constexpr char kAddOnePtx[] = R"(
.version 7.0
.target sm_52
.address_size 64
.visible .entry add_one(.param .u64 in, .param .u64 out) {
  .reg .b32 %r<5>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.s32 %rd5, %r4, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, 0f3F800000;
  add.s64 %rd7, %rd4, %rd5;
  st.global.f32 [%rd7], %f2;
  ret;
}
)";

std::unique_ptr<CudaDevice> OpenDevice() {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? *std::move(device) : nullptr;
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Device buffers freed at scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer(CudaDevice* device, int64_t bytes) : device_(device) {
    absl::StatusOr<CUdeviceptr> p = device->Allocate(bytes);
    EXPECT_TRUE(p.ok()) << p.status();
    pointer_ = p.ok() ? *p : 0;
  }
  ~DeviceBuffer() { device_->Free(pointer_).IgnoreError(); }
  CUdeviceptr get() const { return pointer_; }

 private:
  CudaDevice* device_;
  CUdeviceptr pointer_ = 0;
};

TEST(CudaDeviceTest, ReportsTheDevice) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  const DeviceInfo& info = device->info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.compute_major, 5);
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GE(info.max_threads_per_block, 256);
  EXPECT_GT(info.total_memory, 0);
  std::printf("%s\n", info.ToString().c_str());
}

TEST(CudaDeviceTest, CopiesRoundTrip) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  std::vector<float> host = Random(1000, 1), back(1000, 0);
  DeviceBuffer a(device.get(), 4000), b(device.get(), 4000);
  ASSERT_TRUE(device->CopyToDevice(a.get(), host.data(), 4000).ok());
  ASSERT_TRUE(device->CopyOnDevice(b.get(), a.get(), 4000).ok());
  ASSERT_TRUE(device->CopyToHost(back.data(), b.get(), 4000).ok());
  ASSERT_TRUE(device->Synchronize().ok());
  EXPECT_EQ(host, back);
  ASSERT_TRUE(device->Memset(b.get(), 0, 4000).ok());
  ASSERT_TRUE(device->CopyToHost(back.data(), b.get(), 4000).ok());
  ASSERT_TRUE(device->Synchronize().ok());
  EXPECT_EQ(back, std::vector<float>(1000, 0.0f));
}

TEST(CudaDeviceTest, BadPtxIsAClearError) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  KernelImage image{"nothing", ".version 7.0\n.target sm_52\nthis is not ptx", ""};
  absl::StatusOr<CUfunction> f = device->LoadKernel(image);
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::StrContains(f.status().message(), "cuModuleLoadDataEx(PTX of nothing)"))
      << f.status();
}

TEST(CudaDeviceTest, LaunchesPtxKernelsAndReplaysGraphs) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  KernelImage image{"add_one", kAddOnePtx, ""};
  absl::StatusOr<CUfunction> f = device->LoadKernel(image);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<CUfunction> again = device->LoadKernel(image);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*f, *again);  // Cached module.
  const int n = 256 * 4;
  std::vector<float> host = Random(n, 2), back(n);
  DeviceBuffer in(device.get(), n * 4), out(device.get(), n * 4);
  ASSERT_TRUE(device->CopyToDevice(in.get(), host.data(), n * 4).ok());
  CUdeviceptr in_p = in.get(), out_p = out.get();
  void* args[] = {&in_p, &out_p};
  LaunchConfig launch;
  launch.grid[0] = 4;
  launch.block[0] = 256;
  ASSERT_TRUE(device->Launch(*f, launch, args).ok());
  ASSERT_TRUE(device->CopyToHost(back.data(), out.get(), n * 4).ok());
  ASSERT_TRUE(device->Synchronize().ok());
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], host[i] + 1.0f) << i;
  // Graph: out = in + 1, then in = out (copy) — replayed twice gives +2.
  absl::StatusOr<CUgraphExec> graph = device->CaptureGraph([&]() -> absl::Status {
    absl::Status s = device->Launch(*f, launch, args);
    if (!s.ok()) return s;
    return device->CopyOnDevice(in.get(), out.get(), n * 4);
  });
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_TRUE(device->CopyToDevice(in.get(), host.data(), n * 4).ok());
  ASSERT_TRUE(device->LaunchGraph(*graph).ok());
  ASSERT_TRUE(device->LaunchGraph(*graph).ok());
  ASSERT_TRUE(device->CopyToHost(back.data(), out.get(), n * 4).ok());
  ASSERT_TRUE(device->Synchronize().ok());
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], host[i] + 2.0f) << i;
  device->DestroyGraph(*graph);
  absl::StatusOr<double> ms =
      device->TimeOnStream([&] { return device->Launch(*f, launch, args); });
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0);
}

// A program over f32[n] buffers: parameter 0, then `temps` temporaries,
// temporary t written by step t - 1 and read by step t.
GpuProgramSpec ChainOfBuffers(int n, int temps) {
  GpuProgramSpec spec;
  runtime::BufferSpec parameter;
  parameter.kind = runtime::BufferSpec::Kind::kParameter;
  parameter.parameter = 0;
  parameter.size = n * 4;
  spec.buffers.push_back(parameter);
  for (int t = 1; t <= temps; ++t) {
    runtime::BufferSpec temp;
    temp.size = n * 4;
    temp.live = {n * 4, t, t + 1};
    spec.buffers.push_back(temp);
  }
  return spec;
}

// Appends `add_one` from buffer `in` to buffer `out` (512 elements).
void AddOneStep(GpuProgramSpec& spec, const char* name, BufferId in, BufferId out) {
  auto image = std::make_shared<KernelImage>(KernelImage{"add_one", kAddOnePtx, ""});
  LaunchConfig launch;
  launch.grid[0] = 2;
  launch.block[0] = 256;
  spec.thunks.push_back(std::make_unique<KernelThunk>(name, image, launch,
                                                      std::vector<BufferId>{in, out}, "loop"));
}

// One run of a one-parameter, one-output program on host vectors.
absl::Status ExecuteOnHost(GpuExecutable& e, const std::vector<float>& input,
                           std::vector<float>& output) {
  const void* params[] = {input.data()};
  void* outs[] = {output.data()};
  return e.Execute(params, outs);
}

TEST(GpuExecutableDeviceTest, RunsKernelsWithAndWithoutGraphs) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  const int n = 512;
  for (bool graph : {false, true}) {
    GpuProgramSpec spec = ChainOfBuffers(n, 2);
    AddOneStep(spec, "%a", 0, 1);
    AddOneStep(spec, "%b", 1, 2);
    spec.outputs = {2};
    auto e = GpuExecutable::Create(std::move(spec));
    ASSERT_TRUE(e.ok()) << e.status();
    GpuLoadOptions options;
    options.use_cuda_graph = graph;
    ASSERT_TRUE((*e)->Load(device.get(), options).ok());
    for (int run = 0; run < 3; ++run) {
      std::vector<float> input = Random(n, run), output(n);
      ASSERT_TRUE(ExecuteOnHost(**e, input, output).ok());
      for (int i = 0; i < n; ++i) ASSERT_EQ(output[i], input[i] + 2.0f);
    }
    EXPECT_EQ((*e)->uses_graph(), graph);
  }
}

// Two kernels, a step on the host (x 10), two kernels: with graphs, each
// run of kernels is captured once and replayed (two graphs, two launches a
// run) and the answer is the same as without.
TEST(GpuExecutableDeviceTest, KernelsAroundAHostStepReplayAsTwoGraphs) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  const int n = 512;
  for (bool graph : {false, true}) {
    GpuProgramSpec spec = ChainOfBuffers(n, 5);
    AddOneStep(spec, "%a", 0, 1);
    AddOneStep(spec, "%b", 1, 2);
    auto times_ten = [n](absl::Span<const void* const> in, absl::Span<void* const> out) {
      for (int i = 0; i < n; ++i) {
        static_cast<float*>(out[0])[i] = 10 * static_cast<const float*>(in[0])[i];
      }
      return absl::OkStatus();
    };
    spec.thunks.push_back(std::make_unique<CustomCallThunk>(
        "%host", "times_ten", std::vector<BufferId>{2}, std::vector<int64_t>{n * 4},
        std::vector<BufferId>{3}, std::vector<int64_t>{n * 4}, times_ten));
    AddOneStep(spec, "%c", 3, 4);
    AddOneStep(spec, "%d", 4, 5);
    spec.outputs = {5};
    auto e = GpuExecutable::Create(std::move(spec));
    ASSERT_TRUE(e.ok()) << e.status();
    GpuLoadOptions options;
    options.use_cuda_graph = graph;
    ASSERT_TRUE((*e)->Load(device.get(), options).ok());
    for (int run = 0; run < 3; ++run) {
      std::vector<float> input = Random(n, run), output(n);
      ASSERT_TRUE(ExecuteOnHost(**e, input, output).ok());
      for (int i = 0; i < n; ++i) ASSERT_EQ(output[i], 10 * (input[i] + 2.0f) + 2.0f) << i;
    }
    EXPECT_FALSE((*e)->uses_graph());  // Not one graph: two.
    const GraphStats stats = (*e)->graph_stats();
    EXPECT_EQ(stats.captured, graph ? 2 : 0);
    EXPECT_EQ(stats.launches, graph ? 6 : 0);
    EXPECT_EQ(stats.capture_failures, 0);
  }
}

// ---- cuBLASLt vs a host loop

std::vector<float> HostGemm(const GemmConfig& c, const std::vector<float>& lhs,
                            const std::vector<float>& rhs, const std::vector<float>& bias) {
  std::vector<float> out(c.batch * c.m * c.n);
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < c.k; ++l) {
          const float x =
              c.lhs_transposed ? lhs[(b * c.k + l) * c.m + i] : lhs[(b * c.m + i) * c.k + l];
          const float y =
              c.rhs_transposed ? rhs[(b * c.n + j) * c.k + l] : rhs[(b * c.k + l) * c.n + j];
          sum += static_cast<double>(x) * y;
        }
        double v = c.alpha * sum;
        if (HasBias(c.epilogue)) v += bias[j];
        if (c.epilogue == GemmEpilogue::kBiasRelu || c.epilogue == GemmEpilogue::kRelu) {
          v = std::max(v, 0.0);
        }
        if (c.epilogue == GemmEpilogue::kBiasGeluTanh || c.epilogue == GemmEpilogue::kGeluTanh) {
          v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        }
        out[(b * c.m + i) * c.n + j] = static_cast<float>(v);
      }
    }
  }
  return out;
}

class GemmDeviceTest : public ::testing::TestWithParam<int> {};

TEST_P(GemmDeviceTest, MatchesHostLoops) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  auto handle = CublasLtHandle::Create();
  if (!handle.ok() && IsLibraryMissing(handle.status())) GTEST_SKIP() << handle.status();
  ASSERT_TRUE(handle.ok()) << handle.status();
  const int variant = GetParam();
  GemmConfig c;
  c.batch = variant % 3 == 0 ? 3 : 1;
  c.m = 33;
  c.n = 40;
  c.k = 65;
  c.lhs_transposed = variant & 1;
  c.rhs_transposed = variant & 2;
  c.epilogue = c.batch > 1 ? GemmEpilogue::kNone : static_cast<GemmEpilogue>(variant % 6);
  c.alpha = variant == 5 ? 0.5 : 1.0;
  std::vector<float> lhs = Random(c.batch * c.m * c.k, 10 + variant);
  std::vector<float> rhs = Random(c.batch * c.k * c.n, 20 + variant);
  std::vector<float> bias = Random(c.n, 30 + variant);
  DeviceBuffer d_lhs(device.get(), c.lhs_bytes()), d_rhs(device.get(), c.rhs_bytes()),
      d_bias(device.get(), c.n * 4), d_out(device.get(), c.output_bytes()),
      d_ws(device.get(), 4 << 20);
  ASSERT_TRUE(device->CopyToDevice(d_lhs.get(), lhs.data(), c.lhs_bytes()).ok());
  ASSERT_TRUE(device->CopyToDevice(d_rhs.get(), rhs.data(), c.rhs_bytes()).ok());
  ASSERT_TRUE(device->CopyToDevice(d_bias.get(), bias.data(), c.n * 4).ok());
  GemmBuffers buffers{d_lhs.get(), d_rhs.get(), d_bias.get(), d_out.get(), d_ws.get(), 4 << 20};
  AutotuneCache cache;
  GemmTuning tuning;
  tuning.cache = &cache;
  auto runner = GemmRunner::Create(c, *handle, device.get(), buffers, tuning);
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_EQ(cache.size(), 1u);
  auto cached = GemmRunner::Create(c, *handle, device.get(), buffers, tuning);
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ((*cached)->choice(), "cache");
  ASSERT_TRUE((*cached)->Run(buffers, device->stream()).ok());
  std::vector<float> out(c.batch * c.m * c.n);
  ASSERT_TRUE(device->CopyToHost(out.data(), d_out.get(), c.output_bytes()).ok());
  ASSERT_TRUE(device->Synchronize().ok());
  const std::vector<float> expected = HostGemm(c, lhs, rhs, bias);
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], expected[i], 1e-4 * c.k) << c.ToString() << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmDeviceTest, ::testing::Range(0, 12));

// ---- cuDNN vs a host loop (NHWC or NCHW, OHWI or OIHW filters)

std::vector<float> HostConv(const ConvConfig& c, const std::vector<float>& x,
                            const std::vector<float>& w, const std::vector<float>& bias) {
  const int64_t H = c.input_spatial[0], W = c.input_spatial[1];
  const int64_t R = c.filter_spatial[0], S = c.filter_spatial[1];
  const int64_t P = c.output_spatial[0], Q = c.output_spatial[1];
  const int64_t C = c.input_features, K = c.output_features, G = c.groups, Cg = C / G, Kg = K / G;
  const bool last = c.layout == ConvLayout::kChannelsLast;
  auto xi = [&](int64_t n, int64_t ch, int64_t h, int64_t ww) {
    return last ? ((n * H + h) * W + ww) * C + ch : ((n * C + ch) * H + h) * W + ww;
  };
  auto wi = [&](int64_t k, int64_t ch, int64_t r, int64_t s) {
    return c.filter_layout == FilterLayout::kOutputSpatialInput ? ((k * R + r) * S + s) * Cg + ch
                                                                : ((k * Cg + ch) * R + r) * S + s;
  };
  auto yi = [&](int64_t n, int64_t k, int64_t p, int64_t q) {
    return last ? ((n * P + p) * Q + q) * K + k : ((n * K + k) * P + p) * Q + q;
  };
  std::vector<float> y(c.batch * K * P * Q);
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          double sum = 0;
          const int64_t g = k / Kg;
          for (int64_t ch = 0; ch < Cg; ++ch)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                const int64_t h = p * c.strides[0] - c.padding[0] + r * c.dilation[0];
                const int64_t ww = q * c.strides[1] - c.padding[1] + s * c.dilation[1];
                if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
                sum += static_cast<double>(x[xi(n, g * Cg + ch, h, ww)]) * w[wi(k, ch, r, s)];
              }
          sum *= c.alpha;
          if (c.epilogue != ConvEpilogue::kNone) sum += bias[k];
          if (c.epilogue == ConvEpilogue::kBiasRelu) sum = std::max(sum, 0.0);
          y[yi(n, k, p, q)] = static_cast<float>(sum);
        }
  return y;
}

class ConvDeviceTest : public ::testing::TestWithParam<int> {};

TEST_P(ConvDeviceTest, MatchesHostLoops) {
  SKIP_WITHOUT_GPU();
  auto device = OpenDevice();
  ASSERT_NE(device, nullptr);
  auto handle = CudnnHandle::Create(device.get());
  if (!handle.ok() && IsLibraryMissing(handle.status())) GTEST_SKIP() << handle.status();
  ASSERT_TRUE(handle.ok()) << handle.status();
  const int variant = GetParam();
  ConvConfig c;
  c.layout = variant & 1 ? ConvLayout::kChannelsLast : ConvLayout::kChannelsFirst;
  c.filter_layout = c.layout == ConvLayout::kChannelsLast ? FilterLayout::kOutputSpatialInput
                                                          : FilterLayout::kOutputInputSpatial;
  c.batch = 2;
  c.input_features = 8;
  c.output_features = 8;
  c.groups = variant & 2 ? 2 : 1;
  c.input_spatial = {11, 9};
  c.filter_spatial = {3, 3};
  c.strides = {variant & 4 ? 2 : 1, 1};
  c.padding = {1, 1};
  c.dilation = {1, 1};
  c.output_spatial = {(11 + 2 - 3) / c.strides[0] + 1, 9};
  c.epilogue = static_cast<ConvEpilogue>(variant % 3);
  c.alpha = variant == 7 ? 2.0 : 1.0;
  ASSERT_TRUE(c.Validate().ok()) << c.Validate();
  std::vector<float> x = Random(c.input_bytes() / 4, 40 + variant);
  std::vector<float> w = Random(c.filter_bytes() / 4, 50 + variant);
  std::vector<float> bias = Random(c.output_features, 60 + variant);
  DeviceBuffer dx(device.get(), c.input_bytes()), dw(device.get(), c.filter_bytes()),
      db(device.get(), c.output_features * 4), dy(device.get(), c.output_bytes()),
      dws(device.get(), 16 << 20);
  ASSERT_TRUE(device->CopyToDevice(dx.get(), x.data(), c.input_bytes()).ok());
  ASSERT_TRUE(device->CopyToDevice(dw.get(), w.data(), c.filter_bytes()).ok());
  ASSERT_TRUE(device->CopyToDevice(db.get(), bias.data(), c.output_features * 4).ok());
  ConvBuffers buffers{dx.get(), dw.get(), db.get(), dy.get(), dws.get(), 16 << 20};
  auto runner = ConvRunner::Create(c, *handle, device.get(), buffers, ConvTuning{});
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_TRUE((*runner)->Run(buffers).ok());
  std::vector<float> y(c.output_bytes() / 4);
  ASSERT_TRUE(device->CopyToHost(y.data(), dy.get(), c.output_bytes()).ok());
  ASSERT_TRUE(device->Synchronize().ok());
  const std::vector<float> expected = HostConv(c, x, w, bias);
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], expected[i], 1e-3) << c.ToString() << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, ConvDeviceTest, ::testing::Range(0, 8));

}  // namespace
}  // namespace cuda
}  // namespace hloc
