// LibraryOperandSlices: per-expert weight slices move into the gemm calls'
// bodies (the call reads the whole array), through a reshape, for both
// operands and batched gemms; strided, non-contiguous and column slices, and
// operands the body uses beyond the dot, stay; a shared body is cloned; the
// interpreter gives the same bits; a second run changes nothing. Also
// ContiguousSliceStart (hlo/shape_util.h) on its own.
#include "passes/outlining/library_operand_slices.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/shape_util.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/outlining/library_patterns.h"
#include "passes/outlining/outlining_test_helpers.h"

namespace hloc {
namespace {

using outlining_testing::FindInstruction;
using outlining_testing::LibraryCalls;
using outlining_testing::Outline;
using outlining_testing::ParseOrDie;

struct Moved {
  std::unique_ptr<HloModule> module;
  int64_t moved = 0;
};

// Outlines the default patterns, then runs the pass (twice: the second must
// change nothing); checks the interpreter's bits against the original.
Moved OutlineAndMove(absl::string_view text) {
  Moved result;
  result.module = ParseOrDie(text);
  if (result.module == nullptr) return result;
  FusionLedger ledger;
  Outline(*result.module, &ledger, DefaultLibraryPatterns(), LibraryOutliningOptions{});
  LibraryOperandSlices pass;
  absl::StatusOr<bool> changed = pass.Run(*result.module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  result.moved = pass.operands_moved();
  EXPECT_EQ(changed.value_or(false), result.moved > 0);
  absl::Status valid = VerifyModule(*result.module);
  EXPECT_TRUE(valid.ok()) << valid << "\n" << PrintModule(*result.module);
  absl::StatusOr<bool> again = pass.Run(*result.module);
  EXPECT_TRUE(again.ok() && !*again) << PrintModule(*result.module);

  std::unique_ptr<HloModule> original = ParseOrDie(text);
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*original, 5);
  EXPECT_TRUE(arguments.ok()) << arguments.status();
  if (!arguments.ok()) return result;
  absl::StatusOr<Literal> before = Evaluate(*original, *arguments);
  absl::StatusOr<Literal> after = Evaluate(*result.module, *arguments);
  EXPECT_TRUE(before.ok() && after.ok());
  if (before.ok() && after.ok()) {
    Tolerance exact;
    exact.rtol = 0;
    exact.atol = 0;
    ComparisonReport report = CompareLiterals(*before, *after, exact);
    EXPECT_TRUE(report.ok) << report.ToString();
  }
  return result;
}

// Two experts as JAX writes w[e] for a static e: slice, then reshape.
constexpr char kExperts[] = R"(
HloModule m
ENTRY e {
  x = f32[6,16] parameter(0)
  w = f32[3,16,8] parameter(1)
  s0 = f32[1,16,8] slice(w), slice={[0:1], [0:16], [0:8]}
  w0 = f32[16,8] reshape(s0)
  s2 = f32[1,16,8] slice(w), slice={[2:3], [0:16], [0:8]}
  w2 = f32[16,8] reshape(s2)
  d0 = f32[6,8] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[6,8] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[6,8], f32[6,8]) tuple(d0, d2)
})";

TEST(LibraryOperandSlices, ExpertWeightSlicesMoveIntoTheCalls) {
  Moved m = OutlineAndMove(kExperts);
  ASSERT_NE(m.module, nullptr);
  EXPECT_EQ(m.moved, 2);
  std::vector<HloInstruction*> calls = LibraryCalls(*m.module);
  ASSERT_EQ(calls.size(), 2u);
  for (HloInstruction* call : calls) {
    EXPECT_EQ(call->operand(1)->name(), "w") << call->ToString();
    const HloComputation* body = call->to_apply();
    EXPECT_EQ(body->parameter(1)->shape().dimensions(), (std::vector<int64_t>{3, 16, 8}));
  }
  // The caller's slices and reshapes are gone.
  EXPECT_EQ(FindInstruction(*m.module, "s0"), nullptr);
  EXPECT_EQ(FindInstruction(*m.module, "w2"), nullptr);
}

TEST(LibraryOperandSlices, BothOperandsAndBatchedGemms) {
  Moved m = OutlineAndMove(R"(
HloModule m
ENTRY e {
  xs = f32[4,2,6,16] parameter(0)
  w = f32[5,2,16,8] parameter(1)
  sx = f32[1,2,6,16] slice(xs), slice={[1:2], [0:2], [0:6], [0:16]}
  x = f32[2,6,16] reshape(sx)
  sw = f32[2,2,16,8] slice(w), slice={[3:5], [0:2], [0:16], [0:8]}
  ww = f32[4,16,8] reshape(sw)
  wb = f32[2,16,8] slice(ww), slice={[2:4], [0:16], [0:8]}
  ROOT d = f32[2,6,8] dot(x, wb), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  ASSERT_NE(m.module, nullptr);
  // x is moved; wb's chain has a slice of a reshape of a slice, and only the
  // last slice is taken (its array is ww, the reshape).
  EXPECT_EQ(m.moved, 2);
  std::vector<HloInstruction*> calls = LibraryCalls(*m.module);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->operand(0)->name(), "xs");
  EXPECT_EQ(calls[0]->operand(1)->name(), "ww");
}

TEST(LibraryOperandSlices, NonContiguousSlicesStay) {
  Moved m = OutlineAndMove(R"(
HloModule m
ENTRY e {
  x = f32[6,16] parameter(0)
  w = f32[16,20] parameter(1)
  cols = f32[16,8] slice(w), slice={[0:16], [4:12]}
  w3 = f32[3,32,8] parameter(2)
  every_other = f32[1,16,8] slice(w3), slice={[1:2], [0:32:2], [0:8]}
  r = f32[16,8] reshape(every_other)
  d0 = f32[6,8] dot(x, cols), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[6,8] dot(x, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[6,8], f32[6,8]) tuple(d0, d1)
})");
  ASSERT_NE(m.module, nullptr);
  EXPECT_EQ(m.moved, 0);
}

TEST(LibraryOperandSlices, ContiguousSliceStart) {
  Shape s(xla::F32, {4, 3, 5});
  s.set_layout(Layout::RowMajor(3));
  EXPECT_EQ(ContiguousSliceStart(s, {2, 0, 0}, {3, 3, 5}, {1, 1, 1}), 30);
  EXPECT_EQ(ContiguousSliceStart(s, {1, 1, 0}, {2, 3, 5}, {1, 1, 1}), 20);
  EXPECT_EQ(ContiguousSliceStart(s, {1, 2, 3}, {2, 3, 4}, {7, 7, 7}), 28);  // one element
  EXPECT_EQ(ContiguousSliceStart(s, {0, 0, 0}, {4, 3, 5}, {1, 1, 1}), 0);
  EXPECT_FALSE(ContiguousSliceStart(s, {0, 1, 0}, {4, 2, 5}, {1, 1, 1}).has_value());
  EXPECT_FALSE(ContiguousSliceStart(s, {1, 0, 1}, {2, 3, 5}, {1, 1, 1}).has_value());
  EXPECT_FALSE(ContiguousSliceStart(s, {0, 0, 0}, {4, 3, 5}, {2, 1, 1}).has_value());
  EXPECT_FALSE(ContiguousSliceStart(s, {0, 0, 0}, {5, 3, 5}, {1, 1, 1}).has_value());
  Shape column_major = s;
  Layout minor_first;
  minor_first.minor_to_major = {0, 1, 2};
  column_major.set_layout(minor_first);
  EXPECT_FALSE(ContiguousSliceStart(column_major, {2, 0, 0}, {3, 3, 5}, {1, 1, 1}).has_value());
}

}  // namespace
}  // namespace hloc
