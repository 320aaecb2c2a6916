// The kernel modes of gpu_bench (bench/gpu_bench_main.cc): --bandwidth
// times large fused elementwise, broadcast, reduction and transpose modules
// through hloc against cuMemcpyDtoD of the same traffic; --gemm times dots
// through hloc (cuBLASLt plans) against cuBLAS called directly
// (cublasGemmEx) on the same data and stream. One JSON line per case.

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_compiler.h"
#include "bench/gpu_bench.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/dynamic_library.h"

namespace hloc {
namespace gpu_bench {

// ------------------------------------------------------------ bandwidth

std::vector<BandwidthCase> BandwidthCases() {
  const char* add =
      "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
      " ROOT s = f32[] add(x, y) }\n";
  return {
      {"fma f32 a*b+c",
       [](int64_t n) {
         return absl::StrCat("HloModule fma\nENTRY main {\n a = f32[", n,
                             "] parameter(0)\n b = f32[", n, "] parameter(1)\n c = f32[", n,
                             "] parameter(2)\n m = f32[", n, "] multiply(a, b)\n ROOT r = f32[", n,
                             "] add(m, c)\n}\n");
       }},
      {"exp(a)*b f32",
       [](int64_t n) {
         return absl::StrCat("HloModule exp_mul\nENTRY main {\n a = f32[", n,
                             "] parameter(0)\n b = f32[", n, "] parameter(1)\n e = f32[", n,
                             "] exponential(a)\n ROOT r = f32[", n, "] multiply(e, b)\n}\n");
       }},
      {"bf16 convert chain",
       [](int64_t n) {
         return absl::StrCat("HloModule convert_chain\nENTRY main {\n a = f32[", n,
                             "] parameter(0)\n h = bf16[", n, "] convert(a)\n f = f32[", n,
                             "] convert(h)\n m = f32[", n, "] multiply(f, a)\n ROOT r = bf16[", n,
                             "] convert(m)\n}\n");
       }},
      {"broadcast-add row f32[n/1024,1024]",
       [](int64_t n) {
         const int64_t rows = n / 1024;
         return absl::StrCat("HloModule row_bias\nENTRY main {\n x = f32[", rows,
                             ",1024] parameter(0)\n b = f32[1024] parameter(1)\n bb = f32[", rows,
                             ",1024] broadcast(b), dimensions={1}\n ROOT r = f32[", rows,
                             ",1024] add(x, bb)\n}\n");
       }},
      {"row reduce f32[n/1024,1024]->[n/1024]",
       [add](int64_t n) {
         const int64_t rows = n / 1024;
         return absl::StrCat("HloModule row_reduce\n", add, "ENTRY main {\n x = f32[", rows,
                             ",1024] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[", rows,
                             "] reduce(x, z), dimensions={1}, to_apply=add\n}\n");
       }},
      {"column reduce f32[1024,n/1024]->[n/1024]",
       [add](int64_t n) {
         const int64_t cols = n / 1024;
         return absl::StrCat("HloModule column_reduce\n", add, "ENTRY main {\n x = f32[1024,", cols,
                             "] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[", cols,
                             "] reduce(x, z), dimensions={0}, to_apply=add\n}\n");
       }},
      {"transpose f32[n/4096,4096]",
       [](int64_t n) {
         const int64_t rows = n / 4096;
         return absl::StrCat("HloModule transpose\nENTRY main {\n x = f32[", rows,
                             ",4096] parameter(0)\n ROOT t = f32[4096,", rows,
                             "] transpose(x), dimensions={1,0}\n}\n");
       }},
  };
}

namespace {

// Milliseconds per operation: median over samples of `per_sample`
// back-to-back operations between two events.
absl::StatusOr<double> TimeLoops(const Options& o, int per_sample,
                                 const std::function<absl::StatusOr<double>()>& sample) {
  std::vector<double> ms;
  const Clock::time_point start = Clock::now();
  while (MoreSamples(o, ms.size(), start, o.min_time)) {
    HLOC_ASSIGN_OR_RETURN(double t, sample());
    ms.push_back(t / per_sample);
  }
  return Median(ms);
}

// A small instance of the same module, run and compared with the
// interpreter (the big one would take the interpreter too long).
std::string VerifySmall(const std::string& text, cuda::CudaDevice* device) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return absl::StrCat("parse: ", module.status().message());
  absl::StatusOr<std::vector<Literal>> args = PatternArguments(**module, 5);
  if (!args.ok()) return std::string(args.status().message());
  absl::StatusOr<Compiled> c =
      Compile(**module, gpu::TargetForDevice(device->info()), false, false);
  if (!c.ok()) return absl::StrCat("compile: ", c.status().message());
  absl::Status loaded = c->program->Load(device);
  if (!loaded.ok()) return absl::StrCat("load: ", loaded.message());
  absl::StatusOr<Literal> actual = c->program->Execute(*args);
  if (!actual.ok()) return absl::StrCat("run: ", actual.status().message());
  absl::StatusOr<Literal> expected = Evaluate(**module, *args);
  if (!expected.ok()) return absl::StrCat("interpreter: ", expected.status().message());
  ComparisonReport r =
      CompareLiterals(*expected, *actual, GpuTolerance(FirstArrayType(expected->shape()), false));
  return r.ok ? "ok" : absl::StrCat("MISMATCH: ", r.ToString());
}

}  // namespace

int RunBandwidth(const Options& o, cuda::CudaDevice* device) {
  const int64_t n = int64_t{1} << o.log2_elements;
  int failures = 0;
  CUdeviceptr copy_src = 0, copy_dst = 0;
  int64_t copy_capacity = 0;
  for (const BandwidthCase& bc : BandwidthCases()) {
    absl::StatusOr<std::string> line = [&]() -> absl::StatusOr<std::string> {
      HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(bc.text(n)));
      HLOC_ASSIGN_OR_RETURN(std::vector<Literal> args, PatternArguments(*module, o.seed));
      HLOC_ASSIGN_OR_RETURN(Compiled c,
                            Compile(*module, gpu::TargetForDevice(device->info()), false, false));
      HLOC_RETURN_IF_ERROR(c.program->Load(device));
      HLOC_RETURN_IF_ERROR(c.program->Execute(args).status());
      cuda::GpuExecutable& e = c.program->executable();
      int64_t bytes = 0;
      for (int64_t i = 0; i < e.num_parameters(); ++i) bytes += e.parameter_size(i);
      for (int64_t j = 0; j < e.num_outputs(); ++j) bytes += e.output_size(j);
      constexpr int kPerSample = 10;
      HLOC_ASSIGN_OR_RETURN(double ms,
                            TimeLoops(o, kPerSample, [&] { return e.TimeRuns(kPerSample); }));
      // The copy moves bytes/2 so that it reads and writes as many bytes.
      const int64_t half = (bytes / 2 + 255) / 256 * 256;
      if (half > copy_capacity) {
        if (copy_src != 0) HLOC_RETURN_IF_ERROR(device->Free(copy_src));
        if (copy_dst != 0) HLOC_RETURN_IF_ERROR(device->Free(copy_dst));
        copy_src = copy_dst = 0;
        HLOC_ASSIGN_OR_RETURN(copy_src, device->Allocate(half));
        HLOC_ASSIGN_OR_RETURN(copy_dst, device->Allocate(half));
        HLOC_RETURN_IF_ERROR(device->Memset(copy_src, 0, half));
        copy_capacity = half;
      }
      HLOC_ASSIGN_OR_RETURN(
          double copy_ms, TimeLoops(o, kPerSample, [&] {
            return device->TimeOnStream([&]() -> absl::Status {
              for (int i = 0; i < kPerSample; ++i) {
                HLOC_RETURN_IF_ERROR(device->CopyOnDevice(copy_dst, copy_src, half));
              }
              return absl::OkStatus();
            });
          }));
      const double gbs = bytes / (ms * 1e-3) / 1e9;
      const double copy_gbs = 2.0 * half / (copy_ms * 1e-3) / 1e9;
      return absl::StrCat(ReportFields(c), ", \"bytes\": ", bytes, ", \"median_us\": ", ms * 1e3,
                          ", \"gb_s\": ", gbs, ", \"copy_us\": ", copy_ms * 1e3,
                          ", \"copy_gb_s\": ", copy_gbs, ", \"ratio_to_copy\": ", gbs / copy_gbs,
                          ", \"verified\": ", JsonString(VerifySmall(bc.text(1 << 16), device)));
    }();
    if (line.ok()) {
      std::printf("{\"bandwidth\": %s, \"elements\": %lld, %s}\n", JsonString(bc.name).c_str(),
                  static_cast<long long>(n), line->c_str());
    } else {
      ++failures;
      std::printf("{\"bandwidth\": %s, \"error\": %s}\n", JsonString(bc.name).c_str(),
                  JsonString(line.status().ToString()).c_str());
    }
    std::fflush(stdout);
  }
  if (copy_src != 0) device->Free(copy_src).IgnoreError();
  if (copy_dst != 0) device->Free(copy_dst).IgnoreError();
  return failures == 0 ? 0 : 1;
}

// ------------------------------------------------------------ gemm

std::vector<GemmCase> GemmCases(bool quick) {
  std::vector<GemmCase> cases = {
      {"", "f32", 1, 1024, 1024, 1024, false, false},
      {"", "f32", 1, 4096, 4096, 4096, false, false},
      {"", "f32", 1, 4096, 4096, 4096, false, true},
      {"", "bf16", 1, 1024, 1024, 1024, false, false},
      {"", "bf16", 1, 4096, 4096, 4096, false, false},
      {"", "f16", 1, 1024, 1024, 1024, false, false},
      {"", "f16", 1, 4096, 4096, 4096, false, false},
      {"", "bf16", 32, 1024, 1024, 1024, false, false},
      {"", "bf16", 1, 4096, 4096, 4096, true, false},
  };
  for (GemmCase& c : cases) {
    if (quick) {
      c.m = std::min<int64_t>(c.m, 1024);
      c.n = std::min<int64_t>(c.n, 1024);
      c.k = std::min<int64_t>(c.k, 1024);
      c.batch = std::min<int64_t>(c.batch, 4);
    }
    // "bf16 32x 1024x1024x1024 +bias+relu": type, batch, m x n x k, extras.
    c.name = absl::StrCat(c.type, " ", c.batch > 1 ? absl::StrCat(c.batch, "x ") : "", c.m, "x",
                          c.n, "x", c.k, c.tf32 ? " tf32" : "", c.bias_relu ? " +bias+relu" : "");
  }
  return cases;
}

std::string GemmText(const GemmCase& g) {
  const std::string t = g.type;
  const std::string b = g.batch > 1 ? absl::StrCat(g.batch, ",") : "";
  const std::string out = absl::StrCat(t, "[", b, g.m, ",", g.n, "]");
  std::string text =
      absl::StrCat("HloModule gemm\nENTRY main {\n a = ", t, "[", b, g.m, ",", g.k,
                   "] parameter(0)\n w = ", t, "[", b, g.k, ",", g.n, "] parameter(1)\n");
  const std::string dims = g.batch > 1 ? "lhs_batch_dims={0}, rhs_batch_dims={0}, "
                                         "lhs_contracting_dims={2}, rhs_contracting_dims={1}"
                                       : "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  const std::string root = g.bias_relu ? "" : "ROOT ";
  absl::StrAppend(&text, " ", root, "d = ", out, " dot(a, w), ", dims, "\n");
  if (g.bias_relu) {
    absl::StrAppend(&text, " bias = ", t, "[", g.n, "] parameter(2)\n bb = ", out,
                    " broadcast(bias), dimensions={", g.batch > 1 ? 2 : 1, "}\n s = ", out,
                    " add(d, bb)\n z = ", t, "[] constant(0)\n zb = ", out,
                    " broadcast(z), dimensions={}\n ROOT r = ", out, " maximum(s, zb)\n");
  }
  return text + "}\n";
}

namespace {

// cuBLAS, opened with dlopen: the baseline hloc's gemms are held against.
struct Cublas {
  std::shared_ptr<cuda::DynamicLibrary> library;
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  // Spelled out: in C++ the headers overload these two (a legacy
  // cudaDataType_t compute type), so decltype(&::cublasGemmEx) is ambiguous.
  using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType_t, int, const void*,
                                    cudaDataType_t, int, const void*, void*, cudaDataType_t, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  using BatchedGemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                           int, int, int, const void*, const void*, cudaDataType_t,
                                           int, long long, const void*, cudaDataType_t, int,
                                           long long, const void*, void*, cudaDataType_t, int,
                                           long long, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmFn gemm = nullptr;
  BatchedGemmFn gemm_batched = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  cublasHandle_t handle = nullptr;

  static absl::StatusOr<std::unique_ptr<Cublas>> Open(CUstream stream) {
    auto c = std::make_unique<Cublas>();
    HLOC_ASSIGN_OR_RETURN(c->library, cuda::DynamicLibrary::Open(
                                          "cuBLAS not available",
                                          {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}));
    auto get = [&](auto* fn, const char* name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(c->library->Symbol(name));
      return *fn != nullptr;
    };
    if (!get(&c->create, "cublasCreate_v2") || !get(&c->destroy, "cublasDestroy_v2") ||
        !get(&c->set_stream, "cublasSetStream_v2") || !get(&c->gemm, "cublasGemmEx") ||
        !get(&c->gemm_batched, "cublasGemmStridedBatchedEx") ||
        !get(&c->status_string, "cublasGetStatusString")) {
      return absl::NotFoundError(absl::StrCat(c->library->name(), " lacks a cuBLAS function"));
    }
    HLOC_RETURN_IF_ERROR(c->Check(c->create(&c->handle), "cublasCreate"));
    HLOC_RETURN_IF_ERROR(c->Check(c->set_stream(c->handle, reinterpret_cast<cudaStream_t>(stream)),
                                  "cublasSetStream"));
    return c;
  }
  ~Cublas() {
    if (handle != nullptr) destroy(handle);
  }
  absl::Status Check(cublasStatus_t s, const char* call) const {
    if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(call, ": ", status_string ? status_string(s) : "", " (",
                                            static_cast<int>(s), ")"));
  }
};

cudaDataType_t CudaType(const std::string& type) {
  if (type == "bf16") return CUDA_R_16BF;
  if (type == "f16") return CUDA_R_16F;
  return CUDA_R_32F;
}

// The host side of the bias+relu epilogue, applied to cuBLAS's product so
// the two results can be compared.
void BiasRelu(const Literal& bias, Literal* out) {
  const int64_t n = bias.element_count();
  for (int64_t i = 0; i < out->element_count(); ++i) {
    out->SetFromDouble(i, std::max(0.0, out->GetAsDouble(i) + bias.GetAsDouble(i % n)));
  }
}

absl::StatusOr<std::string> BenchGemm(const GemmCase& g, const Options& o, cuda::CudaDevice* device,
                                      Cublas* cublas) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(GemmText(g)));
  HLOC_ASSIGN_OR_RETURN(std::vector<Literal> args, PatternArguments(*module, o.seed));
  HLOC_ASSIGN_OR_RETURN(Compiled c,
                        Compile(*module, gpu::TargetForDevice(device->info()), g.tf32, false));
  const gpu::GpuCompileReport& report = c.program->report();
  // The direct call uses the compute type of hloc's plan.
  bool tf32 = g.tf32 && std::string(g.type) == "f32";
  std::string plan = "no cuBLASLt call (inlined or kernels)";
  if (!report.gemms.empty()) {
    tf32 = report.gemms[0].second.compute_type() == "32F_FAST_TF32";
    plan = report.gemms[0].second.ToString();
  }
  HLOC_RETURN_IF_ERROR(c.program->Load(device));
  HLOC_ASSIGN_OR_RETURN(Literal ours, c.program->Execute(args));
  cuda::GpuExecutable& e = c.program->executable();

  const int64_t a_bytes = args[0].size_bytes(), w_bytes = args[1].size_bytes();
  const int64_t out_bytes = ours.size_bytes();
  HLOC_ASSIGN_OR_RETURN(CUdeviceptr a, device->Allocate(a_bytes));
  HLOC_ASSIGN_OR_RETURN(CUdeviceptr w, device->Allocate(w_bytes));
  HLOC_ASSIGN_OR_RETURN(CUdeviceptr d, device->Allocate(out_bytes));
  auto free_all = [&] {
    for (CUdeviceptr p : {a, w, d}) device->Free(p).IgnoreError();
  };
  absl::StatusOr<std::string> result = [&]() -> absl::StatusOr<std::string> {
    HLOC_RETURN_IF_ERROR(device->CopyToDevice(a, args[0].raw(), a_bytes));
    HLOC_RETURN_IF_ERROR(device->CopyToDevice(w, args[1].raw(), w_bytes));
    const float one = 1, zero = 0;
    const cudaDataType_t type = CudaType(g.type);
    const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    // Row-major out = a w is column-major out^T = w^T a^T.
    auto direct = [&]() -> absl::Status {
      if (g.batch == 1) {
        return cublas->Check(
            cublas->gemm(cublas->handle, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &one,
                         reinterpret_cast<const void*>(w), type, g.n,
                         reinterpret_cast<const void*>(a), type, g.k, &zero,
                         reinterpret_cast<void*>(d), type, g.n, compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
      }
      return cublas->Check(
          cublas->gemm_batched(cublas->handle, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &one,
                               reinterpret_cast<const void*>(w), type, g.n, g.k * g.n,
                               reinterpret_cast<const void*>(a), type, g.k, g.m * g.k, &zero,
                               reinterpret_cast<void*>(d), type, g.n, g.m * g.n, g.batch, compute,
                               CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
    };
    HLOC_RETURN_IF_ERROR(direct());
    Literal theirs(ours.shape());
    HLOC_RETURN_IF_ERROR(device->CopyToHost(theirs.mutable_raw(), d, out_bytes));
    HLOC_RETURN_IF_ERROR(device->Synchronize());
    if (g.bias_relu) BiasRelu(args[2], &theirs);
    // Both sum k products of k/64 values; they differ in order and, for
    // 16-bit outputs, in the last rounding.
    const double scale = std::sqrt(static_cast<double>(g.k)) / 3;
    const bool narrow = std::string(g.type) != "f32";
    const Tolerance tolerance{narrow ? 2e-2 : (tf32 ? 1e-2 : 1e-4),
                              scale * (narrow ? 2e-2 : (tf32 ? 1e-2 : 1e-5))};
    const ComparisonReport cmp = CompareLiterals(theirs, ours, tolerance);

    const double flops = 2.0 * g.batch * g.m * g.n * g.k;
    const int per_sample = flops > 1e11 ? 5 : 20;
    // Like hloc's program, the cuBLAS call is replayed as a CUDA graph, so
    // neither side pays cuBLAS's host overhead per call (small gemms would
    // otherwise measure the host); direct calls if capture is refused.
    absl::StatusOr<CUgraphExec> graph = device->CaptureGraph(direct);
    auto baseline = [&]() -> absl::Status {
      return graph.ok() ? device->LaunchGraph(*graph) : direct();
    };
    std::vector<double> ours_ms, theirs_ms;
    const Clock::time_point start = Clock::now();
    // Interleaved so clocks and temperature drift alike for both.
    absl::Status timed = absl::OkStatus();
    while (timed.ok() && MoreSamples(o, ours_ms.size(), start, o.min_time)) {
      absl::StatusOr<double> t = e.TimeRuns(per_sample);
      if (!t.ok()) {
        timed = t.status();
        break;
      }
      absl::StatusOr<double> u = device->TimeOnStream([&]() -> absl::Status {
        for (int i = 0; i < per_sample; ++i) HLOC_RETURN_IF_ERROR(baseline());
        return absl::OkStatus();
      });
      timed = u.status();
      if (timed.ok()) {
        ours_ms.push_back(*t / per_sample);
        theirs_ms.push_back(*u / per_sample);
      }
    }
    if (graph.ok()) device->DestroyGraph(*graph);
    HLOC_RETURN_IF_ERROR(timed);
    const double ours_t = Median(ours_ms), theirs_t = Median(theirs_ms);
    const double ours_tflops = flops / (ours_t * 1e-3) / 1e12;
    const double theirs_tflops = flops / (theirs_t * 1e-3) / 1e12;
    return absl::StrCat(ReportFields(c), ", \"plan\": ", JsonString(plan), ", \"compute\": \"",
                        tf32 ? "32F_FAST_TF32" : "32F", "\", \"flops\": ", flops,
                        ", \"hloc_us\": ", ours_t * 1e3, ", \"cublas_us\": ", theirs_t * 1e3,
                        ", \"hloc_tflops\": ", ours_tflops, ", \"cublas_tflops\": ", theirs_tflops,
                        ", \"ratio\": ", ours_tflops / theirs_tflops, ", \"baseline\": \"",
                        g.bias_relu ? "cublasGemmEx without epilogue" : "cublasGemmEx",
                        graph.ok() ? " (CUDA graph)" : " (direct calls)",
                        "\", \"matches_cublas\": ", cmp.ok ? "true" : "false",
                        ", \"max_abs_error\": ", cmp.max_abs_error);
  }();
  free_all();
  return result;
}

}  // namespace

int RunGemms(const Options& o, cuda::CudaDevice* device) {
  absl::StatusOr<std::unique_ptr<Cublas>> cublas = Cublas::Open(device->stream());
  if (!cublas.ok()) {
    std::printf("{\"gemm\": \"all\", \"error\": %s}\n",
                JsonString(cublas.status().ToString()).c_str());
    return 1;
  }
  int failures = 0;
  for (const GemmCase& g : GemmCases(o.quick)) {
    absl::StatusOr<std::string> line = BenchGemm(g, o, device, cublas->get());
    if (line.ok()) {
      std::printf("{\"gemm\": %s, \"batch\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, %s}\n",
                  JsonString(g.name).c_str(), static_cast<long long>(g.batch),
                  static_cast<long long>(g.m), static_cast<long long>(g.n),
                  static_cast<long long>(g.k), line->c_str());
    } else {
      ++failures;
      std::printf("{\"gemm\": %s, \"error\": %s}\n", JsonString(g.name).c_str(),
                  JsonString(line.status().ToString()).c_str());
    }
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace gpu_bench
}  // namespace hloc
