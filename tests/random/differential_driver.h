// The loop that random differential tests share (differential_test.cc on the
// host, gpu_differential_test.cc on CUDA): random modules by seed until a
// time or count budget is spent, each handed to a target's check; a failing
// seed is printed with the one command that reproduces it and shrunk to the
// smallest prefix of its entry that still fails.
//
// Budget from the environment: seeds HLOC_RANDOM_SEED, +1, ... (default 1)
// until HLOC_RANDOM_SECONDS pass or HLOC_RANDOM_COUNT modules are done
// (defaults: the test's); HLOC_RANDOM_MAX_INSTRUCTIONS (default 14) bounds each
// module; HLOC_RANDOM_NARROW_TYPES=0 leaves s4, u4 and the f8/f4 kinds out
// (RandomModuleOptions::narrow_types, default on here).
#ifndef HLOC_TESTS_RANDOM_DIFFERENTIAL_DRIVER_H_
#define HLOC_TESTS_RANDOM_DIFFERENTIAL_DRIVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "hlo/evaluator/compare.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "tests/random/random_module.h"

namespace hloc::random_hlo {

int64_t EnvInt(const char* name, int64_t fallback);

// Looser than DefaultTolerance: a random chain of transcendental ops and
// reductions in another order differs by more than one rounding.
Tolerance RandomTolerance(PrimitiveType type);

// Empty when equal within `tolerance_for(type)` (tuples element by element),
// else what differs.
std::string Difference(const Literal& expected, const Literal& actual,
                       const std::function<Tolerance(PrimitiveType)>& tolerance_for =
                           RandomTolerance);

// " name:count" for each entry, in order (opcode mixes and interpreter ops).
std::string CountsText(const std::map<std::string, int>& counts);

// The module with `root_name` as its entry root, dead code removed.
std::unique_ptr<HloModule> WithRoot(const HloModule& module, const std::string& root_name);

struct DifferentialRun {
  // "//tests/random:differential_test", for the reproduce line.
  std::string target;
  int64_t default_seconds = 75;
  int64_t default_count = 1000000;
  // Empty when the module passes on the target, else "path: what".
  std::function<std::string(const HloModule& module, uint64_t seed)> check;
};

struct DifferentialSummary {
  int64_t first_seed = 1;
  int64_t count = 0;
  int64_t instructions = 0;
  int64_t failures = 0;
  int64_t max_count = 0;  // HLOC_RANDOM_COUNT
  double seconds = 0;
  std::map<std::string, int> opcodes;
  RandomModuleOptions options;
  // "seeds 1..290, 290 modules (3010 instructions) in 75.0s, 0 failing".
  std::string ToString() const;
};

// Runs the budget; each failure (at most five) is a gtest failure with seed,
// reproduce command, shrunk and whole module.
DifferentialSummary RunDifferential(const DifferentialRun& run);

}  // namespace hloc::random_hlo

#endif  // HLOC_TESTS_RANDOM_DIFFERENTIAL_DRIVER_H_
