// Times the evaluator on one module file: random arguments for text or
// module protos, the recorded arguments (and a comparison with the recorded
// result) for HloSnapshot files.
//   evaluate_benchmark FILE [--threads=N]
#include <chrono>
#include <cstdio>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [--threads=N]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  // Keep freed multi-hundred-megabyte arrays in the heap for reuse instead
  // of returning them to the kernel (each fresh mapping costs page faults).
  if (std::getenv("HLOC_EVAL_NO_MALLOPT") == nullptr) {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);
  }
  hloc::EvaluatorOptions options;
  hloc::EvaluatorProfile profile;
  bool want_profile = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) options.num_threads = std::atoi(argv[i] + 10);
    if (std::strcmp(argv[i], "--profile") == 0) want_profile = true;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<hloc::HloModule> module;
  std::vector<hloc::Literal> args;
  std::optional<hloc::Literal> expected;
  if (path.size() > 12 && path.substr(path.size() - 12) == ".snapshot.pb") {
    auto snapshot = hloc::LoadSnapshotFromFile(path);
    if (!snapshot.ok()) {
      std::fprintf(stderr, "%s\n", snapshot.status().ToString().c_str());
      return 1;
    }
    module = std::move(snapshot->module);
    args = std::move(snapshot->arguments);
    expected = std::move(snapshot->result);
  } else {
    auto loaded = hloc::LoadModuleFromFile(path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return 1;
    }
    module = *std::move(loaded);
    auto random = hloc::MakeRandomArguments(*module, 1);
    if (!random.ok()) {
      std::fprintf(stderr, "%s\n", random.status().ToString().c_str());
      return 1;
    }
    args = *std::move(random);
  }
  if (want_profile) options.profile = &profile;
  auto t1 = std::chrono::steady_clock::now();
  auto result = hloc::Evaluate(*module, args, options);
  auto t2 = std::chrono::steady_clock::now();
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("load+args %.2f s, evaluate %.2f s\n",
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  if (want_profile) {
    std::map<std::string, std::pair<double, int>> by_opcode;
    for (const auto& e : profile.entries) {
      auto& slot = by_opcode[std::string(hloc::HloOpcodeName(e.instruction->opcode()))];
      slot.first += e.seconds;
      ++slot.second;
    }
    for (const auto& [name, v] : by_opcode) {
      std::printf("  %-24s %8.2f s  %6d\n", name.c_str(), v.first, v.second);
    }
    std::sort(profile.entries.begin(), profile.entries.end(),
              [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
    for (size_t i = 0; i < profile.entries.size() && i < 25; ++i) {
      const auto& e = profile.entries[i];
      std::string text = e.instruction->ToString();
      if (text.size() > 260) text.resize(260);
      std::printf("  %6.2f s  %s\n", e.seconds, text.c_str());
    }
  }
  if (expected) {
    std::printf("%s\n", hloc::CompareLiterals(*expected, *result).ToString().c_str());
  }
  return 0;
}
