// Unit tests of data movement, gather/scatter, tuples and control flow with
// hand-checked values, including clamped dynamic-slice starts, negative and
// interior padding, out-of-range gather/scatter indices, zero-element
// shapes, and the errors for unsupported ops.
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/evaluator_test_util.h"

namespace hloc {
namespace {

using testing_util::Eval;
using testing_util::EvalOp;
using testing_util::L;
using testing_util::Str;

TEST(DataMovementTest, BroadcastReshapeTranspose) {
  EXPECT_EQ(Str(EvalOp("s32[2,3]", "broadcast(p0), dimensions={1}",
                       {{"s32[3]", L("s32[3]", "{1, 2, 3}")}})),
            "s32[2,3] {{1, 2, 3}, {1, 2, 3}}");
  EXPECT_EQ(Str(EvalOp("s32[2,3]", "broadcast(p0), dimensions={0}",
                       {{"s32[2]", L("s32[2]", "{7, 8}")}})),
            "s32[2,3] {{7, 7, 7}, {8, 8, 8}}");
  EXPECT_EQ(Str(EvalOp("f32[2,2]", "broadcast(p0), dimensions={}", {{"f32[]", L("f32[]", "-0")}})),
            "f32[2,2] {{-0, -0}, {-0, -0}}");
  EXPECT_EQ(Str(EvalOp("s32[3,2]", "reshape(p0)",
                       {{"s32[2,3]", L("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}})),
            "s32[3,2] {{1, 2}, {3, 4}, {5, 6}}");
  EXPECT_EQ(Str(EvalOp("s32[3,2]", "transpose(p0), dimensions={1,0}",
                       {{"s32[2,3]", L("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}})),
            "s32[3,2] {{1, 4}, {2, 5}, {3, 6}}");
  EXPECT_EQ(Str(EvalOp("s32[2,1,2]", "transpose(p0), dimensions={2,0,1}",
                       {{"s32[1,2,2]", L("s32[1,2,2]", "{{{1, 2}, {3, 4}}}")}})),
            "s32[2,1,2] {{{1, 3}}, {{2, 4}}}");
  EXPECT_EQ(Str(EvalOp("f32[2]", "bitcast(p0)", {{"f32[1,2]", L("f32[1,2]", "{{5, 6}}")}})),
            "f32[2] {5, 6}");
  EXPECT_EQ(Str(EvalOp("u8[2]", "copy(p0)", {{"u8[2]", L("u8[2]", "{3, 4}")}})), "u8[2] {3, 4}");
}

TEST(DataMovementTest, BitcastFollowsLayouts) {
  // Column-major f32[2,3] holds 1,4,2,5,3,6; read row-major as f32[3,2].
  EXPECT_EQ(Str(EvalOp("f32[3,2]{1,0}", "bitcast(p0)",
                       {{"f32[2,3]{0,1}", L("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}})),
            "f32[3,2] {{1, 4}, {2, 5}, {3, 6}}");
  // Row-major 1..6 read as a column-major f32[3,2].
  EXPECT_EQ(Str(EvalOp("f32[3,2]{0,1}", "bitcast(p0)",
                       {{"f32[2,3]{1,0}", L("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}})),
            "f32[3,2] {{1, 4}, {2, 5}, {3, 6}}");
  // Both row-major: a reshape.
  EXPECT_EQ(Str(EvalOp("f32[3,2]{1,0}", "bitcast(p0)",
                       {{"f32[2,3]{1,0}", L("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}})),
            "f32[3,2] {{1, 2}, {3, 4}, {5, 6}}");
  EXPECT_EQ(Str(EvalOp("s32[2]", "bitcast(p0)", {{"f32[2]", L("f32[2]", "{1, -2}")}})),
            "s32[2] {1065353216, -1073741824}");
}

TEST(DataMovementTest, ReverseSliceConcatenate) {
  EXPECT_EQ(Str(EvalOp("s32[2,3]", "reverse(p0), dimensions={0,1}",
                       {{"s32[2,3]", L("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}})),
            "s32[2,3] {{6, 5, 4}, {3, 2, 1}}");
  EXPECT_EQ(Str(EvalOp("s32[2]", "slice(p0), slice={[1:6:3]}",
                       {{"s32[6]", L("s32[6]", "{0, 1, 2, 3, 4, 5}")}})),
            "s32[2] {1, 4}");
  EXPECT_EQ(Str(EvalOp("s32[1,2]", "slice(p0), slice={[1:2], [0:3:2]}",
                       {{"s32[2,3]", L("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}})),
            "s32[1,2] {{4, 6}}");
  EXPECT_EQ(Str(EvalOp("s32[2,3]", "concatenate(p0, p1), dimensions={1}",
                       {{"s32[2,1]", L("s32[2,1]", "{{1}, {4}}")},
                        {"s32[2,2]", L("s32[2,2]", "{{2, 3}, {5, 6}}")}})),
            "s32[2,3] {{1, 2, 3}, {4, 5, 6}}");
  EXPECT_EQ(Str(EvalOp("s32[3]", "concatenate(p0, p1), dimensions={0}",
                       {{"s32[0]", L("s32[0]", "{}")}, {"s32[3]", L("s32[3]", "{7, 8, 9}")}})),
            "s32[3] {7, 8, 9}");
}

TEST(DataMovementTest, DynamicSliceClampsStarts) {
  auto ds = [](const std::string& start) {
    return Str(EvalOp("s32[2]", "dynamic-slice(p0, p1), dynamic_slice_sizes={2}",
                      {{"s32[5]", L("s32[5]", "{10, 11, 12, 13, 14}")},
                       {"s32[]", L("s32[]", start)}}));
  };
  EXPECT_EQ(ds("1"), "s32[2] {11, 12}");
  EXPECT_EQ(ds("4"), "s32[2] {13, 14}");   // Clamped to 3.
  EXPECT_EQ(ds("-7"), "s32[2] {10, 11}");  // Clamped to 0.
  EXPECT_EQ(Str(EvalOp("s32[1,2]", "dynamic-slice(p0, p1, p2), dynamic_slice_sizes={1,2}",
                       {{"s32[2,3]", L("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")},
                        {"u32[]", L("u32[]", "4000000000")},
                        {"u32[]", L("u32[]", "1")}})),
            "s32[1,2] {{5, 6}}");
}

TEST(DataMovementTest, DynamicUpdateSliceClampsStarts) {
  auto dus = [](const std::string& start) {
    return Str(EvalOp("s32[5]", "dynamic-update-slice(p0, p1, p2)",
                      {{"s32[5]", L("s32[5]", "{0, 0, 0, 0, 0}")},
                       {"s32[2]", L("s32[2]", "{8, 9}")},
                       {"s32[]", L("s32[]", start)}}));
  };
  EXPECT_EQ(dus("0"), "s32[5] {8, 9, 0, 0, 0}");
  EXPECT_EQ(dus("10"), "s32[5] {0, 0, 0, 8, 9}");
  EXPECT_EQ(dus("-1"), "s32[5] {8, 9, 0, 0, 0}");
  EXPECT_EQ(Str(EvalOp("s32[2,3]", "dynamic-update-slice(p0, p1, p2, p3)",
                       {{"s32[2,3]", L("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")},
                        {"s32[1,2]", L("s32[1,2]", "{{0, 0}}")},
                        {"s32[]", L("s32[]", "1")},
                        {"s32[]", L("s32[]", "2")}})),
            "s32[2,3] {{1, 2, 3}, {4, 0, 0}}");
}

TEST(DataMovementTest, PadWithNegativeAndInteriorPadding) {
  EXPECT_EQ(Str(EvalOp("s32[8]", "pad(p0, p1), padding=1_2_1",
                       {{"s32[3]", L("s32[3]", "{1, 2, 3}")}, {"s32[]", L("s32[]", "0")}})),
            "s32[8] {0, 1, 0, 2, 0, 3, 0, 0}");
  EXPECT_EQ(Str(EvalOp("s32[2]", "pad(p0, p1), padding=-1_-1",
                       {{"s32[4]", L("s32[4]", "{1, 2, 3, 4}")}, {"s32[]", L("s32[]", "9")}})),
            "s32[2] {2, 3}");
  EXPECT_EQ(Str(EvalOp("s32[5]", "pad(p0, p1), padding=-2_0_2",
                       {{"s32[3]", L("s32[3]", "{1, 2, 3}")}, {"s32[]", L("s32[]", "9")}})),
            "s32[5] {9, 2, 9, 9, 3}");
  EXPECT_EQ(Str(EvalOp("f32[3,2]", "pad(p0, p1), padding=1_1x0_1",
                       {{"f32[1,1]", L("f32[1,1]", "{{5}}")}, {"f32[]", L("f32[]", "-1")}})),
            "f32[3,2] {{-1, -1}, {5, -1}, {-1, -1}}");
}

TEST(DataMovementTest, Iota) {
  EXPECT_EQ(Str(EvalOp("s32[2,3]", "iota(), iota_dimension=1", {})),
            "s32[2,3] {{0, 1, 2}, {0, 1, 2}}");
  EXPECT_EQ(Str(EvalOp("f32[2,2]", "iota(), iota_dimension=0", {})), "f32[2,2] {{0, 0}, {1, 1}}");
  EXPECT_EQ(Str(EvalOp("bf16[3]", "iota(), iota_dimension=0", {})), "bf16[3] {0, 1, 2}");
}

TEST(GatherTest, RowsWithClamping) {
  // Embedding lookup: rows 2, 0 and 5 (clamped to 2) of a 3x2 table.
  EXPECT_EQ(Str(EvalOp("f32[3,2]",
                       "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, "
                       "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}",
                       {{"f32[3,2]", L("f32[3,2]", "{{1, 2}, {3, 4}, {5, 6}}")},
                        {"s32[3,1]", L("s32[3,1]", "{{2}, {0}, {5}}")}})),
            "f32[3,2] {{5, 6}, {1, 2}, {5, 6}}");
  // Implicit index vector dimension, 2x2 windows.
  EXPECT_EQ(Str(EvalOp("s32[2,2,2]",
                       "gather(p0, p1), offset_dims={1,2}, collapsed_slice_dims={}, "
                       "start_index_map={0}, index_vector_dim=1, slice_sizes={2,2}",
                       {{"s32[3,2]", L("s32[3,2]", "{{1, 2}, {3, 4}, {5, 6}}")},
                        {"s32[2]", L("s32[2]", "{1, -1}")}})),
            "s32[2,2,2] {{{3, 4}, {5, 6}}, {{1, 2}, {3, 4}}}");
}

TEST(GatherTest, BatchingDimensions) {
  // out[b, i] = operand[b, idx[b, i]].
  EXPECT_EQ(Str(EvalOp("s32[2,2]",
                       "gather(p0, p1), offset_dims={}, collapsed_slice_dims={1}, "
                       "start_index_map={1}, operand_batching_dims={0}, "
                       "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}",
                       {{"s32[2,3]", L("s32[2,3]", "{{10, 11, 12}, {20, 21, 22}}")},
                        {"s32[2,2]", L("s32[2,2]", "{{2, 0}, {1, 1}}")}})),
            "s32[2,2] {{12, 10}, {21, 21}}");
}

const char* kAdd = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
max_with_count {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  ROOT r = f32[] add(m, m)
}
)";

TEST(ScatterTest, AddOverwriteAndOutOfBounds) {
  auto scatter = [](const std::string& fn, const std::string& idx) {
    return Str(EvalOp("f32[4]",
                      "scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={0}, "
                      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=" + fn,
                      {{"f32[4]", L("f32[4]", "{1, 1, 1, 1}")},
                       {"s32[3,1]", L("s32[3,1]", idx)},
                       {"f32[3]", L("f32[3]", "{10, 20, 30}")}},
                      kAdd));
  };
  EXPECT_EQ(scatter("add", "{{0}, {2}, {0}}"), "f32[4] {41, 1, 21, 1}");
  EXPECT_EQ(scatter("assign", "{{3}, {1}, {3}}"), "f32[4] {1, 20, 1, 30}");
  EXPECT_EQ(scatter("add", "{{4}, {-1}, {1}}"), "f32[4] {1, 31, 1, 1}");  // OOB skipped.
  // A general combiner is called per element: 2 * max(old, update).
  EXPECT_EQ(scatter("max_with_count", "{{0}, {1}, {1}}"), "f32[4] {20, 80, 1, 1}");
}

TEST(ScatterTest, WindowsAndBatching) {
  // Row updates with a 1x2 window; the window at row 2 would not fit a 2-row operand.
  EXPECT_EQ(Str(EvalOp("f32[2,2]",
                       "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, "
                       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
                       {{"f32[2,2]", L("f32[2,2]", "{{0, 0}, {0, 0}}")},
                        {"s32[3,1]", L("s32[3,1]", "{{1}, {2}, {1}}")},
                        {"f32[3,2]", L("f32[3,2]", "{{1, 2}, {3, 4}, {5, 6}}")}},
                      kAdd)),
            "f32[2,2] {{0, 0}, {6, 8}}");
  // Batched: operand[b, idx[b, i]] += upd[b, i].
  EXPECT_EQ(Str(EvalOp("f32[2,3]",
                       "scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={1}, "
                       "input_batching_dims={0}, scatter_indices_batching_dims={0}, "
                       "scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add",
                       {{"f32[2,3]", L("f32[2,3]", "{{0, 0, 0}, {0, 0, 0}}")},
                        {"s32[2,2]", L("s32[2,2]", "{{2, 2}, {0, 1}}")},
                        {"f32[2,2]", L("f32[2,2]", "{{1, 2}, {3, 4}}")}},
                      kAdd)),
            "f32[2,3] {{0, 0, 3}, {3, 4, 0}}");
}

TEST(ControlFlowTest, WhileCountsUp) {
  const char* text = R"(
HloModule m
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = f32[] add(x, x)
  ROOT t = (s32[], f32[]) tuple(i2, x2)
}
ENTRY e {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[]) tuple(zero, x)
  ROOT w = (s32[], f32[]) while(t), condition=cond, body=body
}
)";
  std::vector<Literal> args;
  args.push_back(L("f32[]", "1.5"));
  EXPECT_EQ(Str(testing_util::Eval(text, std::move(args))), "(s32[] 5, f32[] 48)");
  EvaluatorOptions limited;
  limited.max_while_iterations = 3;
  std::vector<Literal> args2;
  args2.push_back(L("f32[]", "1.5"));
  const std::string r = Str(testing_util::Eval(text, std::move(args2), limited));
  EXPECT_NE(r.find("more than 3 iterations"), std::string::npos) << r;
}

TEST(ControlFlowTest, ConditionalPredAndIndex) {
  const char* text = R"(
HloModule m
neg { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
dbl { p = f32[] parameter(0)  ROOT d = f32[] add(p, p) }
ident { p = f32[] parameter(0)  ROOT c = f32[] copy(p) }
ENTRY e {
  i = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(i, x, x, x), branch_computations={neg, dbl, ident}
}
)";
  auto run = [&](const std::string& index) {
    std::vector<Literal> args;
    args.push_back(L("s32[]", index));
    args.push_back(L("f32[]", "3"));
    return Str(Eval(text, std::move(args)));
  };
  EXPECT_EQ(run("0"), "f32[] -3");
  EXPECT_EQ(run("1"), "f32[] 6");
  EXPECT_EQ(run("2"), "f32[] 3");
  EXPECT_EQ(run("7"), "f32[] 3");   // Out of range: last branch.
  EXPECT_EQ(run("-1"), "f32[] 3");
  const char* pred_text = R"(
HloModule m
neg { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
dbl { p = f32[] parameter(0)  ROOT d = f32[] add(p, p) }
ENTRY e {
  b = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(b, x, x), true_computation=neg, false_computation=dbl
}
)";
  std::vector<Literal> args;
  args.push_back(L("pred[]", "false"));
  args.push_back(L("f32[]", "3"));
  EXPECT_EQ(Str(Eval(pred_text, std::move(args))), "f32[] 6");
}

TEST(ControlFlowTest, CallFusionMapAndTuples) {
  const char* text = R"(
HloModule m
sq { p = f32[] parameter(0)  ROOT m = f32[] multiply(p, p) }
fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] subtract(a, b)
}
sum2 {
  a = f32[2] parameter(0)
  ROOT t = (f32[2], f32[2]) tuple(a, a)
}
ENTRY e {
  x = f32[2] parameter(0)
  m = f32[2] map(x), dimensions={0}, to_apply=sq
  f = f32[2] fusion(m, x), kind=kLoop, calls=fused
  c = (f32[2], f32[2]) call(f), to_apply=sum2, is_composite=true, frontend_attributes={composite.name="test.sum2"}
  g = f32[2] get-tuple-element(c), index=1
  b = f32[2] opt-barrier(g)
  ROOT r = (f32[2], pred[]) tuple(b, pred[] constant(true))
}
)";
  std::vector<Literal> args;
  args.push_back(L("f32[2]", "{3, -1}"));
  EXPECT_EQ(Str(Eval(text, std::move(args))), "(f32[2] {6, 2}, pred[] true)");
}

TEST(ErrorsTest, UnsupportedOpsNameTheInstruction) {
  const std::string cc = Str(EvalOp("f32[2]", "custom-call(p0), custom_call_target=\"my_kernel\"",
                                    {{"f32[2]", L("f32[2]", "{1, 2}")}}));
  EXPECT_NE(cc.find("my_kernel"), std::string::npos) << cc;
  EXPECT_NE(cc.find("%r"), std::string::npos) << cc;
  // One device: an all-reduce over a group of one is the identity; a group
  // naming other devices is an error naming the instruction.
  EXPECT_EQ(Str(EvalOp("f32[2]", "all-reduce(p0), replica_groups={}, to_apply=add",
                       {{"f32[2]", L("f32[2]", "{1, 2}")}}, kAdd)),
            "f32[2] {1, 2}");
  const std::string ar = Str(EvalOp("f32[2]", "all-reduce(p0), replica_groups={{0,1}}, "
                                    "to_apply=add", {{"f32[2]", L("f32[2]", "{1, 2}")}}, kAdd));
  EXPECT_NE(ar.find("out of range"), std::string::npos) << ar;
  EXPECT_NE(ar.find("%r"), std::string::npos) << ar;
  const std::string wrong_args = Str(Eval("HloModule m\nENTRY e { ROOT p = f32[2] parameter(0) }\n"));
  EXPECT_NE(wrong_args.find("1 parameters but 0 arguments"), std::string::npos) << wrong_args;
  std::vector<Literal> bad;
  bad.push_back(L("s32[2]", "{1, 2}"));
  const std::string wrong_shape =
      Str(Eval("HloModule m\nENTRY e { ROOT p = f32[2] parameter(0) }\n", std::move(bad)));
  EXPECT_NE(wrong_shape.find("argument 0 has shape s32[2]"), std::string::npos) << wrong_shape;
}

}  // namespace
}  // namespace hloc

namespace hloc {
namespace {

// The interpreter evaluates only verified modules: a while declared as a
// 2-tuple whose loop carries a 3-tuple once ran and returned a 3-tuple.
TEST(VerifiedInputTest, WhileDeclaredWithTheWrongTupleIsRefused) {
  absl::StatusOr<Literal> result = testing_util::Eval(R"(
HloModule while_tuple_mismatch
cond {
  s = (s32[], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  a = f32[2] get-tuple-element(s), index=1
  b = f32[2] get-tuple-element(s), index=2
  ROOT t = (s32[], f32[2], f32[2]) tuple(next, a, b)
}
ENTRY main {
  zero = s32[] constant(0)
  a = f32[2] constant({1, 2})
  init = (s32[], f32[2], f32[2]) tuple(zero, a, a)
  ROOT w = (s32[], f32[2]) while(init), condition=cond, body=body
})");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("fails verification: computation main, instruction %w"),
            std::string::npos)
      << result.status();
}

}  // namespace
}  // namespace hloc
