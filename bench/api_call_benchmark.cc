// Per-call cost of running a compiled module through the C++ API: the floor
// under every embedding (hloc.jax.jit's XLA FFI handler calls ExecuteInto).
// A two-input f32[8] add, as in bench/api_overhead.py.
//   bazel run -c opt //bench:api_call_benchmark
#include <memory>
#include <vector>

#include "api/hloc.h"
#include "benchmark/benchmark.h"

namespace {

constexpr char kAdd[] = R"(
HloModule add
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  ROOT s = f32[8] add(x, y)
})";

std::shared_ptr<hloc::api::Executable> CompileAdd(hloc::api::Backend backend) {
  auto client = hloc::api::Client::Create();
  if (!client.ok()) return nullptr;
  hloc::api::CompileOptions options;
  options.backend = backend;
  auto executable = (*client)->Compile(hloc::api::ModuleSource::Text(kAdd), options);
  return executable.ok() ? *executable : nullptr;
}

void BM_ExecuteInto(benchmark::State& state, hloc::api::Backend backend) {
  std::shared_ptr<hloc::api::Executable> executable = CompileAdd(backend);
  if (executable == nullptr) {
    state.SkipWithError("compile failed");
    return;
  }
  std::vector<float> x(8, 1.0f), y(8, 2.0f), out(8);
  const int64_t dims[] = {8};
  const hloc::api::ArrayView arguments[] = {
      {xla::F32, dims, x.data()}, {xla::F32, dims, y.data()}};
  const hloc::api::ArrayView results[] = {{xla::F32, dims, out.data()}};
  const hloc::api::ExecuteOptions options;
  for (auto _ : state) {
    absl::Status status = executable->ExecuteInto(arguments, results, options);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK_CAPTURE(BM_ExecuteInto, host, hloc::api::Backend::kHost);

void BM_Execute(benchmark::State& state) {
  std::shared_ptr<hloc::api::Executable> executable = CompileAdd(hloc::api::Backend::kHost);
  if (executable == nullptr) {
    state.SkipWithError("compile failed");
    return;
  }
  std::vector<float> x(8, 1.0f), y(8, 2.0f);
  auto a = hloc::api::Buffer::WrapHost(xla::F32, {8}, x.data());
  auto b = hloc::api::Buffer::WrapHost(xla::F32, {8}, y.data());
  if (!a.ok() || !b.ok()) {
    state.SkipWithError("wrap failed");
    return;
  }
  const std::vector<hloc::api::Buffer> arguments = {*a, *b};
  for (auto _ : state) {
    auto results = executable->Execute(arguments);
    if (!results.ok()) {
      state.SkipWithError(std::string(results.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(results->data());
  }
}
BENCHMARK(BM_Execute);

}  // namespace

BENCHMARK_MAIN();
