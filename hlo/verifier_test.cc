// Tests of the HLO verifier. Structural rules that HLO text cannot express
// (broken edges, cycles, duplicate ids) build modules through the IR API;
// the per-op shape rules are written as HLO text.
#include "hlo/verifier.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/module.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

using ::testing::HasSubstr;

Layout MinorToMajor(std::vector<int64_t> minor_to_major) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  return layout;
}

Shape F32(std::vector<int64_t> dims) { return Shape(xla::F32, std::move(dims)); }

std::string Message(const absl::Status& status) {
  return status.ok() ? "OK" : std::string(status.message());
}

// entry: p0 = f32[2] parameter(0); p1 = f32[2] parameter(1); add = add(p0, p1).
struct SmallModule {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("small");
  HloComputation* entry = nullptr;
  HloInstruction* p0 = nullptr;
  HloInstruction* p1 = nullptr;
  HloInstruction* add = nullptr;

  SmallModule() {
    auto computation = std::make_unique<HloComputation>("main");
    p0 = computation->AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "p0"));
    p1 = computation->AddInstruction(HloInstruction::CreateParameter(1, F32({2}), "p1"));
    add = computation->AddInstruction(HloInstruction::Create(HloOpcode::kAdd, F32({2}), {p0, p1}));
    computation->set_root(add);
    entry = module->AddEntryComputation(std::move(computation));
  }

  // A computation (x: f32[], y: f32[]) -> add(x, y), added to the module.
  HloComputation* AddScalarAdder(const std::string& name) {
    auto computation = std::make_unique<HloComputation>(name);
    HloInstruction* x = computation->AddInstruction(
        HloInstruction::CreateParameter(0, Shape::Scalar(xla::F32), "x"));
    HloInstruction* y = computation->AddInstruction(
        HloInstruction::CreateParameter(1, Shape::Scalar(xla::F32), "y"));
    computation->set_root(computation->AddInstruction(
        HloInstruction::Create(HloOpcode::kAdd, Shape::Scalar(xla::F32), {x, y})));
    return module->AddComputation(std::move(computation));
  }
};

TEST(VerifierIrTest, ValidModulePasses) {
  SmallModule m;
  EXPECT_EQ(Message(VerifyModule(*m.module)), "OK");
}

TEST(VerifierIrTest, MissingEntry) {
  SmallModule m;
  m.module->set_entry(nullptr);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("module small: [entry] module has no entry computation"));
}

TEST(VerifierIrTest, MissingRoot) {
  SmallModule m;
  m.entry->set_root(nullptr);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("computation main: [root] computation has no root instruction"));
}

TEST(VerifierIrTest, DuplicateInstructionName) {
  SmallModule m;
  m.p1->set_name("p0");
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("computation main, instruction %p0: [unique-name] name is also used"));
}

TEST(VerifierIrTest, DuplicateUniqueId) {
  SmallModule m;
  m.add->set_unique_id(m.p0->unique_id());
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[unique-id] unique id 0 is also used by %p0"));
}

TEST(VerifierIrTest, ParameterNumbersMustBeDense) {
  auto module = std::make_unique<HloModule>("m");
  auto computation = std::make_unique<HloComputation>("main");
  HloInstruction* p =
      computation->AddInstruction(HloInstruction::CreateParameter(1, F32({2}), "p"));
  computation->set_root(p);
  module->AddEntryComputation(std::move(computation));
  EXPECT_THAT(Message(VerifyModule(*module)),
              HasSubstr("instruction %p: [parameter-number] parameter number 1 is outside [0, 1)"));
}

TEST(VerifierIrTest, ParameterNumbersMustBeUnique) {
  auto module = std::make_unique<HloModule>("m");
  auto computation = std::make_unique<HloComputation>("main");
  HloInstruction* a =
      computation->AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "a"));
  HloInstruction* b =
      computation->AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "b"));
  computation->set_root(computation->AddInstruction(HloInstruction::CreateTuple({a, b})));
  module->AddEntryComputation(std::move(computation));
  EXPECT_THAT(Message(VerifyModule(*module)),
              HasSubstr("[parameter-number] parameter number 0 is also used by %a"));
}

TEST(VerifierIrTest, OperandFromAnotherComputation) {
  SmallModule m;
  auto other = std::make_unique<HloComputation>("other");
  HloInstruction* q = other->AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "q"));
  HloInstruction* neg =
      other->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({2}), {m.p0}));
  other->set_root(q);
  (void)neg;
  m.module->AddComputation(std::move(other));
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("computation other, instruction %negate: [operand] operand 0 %p0 "
                        "belongs to computation main"));
}

TEST(VerifierIrTest, ControlEdgeIntoAnotherComputation) {
  SmallModule m;
  HloComputation* adder = m.AddScalarAdder("adder");
  m.p0->AddControlDependencyTo(adder->root());
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("instruction %p0: [control] control successor is null or in another "
                        "computation"));
}

TEST(VerifierIrTest, CycleThroughOperands) {
  SmallModule m;
  HloInstruction* a =
      m.entry->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({2}), {m.p0}));
  a->set_name("a");
  HloInstruction* b =
      m.entry->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({2}), {a}));
  b->set_name("b");
  a->ReplaceOperandWith(0, b);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[cycle] instruction depends on itself through operands and control "
                        "predecessors: %a <- %b <- %a"));
}

TEST(VerifierIrTest, CycleThroughControlDependency) {
  SmallModule m;
  // add uses p0; making add a control predecessor of p0 closes a cycle.
  m.add->AddControlDependencyTo(m.p0);
  EXPECT_THAT(Message(VerifyModule(*m.module)), HasSubstr("[cycle]"));
  EXPECT_THAT(Message(VerifyModule(*m.module)), HasSubstr("%p0"));
  EXPECT_THAT(Message(VerifyModule(*m.module)), HasSubstr("%add"));
}

TEST(VerifierIrTest, RecursiveCallGraph) {
  SmallModule m;
  // f calls g, g calls f.
  auto make = [&](const std::string& name) {
    auto c = std::make_unique<HloComputation>(name);
    HloInstruction* x =
        c->AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "x_" + name));
    c->set_root(x);
    return m.module->AddComputation(std::move(c));
  };
  HloComputation* f = make("f");
  HloComputation* g = make("g");
  HloInstruction* call_g = f->AddInstruction(HloInstruction::CreateCall(g, {f->parameter(0)}));
  f->set_root(call_g);
  HloInstruction* call_f = g->AddInstruction(HloInstruction::CreateCall(f, {g->parameter(0)}));
  g->set_root(call_f);
  m.entry->set_root(m.entry->AddInstruction(HloInstruction::CreateCall(f, {m.add})));
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[recursive-call] computation calls itself: f -> g -> f"));
}

TEST(VerifierIrTest, CalledComputationOutsideModule) {
  SmallModule m;
  auto stray = std::make_unique<HloComputation>("stray");
  HloInstruction* x = stray->AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "x"));
  stray->set_root(x);
  m.entry->set_root(m.entry->AddInstruction(HloInstruction::CreateCall(stray.get(), {m.add})));
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[called-computation] called computation stray is not in the module"));
}

TEST(VerifierIrTest, ShapeMismatch) {
  SmallModule m;
  m.add->set_shape(F32({3}));
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("computation main, instruction %add: [shape] declared shape f32[3] but add "
                        "of its operands gives f32[2]"));
  VerifierOptions structure_only;
  structure_only.check_shapes = false;
  EXPECT_EQ(Message(VerifyModule(*m.module, structure_only)), "OK");
}

TEST(VerifierIrTest, MixedPrecisionOption) {
  SmallModule m;
  m.add->set_shape(Shape(xla::BF16, {2}));
  EXPECT_THAT(Message(VerifyModule(*m.module)), HasSubstr("[shape]"));
  VerifierOptions mixed;
  mixed.allow_mixed_precision = true;
  EXPECT_EQ(Message(VerifyModule(*m.module, mixed)), "OK");
}

TEST(VerifierIrTest, InvalidDeclaredShape) {
  SmallModule m;
  Shape bad = F32({2});
  bad.set_layout(MinorToMajor({1}));
  m.add->set_shape(bad);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[valid-shape] layout of f32[2]{1} is not a permutation"));
}

TEST(VerifierIrTest, WrongOperandCount) {
  SmallModule m;
  HloInstruction* neg =
      m.entry->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({2}), {m.p0, m.p1}));
  m.entry->set_root(neg);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[operand-count] negate takes 1 operands, got 2"));
}

TEST(VerifierIrTest, UnexpectedCalledComputation) {
  SmallModule m;
  m.add->AppendCalledComputation(m.AddScalarAdder("adder"));
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[called-computation] add calls 1 computations, expected 0"));
}

TEST(VerifierIrTest, CompositeRules) {
  SmallModule m;
  m.add->set_is_composite(true);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[composite] only call instructions may be composite"));
  m.add->set_is_composite(false);
  HloComputation* adder = m.AddScalarAdder("adder");
  HloInstruction* x =
      m.entry->AddInstruction(HloInstruction::CreateConstant(Literal::Scalar(xla::F32, 1.0)));
  HloInstruction* call = m.entry->AddInstruction(HloInstruction::CreateCall(adder, {x, x}));
  call->set_is_composite(true);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[composite] composite call has no composite.name frontend attribute"));
  call->SetFrontendAttribute("composite.name", "my.add");
  EXPECT_EQ(Message(VerifyModule(*m.module)), "OK");
}

TEST(VerifierIrTest, FusionBackPointer) {
  SmallModule m;
  auto fused = std::make_unique<HloComputation>("fused");
  HloInstruction* a = fused->AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "fa"));
  fused->set_root(fused->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({2}), {a})));
  HloComputation* fused_ptr = m.module->AddComputation(std::move(fused));
  HloInstruction* fusion =
      m.entry->AddInstruction(HloInstruction::CreateFusion(fused_ptr, FusionKind::kLoop, {m.add}));
  m.entry->set_root(fusion);
  EXPECT_EQ(fused_ptr->fusion_instruction(), fusion);  // CreateFusion links both ways.
  fused_ptr->set_fusion_instruction(nullptr);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[fusion] fused computation fused does not point back to this fusion"));
  fused_ptr->set_fusion_instruction(fusion);
  EXPECT_EQ(Message(VerifyModule(*m.module)), "OK");
  // A second caller of a fused computation is rejected.
  HloInstruction* call = m.entry->AddInstruction(HloInstruction::CreateCall(fused_ptr, {m.p0}));
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("instruction %" + call->name() +
                        ": [fusion] calls fused computation fused that belongs to fusion %"));
}

TEST(VerifierIrTest, FusionParametersMustMatchOperands) {
  SmallModule m;
  auto fused = std::make_unique<HloComputation>("fused");
  HloInstruction* a = fused->AddInstruction(HloInstruction::CreateParameter(0, F32({3}), "fa"));
  fused->set_root(a);
  HloComputation* fused_ptr = m.module->AddComputation(std::move(fused));
  HloInstruction* fusion =
      m.entry->AddInstruction(HloInstruction::CreateFusion(fused_ptr, FusionKind::kLoop, {m.add}));
  fused_ptr->set_fusion_instruction(fusion);
  m.entry->set_root(fusion);
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("[shape] fusion %fusion: parameter 0 of the called computation is f32[3] "
                        "but operand 0 is f32[2]"));
}

TEST(VerifierIrTest, EntryComputationLayout) {
  SmallModule m;
  ProgramShape layout;
  layout.parameters = {F32({2}), F32({2})};
  layout.result = F32({2});
  m.module->mutable_config()->entry_computation_layout = layout;
  EXPECT_EQ(Message(VerifyModule(*m.module)), "OK");
  layout.result = F32({4});
  m.module->mutable_config()->entry_computation_layout = layout;
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("computation main: [entry-layout] entry_computation_layout result is "
                        "f32[4] but the entry has f32[2]"));
  layout.parameters.pop_back();
  m.module->mutable_config()->entry_computation_layout = layout;
  EXPECT_THAT(Message(VerifyModule(*m.module)),
              HasSubstr("entry_computation_layout has 1 parameters, the entry 2"));
}

TEST(VerifierIrTest, LayoutSensitive) {
  SmallModule m;
  VerifierOptions options;
  options.layout_sensitive = true;
  EXPECT_THAT(Message(VerifyModule(*m.module, options)),
              HasSubstr("instruction %p0: [layout] array shape f32[2] has no layout"));
  for (HloInstruction* i : {m.p0, m.p1, m.add}) {
    i->mutable_shape()->set_layout(MinorToMajor({0}));
  }
  EXPECT_EQ(Message(VerifyModule(*m.module, options)), "OK");
  Shape matrix = F32({2, 2});
  matrix.set_layout(MinorToMajor({0, 1}));
  HloInstruction* p = m.entry->AddInstruction(HloInstruction::CreateParameter(2, matrix, "pm"));
  HloInstruction* tuple = m.entry->AddInstruction(HloInstruction::CreateTuple({m.add, p}));
  m.entry->set_root(tuple);
  EXPECT_EQ(Message(VerifyModule(*m.module, options)), "OK");
  tuple->mutable_shape()->mutable_tuple_shapes()->at(1).set_layout(MinorToMajor({1, 0}));
  EXPECT_THAT(Message(VerifyModule(*m.module, options)),
              HasSubstr("[layout] tuple element 1 vs operand: f32[2,2]{1,0} vs f32[2,2]{0,1}"));
  // Layout-insensitive verification ignores it.
  EXPECT_EQ(Message(VerifyModule(*m.module)), "OK");
}

// ---------------------------------------------------------------- HLO text

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

// The modules of testdata/every_opcode.hlo (one per op family) are valid.
TEST(VerifierTextTest, EveryOpcodeModulesVerify) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  ASSERT_TRUE(srcdir != nullptr && workspace != nullptr) << "run under bazel test";
  const std::string path = absl::StrCat(srcdir, "/", workspace, "/hlo/testdata/every_opcode.hlo");
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  auto modules = ParseHloModules(text.str());
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  ASSERT_GE(modules->size(), 6u);
  for (const auto& module : *modules) {
    EXPECT_EQ(Message(VerifyModule(*module)), "OK") << module->name();
  }
}

struct InvalidCase {
  const char* name;
  const char* text;     // The whole module, or an ENTRY body when it has no "HloModule".
  const char* message;  // A piece of the expected error.
};

// Reducers and comparators the invalid cases call.
const char* const kHelpers = R"(
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

add_tuple {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT t = (f32[], f32[]) tuple(s, s)
}

lt_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}

neg_f32 {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}

state_cond {
  s = (s32[], f32[4]) parameter(0)
  ROOT i = s32[] get-tuple-element(s), index=0
}

state_cond_pred {
  s = (s32[], f32[4]) parameter(0)
  ROOT t = pred[] constant(true)
}

state_body {
  s = (s32[], f32[4]) parameter(0)
  ROOT v = f32[4] get-tuple-element(s), index=1
}

scalar_body {
  s = f32[] parameter(0)
  ROOT n = f32[] negate(s)
}

branch_f32 {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}

branch_s32 {
  a = s32[] parameter(0)
  ROOT c = f32[] convert(a)
}

branch_s32_to_s32 {
  a = s32[] parameter(0)
  ROOT n = s32[] negate(a)
}

two_params {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] add(a, b)
}
)";

const InvalidCase kInvalidCases[] = {
    {"add_dims", "a = f32[2] parameter(0)\nb = f32[3] parameter(1)\nROOT r = f32[2] add(a, b)",
     "add %r: lhs f32[2] and rhs f32[3] have different dimensions"},
    {"add_scalar_not_broadcast",
     "a = f32[] parameter(0)\nb = f32[3] parameter(1)\nROOT r = f32[3] add(a, b)",
     "lhs f32[] and rhs f32[3] have different dimensions (no implicit broadcasting)"},
    {"add_types", "a = f32[2] parameter(0)\nb = s32[2] parameter(1)\nROOT r = f32[2] add(a, b)",
     "lhs element type f32 differs from rhs element type s32"},
    {"declared_mismatch", "a = f32[2] parameter(0)\nROOT r = f32[3] negate(a)",
     "instruction %r: [shape] declared shape f32[3] but negate of its operands gives f32[2]"},
    {"exp_of_int", "a = s32[2] parameter(0)\nROOT r = s32[2] exponential(a)",
     "exponential needs floating-point or complex operands, got s32[2]"},
    {"compare_result_type", "a = f32[2] parameter(0)\nROOT r = f32[2] compare(a, a), direction=EQ",
     "declared shape f32[2] but compare of its operands gives pred[2]"},
    {"compare_type_attr",
     "a = f32[2] parameter(0)\nROOT r = pred[2] compare(a, a), direction=EQ, type=UNSIGNED",
     "comparison type UNSIGNED does not apply to f32 operands"},
    {"select_scalar_pred",
     "p = pred[] parameter(0)\na = f32[2] parameter(1)\nROOT r = f32[2] select(p, a, a)",
     "predicate pred[] must have the dimensions of on_true f32[2]"},
    {"clamp_bounds",
     "lo = f32[2] parameter(0)\na = f32[3] parameter(1)\nROOT r = f32[3] clamp(lo, a, a)",
     "min f32[2] must be a scalar or have the dimensions of operand f32[3]"},
    {"complex_maximum", "a = c64[2] parameter(0)\nROOT r = c64[2] maximum(a, a)",
     "maximum needs pred, integer or floating-point operands, got c64[2]"},
    {"complex_remainder", "a = c128[2] parameter(0)\nROOT r = c128[2] remainder(a, a)",
     "remainder needs pred, integer or floating-point operands, got c128[2]"},
    {"complex_cbrt", "a = c64[2] parameter(0)\nROOT r = c64[2] cbrt(a)",
     "cbrt needs floating-point operands, got c64[2]"},
    {"complex_order", "a = c64[2] parameter(0)\nROOT r = pred[2] compare(a, a), direction=LT",
     "complex operands (c64[2]) compare only for EQ and NE, not LT"},
    {"convert_complex", "a = c64[2] parameter(0)\nROOT r = f32[2] convert(a)",
     "conversion from complex c64[2] to real type f32"},
    {"bitcast_convert_width", "a = f32[2] parameter(0)\nROOT r = f16[2] bitcast-convert(a)",
     "declared shape f16[2] but bitcast-convert of its operands gives f16[2,2]"},
    {"reduce_precision_bits",
     "a = f32[2] parameter(0)\nROOT r = f32[2] reduce-precision(a), exponent_bits=0, "
     "mantissa_bits=3",
     "exponent_bits=0 must be at least 1"},
    {"broadcast_sizes", "a = f32[3] parameter(0)\nROOT r = f32[2,4] broadcast(a), dimensions={0}",
     "operand dimension 0 has size 3 but maps to result dimension 0 of size 2"},
    {"reshape_count", "a = f32[2,3] parameter(0)\nROOT r = f32[5] reshape(a)",
     "reshape from f32[2,3] (6 elements) to f32[5] (5 elements) changes the element count"},
    {"transpose_repeat",
     "a = f32[2,3] parameter(0)\nROOT r = f32[2,2] transpose(a), dimensions={0,0}",
     "dimensions={0,0} repeats dimension 0"},
    {"slice_limit", "a = f32[4] parameter(0)\nROOT r = f32[3] slice(a), slice={[2:5]}",
     "slice limit 5 in dimension 0 exceeds the operand size 4"},
    {"dynamic_slice_size",
     "a = f32[4] parameter(0)\ni = s32[] parameter(1)\nROOT r = f32[5] dynamic-slice(a, i), "
     "dynamic_slice_sizes={5}",
     "slice size 5 in dimension 0 exceeds the operand size 4"},
    {"dynamic_slice_index_count",
     "a = f32[4,4] parameter(0)\ni = s32[] parameter(1)\nROOT r = f32[1,1] dynamic-slice(a, i), "
     "dynamic_slice_sizes={1,1}",
     "expected 2 start indices (one per operand dimension), got 1"},
    {"dus_update_size",
     "a = f32[4] parameter(0)\nu = f32[5] parameter(1)\ni = s32[] parameter(2)\n"
     "ROOT r = f32[4] dynamic-update-slice(a, u, i)",
     "update dimension 0 has size 5, larger than the operand's 4"},
    {"concatenate_dims",
     "a = f32[2,1] parameter(0)\nb = f32[3,1] parameter(1)\nROOT r = f32[2,2] concatenate(a, b), "
     "dimensions={1}",
     "operand 1 f32[3,1] differs from operand 0 f32[2,1] in dimension 0"},
    {"pad_negative",
     "a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT r = f32[0] pad(a, z), padding=-3_-3",
     "padding dimension 0 (size 4, low -3, high -3, interior 0) gives negative size -2"},
    {"iota_dimension", "ROOT r = s32[4,5] iota(), iota_dimension=2",
     "iota_dimension 2 is out of range for rank 2"},
    {"gte_index",
     "a = f32[] parameter(0)\nt = (f32[], f32[]) tuple(a, a)\nROOT r = f32[] "
     "get-tuple-element(t), index=2",
     "index=2 is out of range for a tuple of 2 elements"},
    {"reduce_reducer_type",
     "a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT r = f32[] reduce(a, z), "
     "dimensions={0}, to_apply=add_s32",
     "reducer parameter 0 must be f32[], got s32[]"},
    {"reduce_reducer_arity",
     "a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT r = f32[] reduce(a, z), "
     "dimensions={0}, to_apply=neg_f32",
     "reducer takes 1 parameters, expected 2"},
    {"reduce_reducer_result",
     "a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT r = f32[] reduce(a, z), "
     "dimensions={0}, to_apply=add_tuple",
     "reducer must return a tuple of 1 scalars, got (f32[], f32[])"},
    {"reduce_dimension",
     "a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT r = f32[] reduce(a, z), "
     "dimensions={1}, to_apply=add_f32",
     "dimensions={1}: dimension 1 is out of range for rank 1"},
    {"reduce_window_rank",
     "a = f32[4,4] parameter(0)\nz = f32[] constant(0)\nROOT r = f32[2] reduce-window(a, z), "
     "window={size=2}, to_apply=add_f32",
     "window has 1 dimensions but operand f32[4,4] has rank 2"},
    {"select_and_scatter_source",
     "a = f32[4] parameter(0)\ns = f32[3] parameter(1)\nz = f32[] constant(0)\n"
     "ROOT r = f32[4] select-and-scatter(a, s, z), window={size=2 stride=2}, select=lt_f32, "
     "scatter=add_f32",
     "source f32[3] must have the shape of the windowed operand f32[2]"},
    {"dot_contracting",
     "a = f32[2,3] parameter(0)\nb = f32[4,5] parameter(1)\nROOT r = f32[2,5] dot(a, b), "
     "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "dot %r: lhs contracting dimension 1 has size 3, rhs contracting dimension 0 has size 4"},
    {"dot_batch",
     "a = f32[2,3,4] parameter(0)\nb = f32[5,4,6] parameter(1)\nROOT r = f32[2,3,6] dot(a, b), "
     "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
     "rhs_contracting_dims={1}",
     "lhs batch dimension 0 has size 2, rhs batch dimension 0 has size 5"},
    {"dot_result_order",
     "a = f32[2,3] parameter(0)\nb = f32[3,5] parameter(1)\nROOT r = f32[5,2] dot(a, b), "
     "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "declared shape f32[5,2] but dot of its operands gives f32[2,5]"},
    {"convolution_features",
     "a = f32[1,8,8,4] parameter(0)\nk = f32[3,3,3,16] parameter(1)\n"
     "ROOT r = f32[1,6,6,16] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f",
     "input feature dimension size 4 / feature_group_count=1 must equal the kernel input "
     "feature dimension size 3"},
    {"convolution_window",
     "a = f32[1,8,8,3] parameter(0)\nk = f32[3,3,3,16] parameter(1)\n"
     "ROOT r = f32[1,6,6,16] convolution(a, k), window={size=3x2}, dim_labels=b01f_01io->b01f",
     "window dimension 1 has size 2 but kernel spatial dimension 1 has size 3"},
    {"gather_collapsed",
     "a = f32[5,4] parameter(0)\ni = s32[3] parameter(1)\nROOT r = f32[3,4] gather(a, i), "
     "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={2,4}",
     "collapsed slice dimension 0 has slice size 2; it must be 0 or 1"},
    {"scatter_window",
     "a = f32[5,4] parameter(0)\ni = s32[3] parameter(1)\nu = f32[3,6] parameter(2)\n"
     "ROOT r = f32[5,4] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, "
     "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32",
     "update window dimension 1 has size 6, larger than operand dimension 1 of size 4"},
    {"sort_comparator_arity",
     "a = f32[4] parameter(0)\nb = s32[4] parameter(1)\nROOT r = (f32[4], s32[4]) sort(a, b), "
     "dimensions={0}, to_apply=lt_f32",
     "comparator takes 2 parameters, expected 4 (two per operand)"},
    {"sort_comparator_result",
     "a = f32[4] parameter(0)\nROOT r = f32[4] sort(a), dimensions={0}, to_apply=add_f32",
     "comparator result must be pred[], got f32[]"},
    {"map_arity",
     "a = f32[4] parameter(0)\nROOT r = f32[4] map(a, a), dimensions={0}, to_apply=neg_f32",
     "to_apply takes 1 parameters, map has 2 operands"},
    {"while_body_result",
     "i = s32[] constant(0)\nv = f32[4] parameter(0)\nt = (s32[], f32[4]) tuple(i, v)\n"
     "ROOT r = (s32[], f32[4]) while(t), condition=state_cond_pred, body=state_body",
     "body result f32[4] differs from its parameter (s32[], f32[4])"},
    {"while_condition_result",
     "v = f32[] parameter(0)\nROOT r = f32[] while(v), condition=neg_f32, body=scalar_body",
     "condition result must be pred[], got f32[]"},
    {"while_condition_parameter",
     "i = s32[] constant(0)\nv = f32[4] parameter(0)\nt = (s32[], f32[4]) tuple(i, v)\n"
     "ROOT r = (s32[], f32[4]) while(t), condition=lt_f32, body=state_body",
     "condition takes 2 parameters, expected 1"},
    {"conditional_parameter",
     "k = s32[] parameter(0)\na = f32[] parameter(1)\nROOT r = f32[] conditional(k, a, a), "
     "branch_computations={branch_f32, branch_s32}",
     "branch 1 parameter s32[] differs from its operand f32[]"},
    {"conditional_results",
     "k = s32[] parameter(0)\na = f32[] parameter(1)\nb = s32[] parameter(2)\n"
     "ROOT r = f32[] conditional(k, a, b), branch_computations={branch_f32, branch_s32_to_s32}",
     "branch 1 returns s32[] but branch 0 returns f32[]"},
    {"conditional_pred_branches",
     "p = pred[] parameter(0)\na = f32[] parameter(1)\nROOT r = f32[] conditional(p, a, a, a), "
     "branch_computations={branch_f32, branch_f32, branch_f32}",
     "a pred branch index selects between 2 branches, got 3"},
    {"call_arity", "a = f32[2] parameter(0)\nROOT r = f32[2] call(a), to_apply=two_params",
     "called computation takes 2 parameters but 1 operands are passed"},
    {"topk_k", "a = f32[4,8] parameter(0)\nROOT r = (f32[4,9], s32[4,9]) topk(a), k=9",
     "k=9 is outside [0, 8], the size of the last dimension"},
    {"fft_type", "a = f32[8] parameter(0)\nROOT r = f32[8] fft(a), fft_type=FFT, fft_length={8}",
     "FFT/IFFT need a complex operand, got f32[8]"},
    {"cholesky_square", "a = f32[4,3] parameter(0)\nROOT r = f32[4,3] cholesky(a)",
     "cholesky needs square matrices in the two minor dimensions, got f32[4,3]"},
    {"triangular_solve_sizes",
     "a = f32[4,4] parameter(0)\nb = f32[3,2] parameter(1)\nROOT r = f32[3,2] "
     "triangular-solve(a, b), left_side=true",
     "a f32[4,4] has size 4 but b f32[3,2] dimension 0 has size 3"},
    {"batch_norm_feature",
     "x = f32[2,3] parameter(0)\ns = f32[2] parameter(1)\nROOT r = (f32[2,3], f32[3], f32[3]) "
     "batch-norm-training(x, s, s), epsilon=0.001, feature_index=1",
     "scale f32[2] must be a vector of the 3 features of operand dimension 1"},
    {"after_all_operand", "a = f32[] parameter(0)\nROOT r = token[] after-all(a)",
     "operand 0 must be a token, got f32[]"},
    {"get_dimension_size",
     "a = f32[4] parameter(0)\nROOT r = s32[] get-dimension-size(a), dimensions={1}",
     "dimension 1 is out of range for rank 1"},
    {"set_dimension_size_type",
     "a = f32[4] parameter(0)\nn = s64[] parameter(1)\nROOT r = f32[<=4] "
     "set-dimension-size(a, n), dimensions={0}",
     "size operand must be s32[], got s64[]"},
    {"rng_normal_int", "a = s32[] parameter(0)\nROOT r = s32[3] rng(a, a), distribution=rng_normal",
     "normal rng needs floating-point parameters"},
    {"all_gather_dims",
     "a = f32[4,3] parameter(0)\nROOT r = f32[4,8] all-gather(a), dimensions={1}, "
     "replica_groups={{0,1}}",
     "dimension 1 of size 3 cannot become 8 by gathering over whole shards"},
    {"ragged_all_to_all_rows",
     "a = f32[4,3] parameter(0)\nb = f32[6,2] parameter(1)\ni = s32[2] parameter(2)\n"
     "ROOT r = f32[6,2] ragged-all-to-all(a, b, i, i, i, i), replica_groups={{0,1}}",
     "input f32[4,3] and output f32[6,2] differ in dimension 1; only dimension 0 may differ"},
    {"ragged_all_to_all_index_type",
     "a = f32[4] parameter(0)\ni = u32[2] parameter(1)\n"
     "ROOT r = f32[4] ragged-all-to-all(a, a, i, i, i, i), replica_groups={{0,1}}",
     "input_offsets u32[2] must be s32 or s64"},
    {"ragged_all_to_all_index_shapes",
     "a = f32[4] parameter(0)\ni = s32[2] parameter(1)\nj = s64[2] parameter(2)\n"
     "ROOT r = f32[4] ragged-all-to-all(a, a, i, i, j, i), replica_groups={{0,1}}",
     "output_offsets s64[2] differs from input_offsets s32[2]"},
    {"ragged_all_to_all_scalar",
     "a = f32[] parameter(0)\ni = s32[2] parameter(1)\n"
     "ROOT r = f32[] ragged-all-to-all(a, a, i, i, i, i), replica_groups={{0,1}}",
     "must be arrays of one type and rank (at least 1)"},
    {"ragged_all_to_all_entries_per_peer",
     "a = f32[4] parameter(0)\ni = s32[3] parameter(1)\n"
     "ROOT r = f32[4] ragged-all-to-all(a, a, i, i, i, i), replica_groups={{0,1}}",
     "operand 2 s32[3] does not hold the same number of entries for each of the 2 group members"},
    {"copy_start_shape", "a = f32[4] parameter(0)\nROOT r = (f32[4], f32[5], u32[]) copy-start(a)",
     "declared shape (f32[4], f32[5], u32[]) but copy-start of its operands gives "
     "(f32[4], f32[4], u32[])"},
    {"bitcast_size", "a = f32[4] parameter(0)\nROOT r = f32[5] bitcast(a)",
     "bitcast from f32[4] to f32[5] changes the size in bits"},
    {"custom_call_aliasing",
     "a = f32[4] parameter(0)\nROOT r = f32[5] custom-call(a), custom_call_target=\"x\", "
     "output_to_operand_aliasing={{}: (0, {})}",
     "output_to_operand_aliasing pairs output f32[5] with operand 0 f32[4] of another shape"},
    {"composite_without_name",
     "a = f32[2] parameter(0)\nROOT r = f32[2] call(a, a), to_apply=two_params, "
     "is_composite=true",
     "[composite] composite call has no composite.name frontend attribute"},
    {"entry_layout",
     "HloModule m, entry_computation_layout={(f32[2]{0})->f32[3]{0}}\n\nENTRY e {\n"
     "  a = f32[2] parameter(0)\n  ROOT r = f32[2] negate(a)\n}\n",
     "[entry-layout] entry_computation_layout result is f32[3]{0} but the entry has f32[2]"},
    {"entry_layout_unbounded_parameter",
     "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}\n\nENTRY e {\n"
     "  a = f32[2,?] parameter(0)\n  ROOT r = f32[2,3] cosine(a)\n}\n",
     "[entry-layout] entry_computation_layout parameter 0 is f32[2,3]{1,0} but the entry has "
     "f32[2,?]"},
    {"fusion_parameter",
     "HloModule m\n\nfused {\n  a = f32[3] parameter(0)\n  ROOT n = f32[3] negate(a)\n}\n\n"
     "ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT r = f32[3] fusion(a), kind=kLoop, "
     "calls=fused\n}\n",
     "fusion %r: parameter 0 of the called computation is f32[3] but operand 0 is f32[2]"},
    {"async_start_operands",
     "HloModule m\n\nwrapped {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n\n"
     "ENTRY e {\n  a = f32[4] parameter(0)\n  s = ((f32[5]), f32[4]) async-start(a), "
     "calls=wrapped\n  ROOT d = f32[4] async-done(s)\n}\n",
     "result element 0 (f32[5]) must be the tuple of the operand shapes"},
};

TEST(VerifierTextTest, InvalidModules) {
  ASSERT_GE(sizeof(kInvalidCases) / sizeof(kInvalidCases[0]), 40u);
  for (const InvalidCase& c : kInvalidCases) {
    SCOPED_TRACE(c.name);
    std::string text = c.text;
    if (text.rfind("HloModule", 0) != 0) {
      // The entry comes first so that its names keep their spelling.
      text = absl::StrCat("HloModule ", c.name, "\n\nENTRY main {\n", text, "\n}\n", kHelpers);
    }
    std::unique_ptr<HloModule> module = Parse(text);
    if (module == nullptr) continue;
    EXPECT_THAT(Message(VerifyModule(*module)), HasSubstr(c.message));
  }
}

// A rejected instruction is named with its computation and the rule.
TEST(VerifierTextTest, MessageNamesComputationInstructionAndRule) {
  std::unique_ptr<HloModule> module = Parse(R"(HloModule m

ENTRY entry_fn {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT the_dot = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Message(VerifyModule(*module)),
            "computation entry_fn, instruction %the_dot: [shape] dot %the_dot: lhs contracting "
            "dimension 1 has size 3, rhs contracting dimension 0 has size 4");
}

// input_output_alias and buffer_donor, as module header text over one entry:
// (f32[2,3], s32[6], (f32[4], f32[2])) -> (f32[6], f32[2,3]).
std::string AliasModule(const std::string& header) {
  return absl::StrCat("HloModule m", header, R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = s32[6] parameter(1)
  t = (f32[4], f32[2]) parameter(2)
  r = f32[6] reshape(a)
  ROOT out = (f32[6], f32[2,3]) tuple(r, a)
})");
}

std::string VerifyAliasText(const std::string& header) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(AliasModule(header));
  if (!module.ok()) return absl::StrCat("parse: ", module.status().message());
  return Message(VerifyModule(**module));
}

TEST(VerifierAliasTest, ValidPairsAndDonorsPass) {
  EXPECT_EQ(VerifyAliasText(", input_output_alias={ {1}: (0, {}, must-alias) }"), "OK");
  // Shapes differ, byte sizes agree: f32[2,3] and f32[6], f32[6] and s32[6].
  EXPECT_EQ(VerifyAliasText(", input_output_alias={ {0}: (0, {}, may-alias) }"), "OK");
  EXPECT_EQ(VerifyAliasText(", input_output_alias={ {0}: (1, {}) }"), "OK");
  EXPECT_EQ(VerifyAliasText(", buffer_donor={ (2, {0}), (1, {}) }"), "OK");
}

TEST(VerifierAliasTest, BadPairsAndDonorsNameTheBuffer) {
  const std::pair<const char*, const char*> cases[] = {
      {", input_output_alias={ {0}: (3, {}) }", "[input-output-alias] parameter 3 does not exist"},
      {", input_output_alias={ {2}: (0, {}) }", "output {2}"},
      {", input_output_alias={ {0}: (2, {5}) }", "parameter 2 {5}"},
      {", input_output_alias={ {0}: (2, {1}) }", "differ in byte size"},
      {", input_output_alias={ {}: (0, {}) }", "output {} is (f32[6], f32[2,3]), not an array"},
      {", input_output_alias={ {0}: (0, {}), {0}: (1, {}) }", "output {0} is aliased more than once"},
      {", input_output_alias={ {0}: (0, {}), {1}: (0, {}) }",
       "parameter 0 {} is aliased with more than one output"},
      {", buffer_donor={ (4, {}) }", "[buffer-donor] parameter 4 does not exist"},
      {", buffer_donor={ (0, {}), (0, {}) }", "listed twice"},
      {", input_output_alias={ {1}: (0, {}) }, buffer_donor={ (0, {}) }",
       "a donor and also in input_output_alias"},
  };
  for (const auto& [header, expected] : cases) {
    EXPECT_THAT(VerifyAliasText(header), HasSubstr(expected)) << header;
  }
}

// Found by the proto fuzzer: a proto can hold iota replica groups that the
// text form cannot say (the printed module did not parse). The verifier
// rejects them, naming the instruction.
TEST(VerifierReplicaGroupsTest, IotaGroupsMustBePrintable) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  ROOT g = s32[32] all-gather(p), channel_id=1, replica_groups=[1,8]<=[8], dimensions={0}
})";
  auto verify_with = [&](void (*edit)(xla::IotaReplicaGroupListProto*)) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status();
    if (!module.ok()) return std::string("parse failed");
    HloInstruction* gather = (*module)->entry()->root();
    xla::IotaReplicaGroupListProto iota = *gather->attrs().iota_replica_groups;
    edit(&iota);
    gather->mutable_attrs()->iota_replica_groups = iota;
    return Message(VerifyModule(**module));
  };
  EXPECT_EQ(verify_with([](xla::IotaReplicaGroupListProto*) {}), "OK");
  EXPECT_THAT(verify_with([](xla::IotaReplicaGroupListProto* iota) { iota->set_num_devices_per_group(0); }),
              HasSubstr("[replica-groups] iota replica groups [1,0] do not hold as many devices"));
  EXPECT_THAT(verify_with([](xla::IotaReplicaGroupListProto* iota) { iota->clear_iota_reshape_dims(); }),
              HasSubstr("[replica-groups]"));
  EXPECT_THAT(verify_with([](xla::IotaReplicaGroupListProto* iota) { iota->add_iota_transpose_perm(1); }),
              HasSubstr("is not a permutation"));
  EXPECT_THAT(verify_with([](xla::IotaReplicaGroupListProto* iota) {
                iota->set_num_replica_groups(int64_t{1} << 40);
                iota->set_num_devices_per_group(int64_t{1} << 40);
              }),
              HasSubstr("do not hold as many devices"));
}

// Found by the proto fuzzer in CI: a proto's maximal sharding naming no
// device verified, then printed as "{maximal}", which does not parse. Every
// sharding the text form cannot say is rejected, naming the instruction.
TEST(VerifierShardingTest, ShardingsMustBeWellFormed) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = f32[4,8] parameter(0), sharding={devices=[2,1]0,1}
  ROOT t = (f32[4,8], f32[4,8]) tuple(p, p), sharding={{maximal device=0}, {replicated}}
})";
  auto verify_with = [&](void (*edit)(xla::OpSharding*), bool on_root) {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status();
    if (!module.ok()) return std::string("parse failed");
    HloInstruction* target = on_root ? (*module)->entry()->root()
                                     : (*module)->entry()->root()->operand(0);
    xla::OpSharding sharding = target->sharding();
    edit(&sharding);
    target->set_sharding(sharding);
    return Message(VerifyModule(**module));
  };
  using S = xla::OpSharding;
  EXPECT_EQ(verify_with([](S*) {}, true), "OK");
  EXPECT_EQ(verify_with([](S*) {}, false), "OK");
  EXPECT_THAT(verify_with([](S* s) { s->mutable_tuple_shardings(0)->clear_tile_assignment_devices(); }, true),
              HasSubstr("[sharding] sharding: tuple element 0: a maximal sharding names exactly one device"));
  EXPECT_THAT(verify_with([](S* s) {
                S inner;
                inner.set_type(S::TUPLE);
                *inner.add_tuple_shardings() = s->tuple_shardings(0);
                *s->mutable_tuple_shardings(1) = inner;
              }, true),
              HasSubstr("tuple shardings do not nest"));
  EXPECT_EQ(verify_with([](S* s) { s->clear_tuple_shardings(); }, true), "OK");  // "{}"
  EXPECT_THAT(verify_with([](S* s) { s->add_tile_assignment_devices(2); }, false),
              HasSubstr("tile dimensions hold 2 devices but 3 are listed"));
  EXPECT_THAT(verify_with([](S* s) { s->clear_tile_assignment_dimensions(); }, false),
              HasSubstr("no tile dimensions"));
  EXPECT_THAT(verify_with([](S* s) { s->set_tile_assignment_dimensions(0, -2); }, false),
              HasSubstr("tile dimensions must be positive"));
  EXPECT_THAT(verify_with([](S* s) {
                s->clear_tile_assignment_devices();
                s->add_iota_reshape_dims(3);
              }, false),
              HasSubstr("iota dimensions must hold as many devices"));
  EXPECT_THAT(verify_with([](S* s) {
                s->clear_tile_assignment_devices();
                s->add_iota_reshape_dims(2);
                s->add_iota_transpose_perm(1);
              }, false),
              HasSubstr("permutation"));
  EXPECT_THAT(verify_with([](S* s) {
                s->set_replicate_on_last_tile_dim(true);
                s->add_last_tile_dims(S::MANUAL);
              }, false),
              HasSubstr("exclude each other"));
  EXPECT_THAT(verify_with([](S* s) { s->add_last_tile_dims(S::OTHER); }, false),
              HasSubstr("last_tile_dims hold only"));
  // Found by the proto fuzzer in CI: an enum number no sharding type has.
  EXPECT_THAT(verify_with([](S* s) { s->mutable_tuple_shardings(1)->set_type(static_cast<S::Type>(34)); }, true),
              HasSubstr("tuple element 1: sharding type 34 is not one XLA defines"));
}

}  // namespace
}  // namespace hloc

namespace hloc {
namespace {

// The proto fuzzer's find: a dot whose N:M sparsity had N >= M verified but
// printed as text no parser reads (L.1@10:4). Now the verifier says so.
TEST(VerifierSparsityTest, SparsityNeedsNBelowMOnAnOperandDimension) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = bf16[10,16] parameter(0)
  b = bf16[32,20] parameter(1)
  meta = u16[10,2] parameter(2)
  ROOT d = f32[10,20] dot(a, b, meta), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sparsity=L.1@2:4
})");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  HloInstruction* dot = (*module)->entry()->root();
  xla::SparsityConfig::TensorSparsityConfig* lhs =
      dot->mutable_carried_proto_fields()->mutable_sparsity_config()->mutable_lhs();
  lhs->set_num_non_zero(10);
  absl::Status status = VerifyModule(**module);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("sparsity L.1@10:4 needs 1 <= N < M"), std::string::npos)
      << status;
  lhs->set_num_non_zero(2);
  lhs->set_dimension(5);
  EXPECT_FALSE(VerifyModule(**module).ok());
}

// The proto fuzzer's next find: a dot whose precision config named
// algorithm 67 verified but printed as "algorithm=," (proto3 enums are open).
// Every enum-valued attribute is now checked against its enum.
TEST(VerifierEnumTest, EnumAttributesMustNameAValue) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={high,default}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  HloInstruction* dot = (*module)->entry()->root();
  xla::PrecisionConfig* config = dot->mutable_attrs()->precision_config.mutable_value();
  config->set_algorithm(static_cast<xla::PrecisionConfig::Algorithm>(67));
  absl::Status status = VerifyModule(**module);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("dot algorithm has no value 67"), std::string::npos) << status;
  config->set_algorithm(xla::PrecisionConfig::ALG_DOT_F32_F32_F32);
  EXPECT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  config->set_operand_precision(1, static_cast<xla::PrecisionConfig::Precision>(9));
  status = VerifyModule(**module);
  EXPECT_NE(status.message().find("operand_precision has no value 9"), std::string::npos) << status;
  config->set_operand_precision(1, xla::PrecisionConfig::DEFAULT);
  dot->mutable_attrs()->fft_type = static_cast<xla::FftType>(40);
  status = VerifyModule(**module);
  EXPECT_NE(status.message().find("fft_type has no value 40"), std::string::npos) << status;
}

// The proto fuzzer's find: two instructions named "constant.3?" and
// "constant.3!" in a proto are distinct names but both print as
// %constant.3_, so the printed module did not parse. Names are unique as
// printed.
TEST(VerifierNameTest, NamesMustStayDistinctWhenPrinted) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] negate(a)
  ROOT c = f32[2] add(a, b)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  HloInstruction* b = (*module)->entry()->root()->operand(1);
  b->set_name("x?");
  (*module)->entry()->root()->set_name("x!");
  absl::Status status = VerifyModule(**module);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("name prints as %x_, as does %x?"), std::string::npos) << status;
  b->set_name("x?y");
  EXPECT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  EXPECT_EQ(PrintedName("a->b"), "a__b");
  EXPECT_EQ(PrintedName("a-b.c_1"), "a-b.c_1");
  EXPECT_EQ(PrintedName(""), "_");
}

}  // namespace
}  // namespace hloc
