// Helpers for host backend tests: parse HLO text, run it on the host and in
// the interpreter, and compare bit for bit (NaNs equal whatever their
// payload) or within a tolerance.
#ifndef HLOC_BACKEND_HOST_HOST_TEST_UTIL_H_
#define HLOC_BACKEND_HOST_HOST_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {
namespace host_testing {

// One compiler for a whole test binary, so its kernel cache is shared.
std::shared_ptr<host::KernelCompiler> SharedCompiler();

// Host options for tests: the shared compiler, no interpreter fallback
// unless `allow_fallback`, two threads and a low threshold for splitting
// kernels, so parallel execution is exercised on small inputs too.
RunOnHostOptions TestOptions(bool allow_fallback = false);

// `options` with a shared compiler whose transcendental functions call libm
// (KernelCompilerOptions::exact_math), bit for bit with the interpreter: for
// tests about something else than exp/tanh/... accuracy.
RunOnHostOptions WithExactMath(RunOnHostOptions options);

// A literal from HLO text such as "f32[3] {1, -0, nan}".
Literal ParseLiteralText(absl::string_view text);

// Equal shapes and element bits, except that any NaN equals any NaN.
::testing::AssertionResult SameBits(const Literal& expected, const Literal& actual);

struct Outcome {
  absl::Status status;
  Literal expected;  // Interpreter.
  Literal actual;    // Host.
};
// Parses `hlo`, runs it in the interpreter and on the host.
Outcome RunBoth(absl::string_view hlo, const std::vector<Literal>& args,
                const RunOnHostOptions& options = TestOptions());

// Host result equals the interpreter's bit for bit.
void ExpectExact(absl::string_view hlo, const std::vector<Literal>& args,
                 const RunOnHostOptions& options = TestOptions());
// Float results within `max_ulps` units in the last place of the
// interpreter's, in the element type (f32, f64, f16, bf16); NaN, infinities
// and two zeros must match exactly (sign included). Other types: bit for bit.
::testing::AssertionResult WithinUlps(const Literal& expected, const Literal& actual,
                                      int64_t max_ulps);
void ExpectWithinUlps(absl::string_view hlo, const std::vector<Literal>& args, int64_t max_ulps,
                      const RunOnHostOptions& options = TestOptions());
// Random arguments (seeded) for every entry parameter of `hlo`; a parse
// or argument failure fails the test and gives none.
std::vector<Literal> RandomArgs(absl::string_view hlo, uint64_t seed = 1);

// `hlo` through the host pipeline (OptimizeForHost), then on the host,
// bit for bit against the interpreter on the module as written.
void ExpectExactAfterPipeline(absl::string_view hlo, const std::vector<Literal>& args,
                              const RunOnHostOptions& options = TestOptions());

// Host result within `tolerance` of the interpreter's.
void ExpectClose(absl::string_view hlo, const std::vector<Literal>& args,
                 const Tolerance& tolerance = {}, const RunOnHostOptions& options = TestOptions());

}  // namespace host_testing
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_HOST_TEST_UTIL_H_
