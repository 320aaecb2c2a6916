// argmax as TF and JAX lower it: a variadic reduce of (value, iota) whose
// result is a (max, index) tuple. When the reduced input has other readers
// (x * 2, a softmax), multi-output fusion sees a tuple-valued kernel beside
// other kernels; it must leave it out (on the record), never fail the
// pipeline. Each module goes through the whole host pipeline and runs on the
// host, checked against the interpreter on the unoptimized module.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host/host_pipeline.h"
#include "backend/host/run_on_host.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "passes/fusion/fusion_ledger.h"

namespace hloc {
namespace {

constexpr char kArgmaxComparator[] = R"(
argmax_step {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  take_a = pred[] or(gt, tie)
  v = f32[] select(take_a, a, b)
  i = s32[] select(take_a, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

max_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
)";

// The argmax of x over its rows, plus `extra` (instructions reading x) and
// the entry's root tuple.
std::string ArgmaxModule(const std::string& extra, const std::string& root) {
  return absl::StrCat("HloModule argmax\n", kArgmaxComparator, R"(
ENTRY main {
  x = f32[8,32] parameter(0)
  iota = s32[8,32] iota(), iota_dimension=1
  neg_inf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[8], s32[8]) reduce(x, iota, neg_inf, zero), dimensions={1}, to_apply=argmax_step
  index = s32[8] get-tuple-element(r), index=1
  value = f32[8] get-tuple-element(r), index=0
)",
                      extra, "  ROOT out = ", root, "\n}\n");
}

struct ArgmaxCase {
  const char* name;
  std::string hlo;
};

std::vector<ArgmaxCase> Cases() {
  return {
      {"alone", ArgmaxModule("", "(s32[8]) tuple(index)")},
      {"times_two", ArgmaxModule("  two = f32[] constant(2)\n"
                                 "  twos = f32[8,32] broadcast(two), dimensions={}\n"
                                 "  doubled = f32[8,32] multiply(x, twos)\n",
                                 "(s32[8], f32[8,32]) tuple(index, doubled)")},
      {"value_and_times_two",
       ArgmaxModule("  two = f32[] constant(2)\n"
                    "  twos = f32[8,32] broadcast(two), dimensions={}\n"
                    "  doubled = f32[8,32] multiply(x, twos)\n",
                    "(s32[8], f32[8], f32[8,32]) tuple(index, value, doubled)")},
      {"softmax", ArgmaxModule("  neg_inf2 = f32[] constant(-inf)\n"
                               "  m = f32[8] reduce(x, neg_inf2), dimensions={1}, to_apply=max_f32\n"
                               "  mb = f32[8,32] broadcast(m), dimensions={0}\n"
                               "  shifted = f32[8,32] subtract(x, mb)\n"
                               "  e = f32[8,32] exponential(shifted)\n"
                               "  zero_f = f32[] constant(0)\n"
                               "  s = f32[8] reduce(e, zero_f), dimensions={1}, to_apply=add_f32\n"
                               "  sb = f32[8,32] broadcast(s), dimensions={0}\n"
                               "  softmax = f32[8,32] divide(e, sb)\n",
                               "(s32[8], f32[8,32]) tuple(index, softmax)")},
  };
}

void PrintTo(const ArgmaxCase& c, std::ostream* os) { *os << c.name; }

class ArgmaxFusionTest : public ::testing::TestWithParam<ArgmaxCase> {};

TEST_P(ArgmaxFusionTest, HostPipelineAndRunMatchInterpreter) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(GetParam().hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(**module, 3);
  ASSERT_TRUE(arguments.ok()) << arguments.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, *arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();

  std::unique_ptr<HloModule> optimized = (*module)->Clone();
  FusionLedger ledger;
  absl::StatusOr<bool> changed = host::OptimizeForHost(*optimized, {}, &ledger);
  ASSERT_TRUE(changed.ok()) << changed.status();
  absl::StatusOr<Literal> actual = RunOnHost(*optimized, *arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ComparisonReport report = CompareLiterals(*expected, *actual);
  EXPECT_TRUE(report.ok) << report.ToString();
}

INSTANTIATE_TEST_SUITE_P(Argmax, ArgmaxFusionTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The multi-output pass says why the argmax kernel took no part.
TEST(ArgmaxFusionLedger, TupleValuedKernelIsDeclinedOnTheRecord) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(Cases()[1].hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  FusionLedger ledger;
  ASSERT_TRUE(host::OptimizeForHost(**module, {}, &ledger).ok());
  bool declined = false;
  for (const LedgerEntry& entry : ledger.entries()) {
    if (entry.pass == "multi-output-fusion" && !entry.accepted && entry.rule == "tuple-value") {
      declined = true;
    }
  }
  EXPECT_TRUE(declined) << ledger.ToText();
}

}  // namespace
}  // namespace hloc
