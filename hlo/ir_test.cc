// Tests of the IR's mutation API: building, replacing uses, removal, traversal
// orders, cloning, name uniquing, the call graph, outlining, literals, shapes.
#include <cmath>

#include "gtest/gtest.h"
#include "hlo/float_formats.h"
#include "hlo/module.h"
#include "hlo/outline.h"

namespace hloc {
namespace {

Shape F32(std::vector<int64_t> dims) { return Shape(xla::F32, std::move(dims)); }

HloInstruction* Binary(HloComputation* c, HloOpcode op, HloInstruction* a, HloInstruction* b) {
  return c->AddInstruction(HloInstruction::Create(op, a->shape(), {a, b}));
}

// entry(p0, p1): a = add(p0, p1); m = multiply(a, p1); n = negate(a); ROOT s = subtract(m, n)
struct Diamond {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("diamond");
  HloComputation* entry;
  HloInstruction *p0, *p1, *a, *m, *n, *s;
  Diamond() {
    auto c = std::make_unique<HloComputation>("entry");
    p0 = c->AddInstruction(HloInstruction::CreateParameter(0, F32({4}), "p0"));
    p1 = c->AddInstruction(HloInstruction::CreateParameter(1, F32({4}), "p1"));
    a = Binary(c.get(), HloOpcode::kAdd, p0, p1);
    m = Binary(c.get(), HloOpcode::kMultiply, a, p1);
    n = c->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({4}), {a}));
    s = Binary(c.get(), HloOpcode::kSubtract, m, n);
    c->set_root(s);
    entry = module->AddEntryComputation(std::move(c));
  }
};

TEST(Ir, UsersAreUniqueAndTracked) {
  Diamond d;
  EXPECT_EQ(d.a->users().size(), 2u);
  EXPECT_EQ(d.p1->users().size(), 2u);
  HloInstruction* sq = Binary(d.entry, HloOpcode::kMultiply, d.p0, d.p0);
  EXPECT_EQ(d.p0->users().size(), 2u);  // add and the square, once each
  EXPECT_EQ(sq->operand_count(), 2);
}

TEST(Ir, NamesAndIdsAreUnique) {
  Diamond d;
  HloInstruction* x = d.entry->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({4}), {d.s}));
  HloInstruction* y = d.entry->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({4}), {x}));
  EXPECT_NE(x->name(), y->name());
  EXPECT_EQ(x->name(), "negate.1");  // the diamond already has "negate"
  EXPECT_EQ(y->name(), "negate.2");
  EXPECT_NE(x->unique_id(), y->unique_id());
  EXPECT_EQ(d.module->UniquifyName("add.7"), "add.7");
  std::string again = d.module->UniquifyName("add.7");
  EXPECT_NE(again, "add.7");
  EXPECT_TRUE(d.module->IsNameTaken(again));
}

TEST(Ir, AdoptInstructionMovesWithoutCopying) {
  Diamond d;
  HloComputation* body = d.module->AddComputation(std::make_unique<HloComputation>("body"));
  HloInstruction* q = body->AddInstruction(HloInstruction::CreateParameter(0, F32({4}), "q"));
  // Parameters and the root of the computation left stay where they are.
  EXPECT_FALSE(body->AdoptInstruction(d.p0).ok());
  EXPECT_FALSE(body->AdoptInstruction(d.s).ok());
  EXPECT_FALSE(body->AdoptInstruction(q).ok());  // already there
  const std::string name = d.n->name();
  const int64_t id = d.n->unique_id();
  // n = negate(a) moves; its operand becomes the body's parameter, and the
  // entry reads something else instead of n.
  d.n->ReplaceOperandWith(0, q);
  d.s->ReplaceOperandWith(1, d.m);
  ASSERT_TRUE(body->AdoptInstruction(d.n).ok());
  body->set_root(d.n);
  EXPECT_EQ(d.n->parent(), body);
  EXPECT_EQ(d.n->name(), name);  // still registered under its own name
  EXPECT_EQ(d.n->unique_id(), id);
  EXPECT_TRUE(d.module->IsNameTaken(name));
  EXPECT_EQ(d.entry->instruction_count(), 5);
  EXPECT_EQ(body->instruction_count(), 2);
  EXPECT_EQ(body->MakeInstructionPostOrder(), (std::vector<HloInstruction*>{q, d.n}));
  for (HloInstruction* i : d.entry->instructions()) EXPECT_NE(i, d.n);
  // It can be removed from its new home as usual.
  body->set_root(q);
  EXPECT_TRUE(body->RemoveInstruction(d.n).ok());
  EXPECT_FALSE(d.module->IsNameTaken(name));
}

TEST(Ir, ReplaceAllUsesWithUpdatesUsersAndRoot) {
  Diamond d;
  ASSERT_TRUE(d.a->ReplaceAllUsesWith(d.p0).ok());
  EXPECT_TRUE(d.a->users().empty());
  EXPECT_EQ(d.m->operand(0), d.p0);
  EXPECT_EQ(d.n->operand(0), d.p0);
  HloInstruction* t = d.entry->AddInstruction(HloInstruction::Create(HloOpcode::kAbs, F32({4}), {d.s}));
  ASSERT_TRUE(d.s->ReplaceAllUsesWith(t).ok());
  EXPECT_EQ(d.entry->root(), t);
}

TEST(Ir, RemoveRefusesLiveAndRemovesDeadChains) {
  Diamond d;
  EXPECT_FALSE(d.entry->RemoveInstruction(d.a).ok());   // has users
  EXPECT_FALSE(d.entry->RemoveInstruction(d.s).ok());   // root
  EXPECT_FALSE(d.entry->RemoveInstruction(d.p0).ok());  // parameter
  d.entry->set_root(d.m);
  ASSERT_TRUE(d.entry->RemoveInstructionAndUnusedOperands(d.s).ok());
  EXPECT_EQ(d.entry->instruction_count(), 4);  // p0, p1, a, m
  EXPECT_EQ(d.a->users().size(), 1u);
  EXPECT_FALSE(d.module->IsNameTaken(d.n == nullptr ? "" : "negate"));
}

TEST(Ir, PostOrderPutsOperandsAndControlPredecessorsFirst) {
  Diamond d;
  d.n->AddControlDependencyTo(d.m);
  std::vector<HloInstruction*> order = d.entry->MakeInstructionPostOrder();
  ASSERT_EQ(order.size(), 6u);
  auto pos = [&](HloInstruction* i) { return std::find(order.begin(), order.end(), i) - order.begin(); };
  EXPECT_LT(pos(d.a), pos(d.m));
  EXPECT_LT(pos(d.n), pos(d.m));
  EXPECT_LT(pos(d.m), pos(d.s));
  EXPECT_EQ(order.back(), d.s);
  EXPECT_EQ(d.entry->MakeInstructionReversePostOrder().front(), d.s);
}

TEST(Ir, CloneComputationIsDeepAndIndependent) {
  Diamond d;
  std::unique_ptr<HloComputation> copy = d.entry->Clone("c");
  EXPECT_EQ(copy->instruction_count(), 6);
  EXPECT_EQ(copy->num_parameters(), 2);
  EXPECT_EQ(copy->root()->opcode(), HloOpcode::kSubtract);
  EXPECT_NE(copy->root(), d.s);
  EXPECT_EQ(copy->root()->name(), d.s->name() + ".c");
}

TEST(Ir, ModuleCloneRemapsCalledComputations) {
  Diamond d;
  auto body = std::make_unique<HloComputation>("body");
  HloInstruction* q = body->AddInstruction(HloInstruction::CreateParameter(0, F32({4}), "q"));
  body->set_root(body->AddInstruction(HloInstruction::Create(HloOpcode::kExp, F32({4}), {q})));
  HloComputation* callee = d.module->AddComputation(std::move(body));
  HloInstruction* call = d.entry->AddInstruction(HloInstruction::CreateCall(callee, {d.s}));
  d.entry->set_root(call);
  std::unique_ptr<HloModule> clone = d.module->Clone("x");
  ASSERT_EQ(clone->computation_count(), 2);
  HloInstruction* cloned_call = clone->entry()->root();
  ASSERT_EQ(cloned_call->opcode(), HloOpcode::kCall);
  EXPECT_NE(cloned_call->to_apply(), callee);
  EXPECT_EQ(cloned_call->to_apply()->parent(), clone.get());
  std::vector<HloComputation*> post = clone->MakeComputationPostOrder();
  EXPECT_EQ(post.back(), clone->entry());
  EXPECT_EQ(clone->CallersOf(cloned_call->to_apply()).size(), 1u);
  EXPECT_FALSE(d.module->RemoveComputation(callee).ok());  // still called
}

TEST(Outline, SingleOutputBecomesCall) {
  Diamond d;
  auto result = OutlineInstructions(d.entry, {d.a, d.m, d.n, d.s});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(d.entry->root(), result->caller);
  EXPECT_EQ(result->caller->operand_count(), 2);  // p0, p1
  EXPECT_EQ(result->callee->instruction_count(), 6);
  EXPECT_EQ(d.entry->instruction_count(), 3);
}

TEST(Outline, IntermediateUsedOutsideBecomesTupleOutput) {
  Diamond d;
  auto result = OutlineInstructions(d.entry, {d.a, d.m},
                                    {HloOpcode::kFusion, FusionKind::kLoop, "fused"});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outputs.size(), 2u);  // a (used by n) and m (used by s)
  EXPECT_TRUE(result->caller->shape().IsTuple());
  EXPECT_EQ(result->callee->fusion_instruction(), result->caller);
  EXPECT_EQ(d.n->operand(0)->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(d.s->operand(0)->opcode(), HloOpcode::kGetTupleElement);
  OutlineOptions single;
  single.allow_multiple_outputs = false;
  Diamond e;
  EXPECT_FALSE(OutlineInstructions(e.entry, {e.a, e.m}, single).ok());
}

TEST(Outline, RefusesCycles) {
  Diamond d;
  // a -> n -> s and a -> m -> s: outlining {a, s} leaves m and n outside,
  // both using a and feeding s.
  auto result = OutlineInstructions(d.entry, {d.a, d.s});
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("cycle"), absl::string_view::npos);
  EXPECT_EQ(d.entry->instruction_count(), 6);  // unchanged
}

TEST(Literal, PrintsNestedArraysAndSpecialValues) {
  Literal l(F32({2, 3}));
  for (int i = 0; i < 6; ++i) l.SetFromDouble(i, i * 0.5);
  l.SetFromDouble(4, INFINITY);
  l.SetFromDouble(5, NAN);
  EXPECT_EQ(l.ToString(), "f32[2,3] {{0, 0.5, 1}, {1.5, inf, nan}}");
  Literal empty(F32({0, 2}));
  std::string text;
  empty.AppendValueTo(&text);
  EXPECT_EQ(text, "{}");
  text.clear();
  Literal rows(F32({2, 0}));
  rows.AppendValueTo(&text);
  EXPECT_EQ(text, "{{}, {}}");
  Literal t = Literal::Tuple({Literal::Scalar(xla::S32, 7), Literal::Scalar(xla::PRED, 1)});
  EXPECT_EQ(t.ToString(), "(s32[] 7, pred[] true)");
}

TEST(Literal, IntegerTypesWrapAndSubByteSignExtends) {
  Literal s4(Shape(xla::S4, {2}));
  s4.SetFromInt64(0, 7);
  s4.SetFromInt64(1, 9);  // wraps to -7
  EXPECT_EQ(s4.GetAsInt64(0), 7);
  EXPECT_EQ(s4.GetAsInt64(1), -7);
  Literal u8(Shape(xla::U8, {1}));
  u8.SetFromInt64(0, 300);
  EXPECT_EQ(u8.GetAsInt64(0), 44);
  Literal u64(Shape(xla::U64, {1}));
  u64.SetFromUint64(0, ~uint64_t{0});
  std::string text;
  u64.AppendElementTo(0, &text);
  EXPECT_EQ(text, "18446744073709551615");
}

TEST(Literal, CreateRefusesAbsurdSizes) {
  EXPECT_FALSE(Literal::Create(F32({1LL << 40, 1LL << 40})).ok());
  EXPECT_FALSE(Literal::Create(F32({1LL << 31, 4})).ok());
  EXPECT_FALSE(Literal::Create(F32({-1})).ok());
  EXPECT_TRUE(Literal::Create(F32({0, 1LL << 40})).ok());
}

TEST(FloatFormats, RoundToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.00390625f)), 1.0f);   // tie -> even
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.01171875f)), 1.015625f);  // tie -> even (up)
  EXPECT_EQ(HalfToFloat(FloatToHalf(65504.f)), 65504.f);
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(65520.f))));
  EXPECT_EQ(HalfToFloat(FloatToHalf(5.960464477539063e-08f)), 5.960464477539063e-08f);  // min subnormal
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_EQ(NarrowFloatToDouble(xla::F8E4M3FN, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(NarrowFloatToDouble(xla::F8E4M3FN, 0x7f)));
  EXPECT_EQ(DoubleToNarrowFloat(xla::F8E4M3FN, 448.0), 0x7e);
  EXPECT_EQ(NarrowFloatToDouble(xla::F8E5M2, DoubleToNarrowFloat(xla::F8E5M2, 1.25)), 1.25);
  EXPECT_EQ(NarrowFloatToDouble(xla::F4E2M1FN, DoubleToNarrowFloat(xla::F4E2M1FN, 6.0)), 6.0);
}

TEST(Shape, ToStringAndValidation) {
  Shape s = F32({2, 3});
  s.set_layout(Layout::RowMajor(2));
  EXPECT_EQ(s.ToString(), "f32[2,3]{1,0}");
  Shape d(xla::S32, {4, 5});
  d.set_dynamic_dimension(0, true);
  d.set_dimension(1, Shape::kUnboundedSize);
  d.set_dynamic_dimension(1, true);
  EXPECT_EQ(d.ToString(), "s32[<=4,?]");
  EXPECT_EQ(Shape::Tuple({F32({}), Shape::Token()}).ToString(), "(f32[], token[])");
  Shape bad_layout = F32({2, 3});
  Layout l;
  l.minor_to_major = {0, 0};
  bad_layout.set_layout(l);
  EXPECT_FALSE(ValidateShape(bad_layout).ok());
  EXPECT_FALSE(ValidateShape(F32({1LL << 62, 8})).ok());
  EXPECT_TRUE(ValidateShape(F32({1LL << 20, 8})).ok());
}

// Static shapes store no dynamic flags; the flags still read and compare as
// one per dimension, however they were set.
TEST(Shape, DynamicFlagsAreStoredOnlyWhenSet) {
  Shape built(xla::F32, {});
  built.add_dimension(3, /*is_dynamic=*/true);
  built.add_dimension(4);
  EXPECT_EQ(built.dynamic_dimensions(), (std::vector<bool>{true, false}));
  EXPECT_EQ(built.ToString(), "f32[<=3,4]");
  Shape set = F32({3, 4});
  EXPECT_EQ(set.dynamic_dimensions(), (std::vector<bool>{false, false}));
  EXPECT_NE(set, built);
  set.set_dynamic_dimension(0, true);
  EXPECT_EQ(set, built);
  set.set_dynamic_dimension(0, false);  // Back to static, flags still stored.
  EXPECT_EQ(set, F32({3, 4}));
  EXPECT_TRUE(set.is_static());
  Shape later = F32({3});
  later.add_dimension(5, /*is_dynamic=*/true);
  EXPECT_EQ(later.ToString(), "f32[3,<=5]");
  later.set_dimensions({7});
  EXPECT_TRUE(later.is_static());
  EXPECT_EQ(later.dynamic_dimensions(), (std::vector<bool>{false}));
}

// Instructions may share one metadata; writing through mutable_metadata()
// never changes another instruction's.
TEST(Ir, SharedMetadataIsCopiedOnWrite) {
  Diamond d;
  d.a->mutable_metadata()->set_op_name("add");
  d.m->set_shared_metadata(d.a->shared_metadata());
  EXPECT_EQ(&d.m->metadata(), &d.a->metadata());
  d.m->mutable_metadata()->set_op_name("mul");
  EXPECT_EQ(d.a->metadata().op_name(), "add");
  EXPECT_EQ(d.m->metadata().op_name(), "mul");
  std::unique_ptr<HloInstruction> copy = d.a->CloneWithNewOperands(d.a->shape(), {d.p0, d.p1});
  EXPECT_EQ(copy->metadata().op_name(), "add");
  copy->mutable_metadata()->set_op_name("copy");
  EXPECT_EQ(d.a->metadata().op_name(), "add");
  EXPECT_EQ(d.n->metadata().op_name(), "");  // Never written: the default.
  d.n->mutable_metadata()->set_op_name("neg");
  EXPECT_EQ(d.n->metadata().op_name(), "neg");
}

}  // namespace
}  // namespace hloc
