// Test support for the backend tests that run every module of XLA's corpus
// and compare with the reference interpreter (host_corpus_test,
// gpu_corpus_device_test): which modules a backend can be asked to run, the
// random arguments and the interpreter's answer for each, the tolerance for
// comparing, and the tally printed at the end. One set of skip rules, so
// the backends' corpus figures count the same modules.
#ifndef HLOC_HLO_TESTING_CORPUS_CASES_H_
#define HLOC_HLO_TESTING_CORPUS_CASES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "hlo/evaluator/compare.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {
namespace testdata {

struct CorpusCaseLimits {
  int64_t max_argument_bytes = int64_t{64} << 20;
  int64_t max_result_bytes = int64_t{64} << 20;
  double max_interpreter_seconds = 2.0;
  int64_t max_while_iterations = 100000;
  uint64_t seed = 11;
};

// One runnable module: its arguments and the interpreter's result. When
// `skip_reason` is set the module is not runnable (does not verify, rng,
// collectives, too large, the interpreter cannot run it or is too slow) and
// the other members are empty.
struct CorpusCase {
  std::string skip_reason;
  std::vector<Literal> arguments;
  Literal expected;
  Tolerance tolerance;  // For a backend whose dots/convolutions sum in another order.
};
CorpusCase PrepareCorpusCase(const HloModule& module, const CorpusCaseLimits& limits = {});

// "xla/FILE.hlo" for every corpus file under $HLOC_CORPUS_DIR, sorted; empty
// when the variable is unset.
std::vector<std::string> CorpusFileIds();

// The longest sum of products in `module` (dot contraction, convolution
// window times input features); 1 when there is none.
int64_t LongestContraction(const HloModule& module);

// Tolerance for a backend vs the interpreter: the absolute part grows with
// the contraction length (summation order differs).
Tolerance ContractionTolerance(PrimitiveType type, int64_t contraction);

// The loosest float type among the array leaves of `shape`.
PrimitiveType LoosestFloatType(const Shape& shape);

// Counts over the modules one test binary (or shard) ran, per mode.
struct CorpusTally {
  struct Mode {
    int ran = 0, matched = 0;
    std::map<std::string, int> notes;  // e.g. "used the interpreter fallback for sort" -> modules
    std::vector<std::string> failures;
  };
  int modules = 0, runnable = 0;
  std::map<std::string, int> skipped;  // reason -> modules
  std::map<std::string, Mode> modes;
  void Print(const std::string& title, std::ostream& out) const;
};

// Parses every module of the corpus file `file_id` ("xla/NAME.hlo" under
// $HLOC_CORPUS_DIR) and calls `check` with "xla/NAME.hlo#INDEX" and the module
// for each one that parses (the others count as skipped); returns the
// failures `check` added to any mode of `tally` meanwhile, or one failure
// when the file cannot be read.
std::vector<std::string> CheckCorpusFile(
    const std::string& file_id, CorpusTally* tally,
    const std::function<void(const std::string& id, const HloModule& module)>& check);

// A test name made of `file_id` (letters and digits; others become '_').
std::string CorpusTestName(const std::string& file_id);

}  // namespace testdata
}  // namespace hloc

#endif  // HLOC_HLO_TESTING_CORPUS_CASES_H_
