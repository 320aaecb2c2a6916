// Tests of the HLO pattern matcher: opcodes, operands, commutative operands,
// captures (consistency and rollback), one-use, shapes, attributes, members
// versus inputs, broadcast chains, elementwise cones and the helpers.
#include "passes/pattern/matcher.h"

#include "gtest/gtest.h"
#include "hlo/module.h"
#include "hlo/text_parser.h"

namespace hloc::pattern {
namespace {

std::unique_ptr<HloModule> Parse(const char* text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(module).value() : nullptr;
}

HloInstruction* Find(const HloModule& module, absl::string_view name) {
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* i : c->instructions()) {
      if (i->name() == name) return i;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

constexpr char kGemmBias[] = R"(
HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,64] parameter(1)
  b = f32[64] parameter(2)
  dot = f32[8,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,64] broadcast(b), dimensions={1}
  left = f32[8,64] add(dot, bb)
  ROOT right = f32[8,64] add(bb, left)
})";

TEST(Matcher, OpcodeOperandsAndPointerCaptures) {
  auto module = Parse(kGemmBias);
  HloInstruction* dot = nullptr;
  HloInstruction* bias = nullptr;
  Pattern p = Op(HloOpcode::kAdd)
                  .WithOperands(Capture(&dot, Op(HloOpcode::kDot)), Broadcast(Capture(&bias)))
                  .Commutative();
  EXPECT_TRUE(Matches(Find(*module, "left"), p));
  EXPECT_EQ(dot, Find(*module, "dot"));
  EXPECT_EQ(bias, Find(*module, "b"));
  // Without Commutative the operand order matters.
  Pattern ordered = Op(HloOpcode::kAdd).WithOperands(Broadcast(Any()), Op(HloOpcode::kDot));
  EXPECT_FALSE(Matches(Find(*module, "left"), ordered));
  EXPECT_TRUE(Matches(Find(*module, "left"), ordered.Commutative()));
  EXPECT_FALSE(Matches(Find(*module, "dot"), p));
}

TEST(Matcher, CommutativeMatchesEitherOrderAndFullyBacktracks) {
  auto module = Parse(kGemmBias);
  // right = add(bb, left): the first order binds Broadcast to bb and fails on
  // left's pattern only if we require the nested add; both orders are tried.
  Match match;
  Pattern p =
      Op(HloOpcode::kAdd)
          .WithOperands(Capture("inner", Op(HloOpcode::kAdd)), Capture("bcast", Broadcast(Any())))
          .Commutative();
  ASSERT_TRUE(Matches(Find(*module, "right"), p, &match));
  EXPECT_EQ(match.Get("inner"), Find(*module, "left"));
  EXPECT_EQ(match.Get("bcast"), Find(*module, "bb"));
}

TEST(Matcher, RepeatedCaptureMeansSameInstruction) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  sq = f32[4] multiply(a, a)
  ab = f32[4] multiply(a, b)
  cube = f32[4] multiply(sq, a)
  ROOT r = f32[4] add(cube, ab)
})");
  Pattern square = Op(HloOpcode::kMultiply).WithOperands(Capture("x"), Capture("x"));
  EXPECT_TRUE(Matches(Find(*module, "sq"), square));
  EXPECT_FALSE(Matches(Find(*module, "ab"), square));
  // x*x*x with the outer operands in either order.
  Pattern cube = Op(HloOpcode::kMultiply).WithOperands(square, Capture("x")).Commutative();
  Match match;
  ASSERT_TRUE(Matches(Find(*module, "cube"), cube, &match));
  EXPECT_EQ(match.Get("x"), Find(*module, "a"));
}

TEST(Matcher, FailedAlternativeUndoesItsCaptures) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  n = f32[4] negate(b)
  ROOT s = f32[4] subtract(a, n)
})");
  // The first alternative captures y = a, then fails at the negate; the
  // second must not see that binding.
  HloInstruction* y = nullptr;
  Pattern p = AnyOf({Op(HloOpcode::kSubtract).WithOperands(Capture("y"), Op(HloOpcode::kAbs)),
                     Op(HloOpcode::kSubtract)
                         .WithOperands(Any(), Op(HloOpcode::kNegate).WithOperands(Capture("y")))});
  Match match;
  ASSERT_TRUE(Matches(Find(*module, "s"), p, &match));
  EXPECT_EQ(match.Get("y"), Find(*module, "b"));
  EXPECT_EQ(match.captures().size(), 1u);
  // Pointer captures are written only on success.
  Pattern never = Op(HloOpcode::kSubtract).WithOperands(Capture(&y), Op(HloOpcode::kAbs));
  EXPECT_FALSE(Matches(Find(*module, "s"), never));
  EXPECT_EQ(y, nullptr);
}

TEST(Matcher, OneUseShapeAndAttributeConstraints) {
  auto module = Parse(kGemmBias);
  HloInstruction* bb = Find(*module, "bb");
  HloInstruction* dot = Find(*module, "dot");
  EXPECT_FALSE(Matches(bb, Op(HloOpcode::kBroadcast).OneUse()));  // used by left and right
  EXPECT_TRUE(Matches(dot, Op(HloOpcode::kDot).OneUse()));
  EXPECT_FALSE(Matches(Find(*module, "right"), Op(HloOpcode::kAdd).OneUse()));  // root
  EXPECT_TRUE(Matches(dot, Op(HloOpcode::kDot).WithRank(2).WithElementType(xla::F32)));
  EXPECT_FALSE(Matches(dot, Op(HloOpcode::kDot).WithElementType(xla::BF16)));
  auto contracts_dim1 = [](const HloInstruction& i) {
    const auto& dn = *i.attrs().dot_dimension_numbers;
    return dn.lhs_contracting_dimensions_size() == 1 && dn.lhs_contracting_dimensions(0) == 1;
  };
  EXPECT_TRUE(Matches(dot, Op(HloOpcode::kDot).Where(contracts_dim1, "lhs contracts dim 1")));
  EXPECT_TRUE(
      Matches(bb, Op(HloOpcode::kBroadcast)
                      .WithShape([](const Shape& s) { return s.dimensions(1) == 64; }, "N=64")));
  EXPECT_TRUE(Matches(dot, Any().WithOperand(1, Capture("w"))));
  EXPECT_FALSE(Matches(dot, Any().WithOperand(2, Any())));
}

TEST(Matcher, MembersAreConstrainedNodesInputsAreNot) {
  auto module = Parse(kGemmBias);
  Match match;
  Pattern p = Op(HloOpcode::kAdd)
                  .WithOperands(
                      Op(HloOpcode::kDot).WithOperands(Any(), Op(HloOpcode::kParameter).AsInput()),
                      Broadcast(Capture("bias")))
                  .Commutative();
  ASSERT_TRUE(Matches(Find(*module, "left"), p, &match));
  EXPECT_EQ(match.root(), Find(*module, "left"));
  ASSERT_EQ(match.members().size(), 3u);
  EXPECT_TRUE(match.IsMember(Find(*module, "left")));
  EXPECT_TRUE(match.IsMember(Find(*module, "dot")));
  EXPECT_TRUE(match.IsMember(Find(*module, "bb")));
  EXPECT_FALSE(match.IsMember(Find(*module, "w")));
  EXPECT_FALSE(match.IsMember(Find(*module, "b")));
  // AsInput on AnyOf applies to whichever alternative matched.
  Pattern either = AnyOf({Op(HloOpcode::kDot), Op(HloOpcode::kBroadcast)}).AsInput();
  ASSERT_TRUE(
      Matches(Find(*module, "left"), Op(HloOpcode::kAdd).WithOperands(either, either), &match));
  EXPECT_EQ(match.members().size(), 1u);
}

TEST(Matcher, BroadcastChainSeesThroughDegenerateReshapes) {
  // The bias chain JAX emits for `x @ w + b`.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  b = f32[64] parameter(0)
  r1 = f32[1,64] reshape(b)
  b1 = f32[1,64] broadcast(r1), dimensions={0,1}
  r2 = f32[64] reshape(b1)
  top = f32[8,64] broadcast(r2), dimensions={1}
  m = f32[8,1] parameter(1)
  rm = f32[8] reshape(m)
  rows = f32[8,64] broadcast(rm), dimensions={0}
  bad = f32[2,4] reshape(rm)
  ROOT t = (f32[8,64], f32[8,64], f32[2,4]) tuple(top, rows, bad)
})");
  HloInstruction* top = Find(*module, "top");
  EXPECT_EQ(EquivalentBroadcastDimensions(top, Find(*module, "b")), std::vector<int64_t>{1});
  EXPECT_EQ(EquivalentBroadcastDimensions(top, Find(*module, "r2")), std::vector<int64_t>{1});
  EXPECT_EQ(EquivalentBroadcastDimensions(Find(*module, "rows"), Find(*module, "m")),
            std::vector<int64_t>{0});
  EXPECT_FALSE(EquivalentBroadcastDimensions(Find(*module, "bad"), Find(*module, "m")).has_value());

  Match match;
  // The longest chain first: a rank-1 base is the parameter itself and every
  // reshape and broadcast above it is a member.
  ASSERT_TRUE(Matches(top, BroadcastChain(Capture("v", Any().WithRank(1))), &match));
  EXPECT_EQ(match.Get("v"), Find(*module, "b"));
  EXPECT_EQ(match.members().size(), 4u);
  // A base that only matches higher up gives a shorter chain.
  ASSERT_TRUE(Matches(
      top, BroadcastChain(Capture("v", Op(HloOpcode::kReshape).WithRank(1).AsInput())), &match));
  EXPECT_EQ(match.Get("v"), Find(*module, "r2"));
  EXPECT_EQ(match.members().size(), 1u);
  // A real reshape (8 -> 2x4) is not a broadcast.
  EXPECT_FALSE(Matches(Find(*module, "bad"), BroadcastChain(Op(HloOpcode::kParameter))));
}

TEST(Matcher, ElementwiseOfFindsTheSingleInput) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] add(a, b)
  c = f32[] constant(0.5)
  h = f32[4] broadcast(c), dimensions={}
  t = f32[4] tanh(x)
  m = f32[4] multiply(t, h)
  y = f32[4] multiply(x, m)
  z = f32[4] multiply(y, a)
  ROOT r = (f32[4], f32[4]) tuple(y, z)
})");
  Pattern input = Capture("x", Op(HloOpcode::kAdd));
  Match match;
  ASSERT_TRUE(Matches(Find(*module, "y"), ElementwiseOf(input), &match));
  EXPECT_EQ(match.Get("x"), Find(*module, "x"));
  // y, m, t, h, c and the input add itself (a member of `input`).
  EXPECT_EQ(match.members().size(), 6u);
  // z also reads `a` directly: two inputs.
  EXPECT_FALSE(Matches(Find(*module, "z"), ElementwiseOf(input)));
  // The walk gives up past the limit.
  EXPECT_FALSE(Matches(Find(*module, "y"), ElementwiseOf(input, 2)));
}

TEST(Matcher, SplatConstantsWithinTypeTolerance) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  c = f32[] constant(0.797884583)
  bc = f32[4] broadcast(c), dimensions={}
  v = f32[3] constant({2, 2, 2})
  w = f32[3] constant({2, 2, 3})
  h = bf16[] constant(0.0446777)
  ninf = f32[] constant(-inf)
  ROOT t = (f32[4], f32[3], f32[3], bf16[], f32[]) tuple(bc, v, w, h, ninf)
})");
  EXPECT_TRUE(Matches(Find(*module, "bc"), SplatConstant(0.7978845608028654)));
  EXPECT_FALSE(Matches(Find(*module, "bc"), SplatConstant(0.7978)));
  EXPECT_TRUE(Matches(Find(*module, "v"), SplatConstant(2)));
  EXPECT_FALSE(Matches(Find(*module, "w"), AnySplatConstant()));
  EXPECT_TRUE(Matches(Find(*module, "h"), SplatConstant(0.044715)));  // bf16 rounding
  EXPECT_TRUE(Matches(Find(*module, "ninf"), SplatConstant(-INFINITY)));
  EXPECT_EQ(SplatValue(Find(*module, "bc")), static_cast<double>(0.797884583f));
}

TEST(Matcher, ReducerKinds) {
  auto module = Parse(R"(
HloModule m
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  init = f32[] constant(-inf)
  ROOT r = f32[8] reduce(x, init), dimensions={1}, to_apply=max
})");
  EXPECT_TRUE(IsReduceWith(*Find(*module, "r"), HloOpcode::kMaximum));
  EXPECT_FALSE(IsReduceWith(*Find(*module, "r"), HloOpcode::kAdd));
}

TEST(Matcher, ToStringDescribesThePattern) {
  Pattern p = Op(HloOpcode::kAdd)
                  .WithOperands(Capture("dot", Op(HloOpcode::kDot)), Broadcast(Capture("bias")))
                  .Commutative();
  EXPECT_EQ(p.ToString(), "add(capture dot: dot, broadcast(capture bias: *)) commutative");
}

}  // namespace
}  // namespace hloc::pattern
