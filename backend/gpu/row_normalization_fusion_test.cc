// RowNormalizationFusion and AnalyzeRowNormalization on small modules: the
// standard fusion pipeline first (one fusion per reduction), then the pass;
// accepted groups become one kCustom fusion marked row_normalization that
// computes what the module computed, refused ones stay as they were.
#include "backend/gpu/row_normalization_fusion.h"

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_test_modules.h"
#include "backend/gpu/gpu_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/verifier.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace gpu {
namespace {

struct Counts {
  int fusions = 0;
  int row_normalizations = 0;
};

Counts CountFusions(const HloModule& module) {
  Counts counts;
  module.entry()->ForEachInstruction([&](const HloInstruction* hlo) {
    if (hlo->opcode() != HloOpcode::kFusion) return;
    ++counts.fusions;
    if (IsRowNormalizationFusion(*hlo)) ++counts.row_normalizations;
  });
  return counts;
}

namespace mods = test_modules;

// A module `name` with the f32 reducers max_f32 and add_f32 and `entry`.
std::string WithReducers(absl::string_view name, absl::string_view entry) {
  return absl::StrCat("HloModule ", name, "\n", mods::Binary("max_f32", "maximum", "f32"),
                      mods::Binary("add_f32", "add", "f32"), entry);
}

// Fuses `text` with the standard pipeline, runs the pass, checks the module
// still verifies and computes the same values; returns the counts after.
Counts FuseAndCheck(const std::string& text, FusionLedger* ledger = nullptr,
                    RowNormalizationLimits limits = {}) {
  std::unique_ptr<HloModule> module = ParseForTest(text);
  if (module == nullptr) return {};
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(*module, 7);
  EXPECT_TRUE(args.ok()) << args.status();
  absl::StatusOr<Literal> expected = Evaluate(*module, *args);
  EXPECT_TRUE(expected.ok()) << expected.status();
  RunPipelineForTest(*module, "fusion");
  FusionLedger local;
  if (ledger == nullptr) ledger = &local;
  RowNormalizationFusion pass(limits, ledger);
  absl::StatusOr<bool> changed = pass.Run(*module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  for (const LedgerEntry* e : ledger->Find(RowNormalizationFusion::kPassName, "")) {
    std::printf("%s %s: %s\n", e->accepted ? "merged" : "refused", e->result.c_str(),
                e->reason.c_str());
  }
  absl::Status verified = VerifyModule(*module);
  EXPECT_TRUE(verified.ok()) << verified;
  absl::StatusOr<Literal> actual = Evaluate(*module, *args);
  EXPECT_TRUE(actual.ok()) << actual.status();
  if (expected.ok() && actual.ok()) {
    ComparisonReport report = CompareLiterals(*expected, *actual);
    EXPECT_TRUE(report.ok) << report.ToString();
  }
  return CountFusions(*module);
}

// Softmax over rows of 256.
std::string Softmax() {
  return WithReducers("softmax",
                      mods::Softmax("ENTRY main", "f32", 4, 256, "max_f32", "add_f32"));
}

TEST(RowNormalizationFusion, SoftmaxBecomesOneFusion) {
  FusionLedger ledger;
  Counts counts = FuseAndCheck(Softmax(), &ledger);
  EXPECT_EQ(counts.fusions, 1);
  EXPECT_EQ(counts.row_normalizations, 1);
  EXPECT_FALSE(ledger.Find(RowNormalizationFusion::kPassName, "").empty());
}

TEST(RowNormalizationFusion, LayerNormWithScaleAndBias) {
  Counts counts = FuseAndCheck(WithReducers("layer_norm", R"(ENTRY main {
  x = f32[2,3,64] parameter(0)
  g = f32[64] parameter(1)
  bias = f32[64] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(64)
  nb = f32[2,3] broadcast(n), dimensions={}
  sum = f32[2,3] reduce(x, zero), dimensions={2}, to_apply=add_f32
  mean = f32[2,3] divide(sum, nb)
  meanb = f32[2,3,64] broadcast(mean), dimensions={0,1}
  c = f32[2,3,64] subtract(x, meanb)
  sq = f32[2,3,64] multiply(c, c)
  var_sum = f32[2,3] reduce(sq, zero), dimensions={2}, to_apply=add_f32
  var = f32[2,3] divide(var_sum, nb)
  eps = f32[] constant(1e-5)
  epsb = f32[2,3] broadcast(eps), dimensions={}
  ve = f32[2,3] add(var, epsb)
  r = f32[2,3] rsqrt(ve)
  r1 = f32[2,1,3] reshape(r)
  r2 = f32[2,3] reshape(r1)
  rb = f32[2,3,64] broadcast(r2), dimensions={0,1}
  norm = f32[2,3,64] multiply(c, rb)
  gb = f32[2,3,64] broadcast(g), dimensions={2}
  scaled = f32[2,3,64] multiply(norm, gb)
  bb = f32[2,3,64] broadcast(bias), dimensions={2}
  ROOT out = f32[2,3,64] add(scaled, bb)
}
)"));
  EXPECT_EQ(counts.fusions, 1);
  EXPECT_EQ(counts.row_normalizations, 1);
}

TEST(RowNormalizationFusion, RefusesDifferentRowDimensions) {
  // The second reduction reduces the other dimension.
  Counts counts = FuseAndCheck(WithReducers("two_axes", R"(ENTRY main {
  x = f32[16,32] parameter(0)
  zero = f32[] constant(0)
  rs = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f32
  rb = f32[16,32] broadcast(rs), dimensions={0}
  y = f32[16,32] subtract(x, rb)
  cs = f32[32] reduce(y, zero), dimensions={0}, to_apply=add_f32
  cb = f32[16,32] broadcast(cs), dimensions={1}
  ROOT out = f32[16,32] divide(y, cb)
}
)"));
  EXPECT_EQ(counts.row_normalizations, 0);
  EXPECT_GT(counts.fusions, 1);
}

TEST(RowNormalizationFusion, RefusesAReductionReadOtherThanByABroadcast) {
  // The row sums are transposed into a column vector and broadcast across
  // rows: not along the row they came from.
  std::unique_ptr<HloModule> module =
      ParseForTest(WithReducers("not_a_broadcast", R"(ENTRY main {
  x = f32[32,32] parameter(0)
  zero = f32[] constant(0)
  s = f32[32] reduce(x, zero), dimensions={1}, to_apply=add_f32
  sb = f32[32,32] broadcast(s), dimensions={1}
  ROOT y = f32[32,32] subtract(x, sb)
}
)"));
  ASSERT_NE(module, nullptr);
  // Unfused: the analysis says why.
  absl::StatusOr<RowNormalizationPlan> plan = AnalyzeRowNormalization(*module->entry());
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "other than along the row"))
      << plan.status();
  Counts counts = FuseAndCheck(WithReducers("not_a_broadcast", R"(ENTRY main {
  x = f32[32,32] parameter(0)
  zero = f32[] constant(0)
  s = f32[32] reduce(x, zero), dimensions={1}, to_apply=add_f32
  sb = f32[32,32] broadcast(s), dimensions={1}
  e = f32[32,32] exponential(x)
  t = f32[32,32] subtract(e, sb)
  ROOT y = f32[32,32] transpose(t), dimensions={1,0}
}
)"));
  EXPECT_EQ(counts.row_normalizations, 0);
}

TEST(RowNormalizationFusion, RefusesRowsTooLong) {
  RowNormalizationLimits limits;
  limits.max_row_length = 128;
  Counts counts = FuseAndCheck(Softmax(), nullptr, limits);  // Rows of 256.
  EXPECT_EQ(counts.row_normalizations, 0);
  EXPECT_GT(counts.fusions, 1);
}

TEST(RowNormalizationAnalysis, PlainReductionIsLeftToTheReductionEmitter) {
  std::unique_ptr<HloModule> module = ParseForTest(WithReducers("plain", R"(ENTRY main {
  x = f32[8,64] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[8] reduce(x, zero), dimensions={1}, to_apply=add_f32
}
)"));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<RowNormalizationPlan> plan = AnalyzeRowNormalization(*module->entry());
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "plain reduction")) << plan.status();
}

TEST(RowNormalizationAnalysis, SoftmaxPlan) {
  std::unique_ptr<HloModule> module = ParseForTest(Softmax());
  ASSERT_NE(module, nullptr);
  absl::StatusOr<RowNormalizationPlan> plan = AnalyzeRowNormalization(*module->entry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows, 4);
  EXPECT_EQ(plan->row_length, 256);
  EXPECT_EQ(plan->reductions.size(), 2u);
  EXPECT_TRUE(plan->chained);
  EXPECT_TRUE(plan->broadcasts_back);
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
