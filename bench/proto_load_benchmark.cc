// Proto loading throughput on files given on the command line: each
// HloModuleProto / HloProto / HloSnapshot file is loaded from memory with the
// fast reader (ModuleFromProtoBytes and friends) and with the reference path
// (protobuf's generated messages, then ModuleFromProto / SnapshotFromProto).
// Reports bytes/second of the file.
//
//   bazel run -c opt //bench:proto_load_benchmark -- $PWD/tests/xla_refs/*.snapshot.pb
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "benchmark/benchmark.h"
#include "hlo/proto_io.h"

namespace hloc {
namespace {

std::string ReadOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (!in || contents.str().empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return contents.str();
}

// Loads `bytes` as the file's kind; dies when it does not load.
void Load(const std::string& path, const std::string& bytes, bool fast) {
  const bool snapshot = absl::EndsWith(path, ".snapshot.pb");
  bool ok;
  if (snapshot) {
    if (fast) {
      ok = SnapshotFromProtoBytes(bytes).ok();
    } else {
      xla::HloSnapshot proto;
      ok = proto.ParseFromString(bytes) && SnapshotFromProto(proto).ok();
    }
  } else {
    if (fast) {
      ok = ModuleFromProtoBytes(bytes).ok();
    } else {
      xla::HloModuleProto proto;
      ok = proto.ParseFromString(bytes) && ModuleFromProto(proto).ok();
    }
  }
  if (!ok) {
    std::fprintf(stderr, "%s does not load\n", path.c_str());
    std::exit(1);
  }
}

void BM_Load(benchmark::State& state, const std::string& path, bool fast) {
  const std::string bytes = ReadOrDie(path);
  for (auto _ : state) Load(path, bytes, fast);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}

}  // namespace
}  // namespace hloc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    const std::string name = path.substr(path.find_last_of('/') + 1);
    for (bool fast : {true, false}) {
      benchmark::RegisterBenchmark((name + (fast ? "/fast" : "/reference")).c_str(),
                                   [path, fast](benchmark::State& state) {
                                     hloc::BM_Load(state, path, fast);
                                   })
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
