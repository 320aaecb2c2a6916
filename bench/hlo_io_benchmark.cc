// Throughput of hloc's front end on XLA's mobilenet_v2 benchmark module
// (827 KB of HLO text): text parsing, verification, printing, and loading the
// same module from a serialized HloModuleProto (fast reader and reference
// path). Reports bytes/second. bench/proto_load_benchmark does other files.
//
//   HLOC_CORPUS_DIR=$PWD/../shared/corpus bazel run -c opt //bench:hlo_io_benchmark
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

const std::string& MobilenetText() {
  static const std::string* text = [] {
    const char* dir = std::getenv("HLOC_CORPUS_DIR");
    std::string path = std::string(dir ? dir : "../shared/corpus") +
                       "/xla/xla_tools_data_benchmarking_mobilenet_v2.hlo";
    std::ifstream in(path);
    std::ostringstream contents;
    contents << in.rdbuf();
    if (contents.str().empty()) {
      std::fprintf(stderr, "cannot read %s (set HLOC_CORPUS_DIR)\n", path.c_str());
      std::exit(1);
    }
    return new std::string(contents.str());
  }();
  return *text;
}

std::unique_ptr<HloModule> ParseOrDie(const std::string& text) {
  auto module = ParseHloModule(text);
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    std::exit(1);
  }
  return std::move(*module);
}

void BM_ParseText(benchmark::State& state) {
  const std::string& text = MobilenetText();
  for (auto _ : state) {
    auto module = ParseHloModule(text);
    benchmark::DoNotOptimize(module);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseText)->Unit(benchmark::kMillisecond);

void BM_Verify(benchmark::State& state) {
  auto module = ParseOrDie(MobilenetText());
  for (auto _ : state) {
    absl::Status status = VerifyModule(*module);
    benchmark::DoNotOptimize(status);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(MobilenetText().size()));
}
BENCHMARK(BM_Verify)->Unit(benchmark::kMillisecond);

void BM_PrintText(benchmark::State& state) {
  auto module = ParseOrDie(MobilenetText());
  int64_t bytes = 0;
  for (auto _ : state) {
    std::string text = PrintModule(*module);
    bytes += static_cast<int64_t>(text.size());
    benchmark::DoNotOptimize(text);
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_PrintText)->Unit(benchmark::kMillisecond);

// Serialized bytes -> IR with ModuleFromProtoBytes (the loader's path).
void BM_LoadProto(benchmark::State& state) {
  auto module = ParseOrDie(MobilenetText());
  auto proto = ModuleToProto(*module);
  std::string bytes = proto->SerializeAsString();
  state.counters["proto_bytes"] = static_cast<double>(bytes.size());
  for (auto _ : state) {
    auto loaded = ModuleFromProtoBytes(bytes);
    benchmark::DoNotOptimize(loaded);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_LoadProto)->Unit(benchmark::kMillisecond);

// BM_LoadProto without freeing the module inside the timed region: the
// part of the load that is reading, not the IR's destructors.
void BM_LoadProtoWithoutFree(benchmark::State& state) {
  auto module = ParseOrDie(MobilenetText());
  std::string bytes = ModuleToProto(*module)->SerializeAsString();
  for (auto _ : state) {
    auto loaded = ModuleFromProtoBytes(bytes);
    benchmark::DoNotOptimize(loaded);
    state.PauseTiming();
    loaded = nullptr;
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_LoadProtoWithoutFree)->Unit(benchmark::kMillisecond);

// A floor for any reader: copying the same module in memory (HloModule::Clone)
// and freeing the copy, with no decoding at all. Bytes are the proto's.
void BM_CloneModule(benchmark::State& state) {
  auto module = ParseOrDie(MobilenetText());
  const int64_t bytes = static_cast<int64_t>(ModuleToProto(*module)->ByteSizeLong());
  for (auto _ : state) {
    auto copy = module->Clone();
    benchmark::DoNotOptimize(copy);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_CloneModule)->Unit(benchmark::kMillisecond);

// The reference path: protobuf's generated messages, then ModuleFromProto.
void BM_LoadProtoReference(benchmark::State& state) {
  auto module = ParseOrDie(MobilenetText());
  std::string bytes = ModuleToProto(*module)->SerializeAsString();
  for (auto _ : state) {
    xla::HloModuleProto parsed;
    parsed.ParseFromString(bytes);
    auto loaded = ModuleFromProto(parsed);
    benchmark::DoNotOptimize(loaded);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_LoadProtoReference)->Unit(benchmark::kMillisecond);

// The protobuf library's share of BM_LoadProto: decoding the bytes only.
void BM_DecodeProtoOnly(benchmark::State& state) {
  auto module = ParseOrDie(MobilenetText());
  std::string bytes = ModuleToProto(*module)->SerializeAsString();
  for (auto _ : state) {
    xla::HloModuleProto parsed;
    parsed.ParseFromString(bytes);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_DecodeProtoOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hloc
