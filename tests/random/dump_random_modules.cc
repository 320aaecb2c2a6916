// Writes random modules (random_module.h) as HLO text, one file per seed:
//
//   dump_random_modules OUT_DIR FIRST_SEED COUNT [MAX_INSTRUCTIONS]
//
// OUT_DIR/random_<seed>.hlo. tests/random/make_xla_refs.sh feeds them to
// XLA:CPU (tests/xla_refs/make_refs.py) for reference results.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "hlo/text_printer.h"
#include "tests/random/random_module.h"

int main(int argc, char** argv) {
  int64_t first = 0, count = 0, max_instructions = 14;
  if ((argc != 4 && argc != 5) || !absl::SimpleAtoi(argv[2], &first) ||
      !absl::SimpleAtoi(argv[3], &count) ||
      (argc == 5 && !absl::SimpleAtoi(argv[4], &max_instructions)) || count < 0) {
    std::fprintf(stderr, "usage: %s OUT_DIR FIRST_SEED COUNT [MAX_INSTRUCTIONS]\n", argv[0]);
    return 2;
  }
  hloc::random_hlo::RandomModuleOptions options;
  options.max_instructions = static_cast<int>(max_instructions);
  for (int64_t seed = first; seed < first + count; ++seed) {
    const std::string path = absl::StrCat(argv[1], "/random_", seed, ".hlo");
    std::ofstream out(path);
    out << hloc::PrintModule(*hloc::random_hlo::GenerateRandomModule(
        static_cast<uint64_t>(seed), options));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
