// Tests of ragged-dot and stochastic-convert. Expected values were computed
// by XLA:CPU through JAX 0.10.2: ragged-dot through jax.lax.ragged_dot_general
// (which XLA:CPU runs as JAX's dense lowering; XLA:CPU rejects the ragged-dot
// opcode itself), stochastic-convert by running the same HLO text in XLA:CPU.
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator_test_util.h"

namespace hloc {
namespace {

using testing_util::EvalOp;
using testing_util::L;
using testing_util::Str;

TEST(EvaluatorRaggedDotTest, NonContracting) {
  auto r = EvalOp("f32[5,2]", "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
                  {{"f32[5,3]", L("f32[5,3]", "{{-4, -3, -2}, {-1, 0, 1}, {2, 3, 4}, {5, 6, 7}, {8, 9, 10}}")},
                   {"f32[3,3,2]", L("f32[3,3,2]", "{{{-2, -1}, {0, 1}, {2, 3}}, {{4, -2}, {-1, 0}, {1, 2}}, {{3, 4}, {-2, -1}, {0, 1}}}")},
                   {"s32[3]", L("s32[3]", "{2, 1, 1}")}});
  EXPECT_EQ(Str(r), Str(L("f32[5,2]", "{{4, -5}, {4, 4}, {9, 4}, {3, 21}, {0, 0}}")));
}

TEST(EvaluatorRaggedDotTest, NonContractingS32) {
  auto r = EvalOp("s32[5,2]", "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
                  {{"s32[5,3]", L("s32[5,3]", "{{-4, -3, -2}, {-1, 0, 1}, {2, 3, 4}, {5, 6, 7}, {8, 9, 10}}")},
                   {"s32[3,3,2]", L("s32[3,3,2]", "{{{-2, -1}, {0, 1}, {2, 3}}, {{4, -2}, {-1, 0}, {1, 2}}, {{3, 4}, {-2, -1}, {0, 1}}}")},
                   {"s32[3]", L("s32[3]", "{2, 1, 1}")}});
  EXPECT_EQ(Str(r), Str(L("s32[5,2]", "{{4, -5}, {4, 4}, {9, 4}, {3, 21}, {0, 0}}")));
}

TEST(EvaluatorRaggedDotTest, NonContractingBatchedGroupSizes) {
  auto r = EvalOp("f32[2,4,2]", "ragged-dot(p0, p1, p2), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}",
                  {{"f32[2,4,3]", L("f32[2,4,3]", "{{{-1, 0, 1}, {2, 3, -1}, {0, 1, 2}, {3, -1, 0}}, {{1, 2, 3}, {-1, 0, 1}, {2, 3, -1}, {0, 1, 2}}}")},
                   {"f32[2,3,3,2]", L("f32[2,3,3,2]", "{{{{-1, 0}, {1, 2}, {-1, 0}}, {{1, 2}, {-1, 0}, {1, 2}}, {{-1, 0}, {1, 2}, {-1, 0}}}, {{{1, 2}, {-1, 0}, {1, 2}}, {{-1, 0}, {1, 2}, {-1, 0}}, {{1, 2}, {-1, 0}, {1, 2}}}}")},
                   {"s32[2,3]", L("s32[2,3]", "{{1, 2, 0}, {3, 0, 1}}")}});
  EXPECT_EQ(Str(r), Str(L("f32[2,4,2]", "{{{0, 0}, {-2, 2}, {1, 4}, {0, 0}}, {{2, 8}, {0, 0}, {-2, 2}, {1, 4}}}")));
}

TEST(EvaluatorRaggedDotTest, Contracting) {
  auto r = EvalOp("f32[2,2,3]", "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}",
                  {{"f32[2,5]", L("f32[2,5]", "{{-3, -2, -1, 0, 1}, {2, 3, 4, 5, 6}}")},
                   {"f32[5,3]", L("f32[5,3]", "{{1, 2, 3}, {4, 1, 2}, {3, 4, 1}, {2, 3, 4}, {1, 2, 3}}")},
                   {"s32[2]", L("s32[2]", "{2, 2}")}});
  EXPECT_EQ(Str(r), Str(L("f32[2,2,3]", "{{{-11, -8, -13}, {14, 7, 12}}, {{-3, -4, -1}, {22, 31, 24}}}")));
}

TEST(EvaluatorRaggedDotTest, Batch) {
  auto r = EvalOp("f32[4,2,2]", "ragged-dot(p0, p1, p2), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}",
                  {{"f32[4,2,3]", L("f32[4,2,3]", "{{{-2, -1, 0}, {1, 2, 3}}, {{-2, -1, 0}, {1, 2, 3}}, {{-2, -1, 0}, {1, 2, 3}}, {{-2, -1, 0}, {1, 2, 3}}}")},
                   {"f32[4,3,2]", L("f32[4,3,2]", "{{{-1, 0}, {1, 2}, {3, -1}}, {{0, 1}, {2, 3}, {-1, 0}}, {{1, 2}, {3, -1}, {0, 1}}, {{2, 3}, {-1, 0}, {1, 2}}}")},
                   {"s32[2]", L("s32[2]", "{1, 2}")}});
  EXPECT_EQ(Str(r), Str(L("f32[4,2,2]", "{{{1, -2}, {10, 1}}, {{-2, -5}, {1, 7}}, {{-5, -3}, {7, 3}}, {{-3, -6}, {3, 9}}}")));
}

TEST(EvaluatorRaggedDotTest, RejectsMismatchedGroupCount) {
  auto r = EvalOp("f32[2,2]", "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
                  {{"f32[2,3]", L("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")},
                   {"f32[3,3,2]", L("f32[3,3,2]", "{{{1, 1}, {1, 1}, {1, 1}}, {{1, 1}, {1, 1}, {1, 1}}, {{1, 1}, {1, 1}, {1, 1}}}")},
                   {"s32[2]", L("s32[2]", "{1, 1}")}});
  EXPECT_FALSE(r.ok());
}

// Operand values, random words, and XLA:CPU's results. The random words
// probe both sides of the rounding threshold (the fraction scaled to the
// word's width: round up when the word is below it).
constexpr char kX[] =
    "{1.25, 1.25, 1.25, -1.25, -1.25, 2.5, 2.5, 0.75, -0.75, 3, -3, nan, inf, -inf, 200, -200, "
    "127.5, -128.5, 0, -0}";

TEST(EvaluatorStochasticConvertTest, F32ToS8) {
  auto r = EvalOp("s8[20]", "stochastic-convert(p0, p1)",
                  {{"f32[20]", L("f32[20]", kX)},
                   {"u32[20]", L("u32[20]", "{1073741823, 1073741824, 4294967295, 1073741823, "
                                            "1073741824, 2147483647, 2147483648, 3221225471, "
                                            "3221225472, 0, 4294967295, 5, 5, 5, 5, 5, 0, 0, "
                                            "4294967295, 0}")}});
  EXPECT_EQ(Str(r), Str(L("s8[20]", "{2, 1, 1, -2, -1, 3, 2, 1, 0, 3, -3, 0, 127, -128, 127, "
                                    "-128, 127, -128, 0, 0}")));
}

TEST(EvaluatorStochasticConvertTest, F32ToS32) {
  auto r = EvalOp("s32[20]", "stochastic-convert(p0, p1)",
                  {{"f32[20]", L("f32[20]", kX)},
                   {"u32[20]", L("u32[20]", "{1073741823, 1073741824, 4294967295, 1073741823, "
                                            "1073741824, 2147483647, 2147483648, 3221225471, "
                                            "3221225472, 0, 4294967295, 5, 5, 5, 5, 5, 0, 0, "
                                            "4294967295, 0}")}});
  EXPECT_EQ(Str(r), Str(L("s32[20]", "{2, 1, 1, -2, -1, 3, 2, 1, 0, 3, -3, 0, 2147483647, "
                                     "-2147483648, 200, -200, 128, -129, 0, 0}")));
}

TEST(EvaluatorStochasticConvertTest, Bf16ToS8) {
  auto r = EvalOp("s8[20]", "stochastic-convert(p0, p1)",
                  {{"bf16[20]", L("bf16[20]", kX)},
                   {"u16[20]", L("u16[20]", "{16383, 16384, 65535, 16383, 16384, 32767, 32768, "
                                            "49151, 49152, 0, 65535, 0, 0, 0, 0, 0, 0, 0, 65535, "
                                            "0}")}});
  EXPECT_EQ(Str(r), Str(L("s8[20]", "{2, 1, 1, -2, -1, 3, 2, 1, 0, 3, -3, 0, 127, -128, 127, "
                                    "-128, 127, -128, 0, 0}")));
}

TEST(EvaluatorStochasticConvertTest, F16ToS16) {
  auto r = EvalOp("s16[20]", "stochastic-convert(p0, p1)",
                  {{"f16[20]", L("f16[20]", kX)},
                   {"u16[20]", L("u16[20]", "{16383, 16384, 65535, 16383, 16384, 32767, 32768, "
                                            "49151, 49152, 0, 65535, 0, 0, 0, 0, 0, 0, 0, 65535, "
                                            "0}")}});
  EXPECT_EQ(Str(r), Str(L("s16[20]", "{2, 1, 1, -2, -1, 3, 2, 1, 0, 3, -3, 0, 32767, -32768, "
                                     "200, -200, 128, -129, 0, 0}")));
}

TEST(EvaluatorStochasticConvertTest, F64ToS64) {
  auto r = EvalOp("s64[20]", "stochastic-convert(p0, p1)",
                  {{"f64[20]", L("f64[20]", kX)},
                   {"u64[20]", L("u64[20]", "{4611686014132420608, 4611686018427387904, "
                                            "18446744069414584320, 4611686014132420608, "
                                            "4611686018427387904, 9223372032559808512, "
                                            "9223372036854775808, 13835058050987196416, "
                                            "13835058055282163712, 0, 18446744069414584320, "
                                            "21474836480, 21474836480, 21474836480, 21474836480, "
                                            "21474836480, 0, 0, 18446744069414584320, 0}")}});
  EXPECT_EQ(Str(r), Str(L("s64[20]", "{2, 1, 1, -2, -1, 3, 2, 1, 0, 3, -3, 0, "
                                     "9223372036854775807, -9223372036854775808, 200, -200, "
                                     "128, -129, 0, 0}")));
}

// The limits are compared in the operand's type: 32767 is 32768 in bf16.
TEST(EvaluatorStochasticConvertTest, Bf16ToS16Saturates) {
  auto r = EvalOp("s16[6]", "stochastic-convert(p0, p1)",
                  {{"bf16[6]", L("bf16[6]", "{32768, 32640, -32768, -32768, 39936, 9999220736}")},
                   {"u16[6]", L("u16[6]", "{0, 0, 0, 0, 0, 0}")}});
  EXPECT_EQ(Str(r), Str(L("s16[6]", "{32767, 32640, -32768, -32768, 32767, 32767}")));
}

TEST(EvaluatorStochasticConvertTest, RejectsUnsignedResultAndWrongBitWidth) {
  // XLA:CPU refuses f32 -> u8 ("Unsupported stochastic convert").
  EXPECT_FALSE(EvalOp("u8[1]", "stochastic-convert(p0, p1)",
                      {{"f32[1]", L("f32[1]", "{1.5}")}, {"u32[1]", L("u32[1]", "{0}")}})
                   .ok());
  EXPECT_FALSE(EvalOp("s8[1]", "stochastic-convert(p0, p1)",
                      {{"f32[1]", L("f32[1]", "{1.5}")}, {"u16[1]", L("u16[1]", "{0}")}})
                   .ok());
}

}  // namespace
}  // namespace hloc
