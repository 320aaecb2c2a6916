// scan through hloc's front end: text in and out (num_carries inferred when
// the text leaves it out), HloModuleProto in and out on both readers with
// nothing lost, and the verifier's located rejections of malformed scans.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/module.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

using ::testing::HasSubstr;

std::string Message(const absl::Status& status) {
  return status.ok() ? "OK" : std::string(status.message());
}

const HloInstruction* Find(const HloModule& module, absl::string_view name) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction;
    }
  }
  return nullptr;
}

// Two inputs of different ranks scanned along dimension 0, two carries,
// every attribute set.
constexpr char kFullScan[] = R"(HloModule m

step {
  a = s32[] parameter(0)
  b = f32[2] parameter(1)
  c0 = s32[] parameter(2)
  c1 = f32[2] parameter(3)
  n0 = s32[] add(c0, a)
  n1 = f32[2] add(c1, b)
  y = pred[] compare(a, c0), direction=GT
  ROOT t = (pred[], s32[], f32[2]) tuple(y, n0, n1)
}

ENTRY e {
  a = s32[6] parameter(0)
  b = f32[6,2] parameter(1)
  c0 = s32[] parameter(2)
  c1 = f32[2] parameter(3)
  ROOT scan = (pred[6], s32[], f32[2]) scan(a, b, c0, c1), dimensions={0}, num_carries=2, is_reverse=true, is_associative=false, to_apply=step
}
)";

TEST(ScanTextTest, PrintsEveryAttributeAndReparsesToTheSameText) {
  auto module = ParseHloModule(kFullScan);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  const HloInstruction* scan = Find(**module, "scan");
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(scan->opcode(), HloOpcode::kScan);
  EXPECT_EQ(scan->attrs().num_carries, 2);
  EXPECT_TRUE(scan->attrs().is_reverse);
  EXPECT_EQ(scan->attrs().is_associative, xla::TRI_STATE_FALSE);
  const std::string printed = PrintModule(**module);
  EXPECT_THAT(printed, HasSubstr("%c1.1), dimensions={0}, num_carries=2, is_reverse=true, "
                                 "is_associative=false, to_apply=%step\n"));
  auto again = ParseHloModule(printed);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(PrintModule(**again), printed);
}

TEST(ScanTextTest, DefaultsArePrintedOnlyWhereXlaPrintsThem) {
  auto module = ParseHloModule(R"(HloModule m
add_step {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  ROOT scan = (f32[4], f32[]) scan(x, zero), dimensions={0}, num_carries=1, to_apply=add_step
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* scan = Find(**module, "scan");
  ASSERT_NE(scan, nullptr);
  EXPECT_FALSE(scan->attrs().is_reverse);
  EXPECT_EQ(scan->attrs().is_associative, xla::TRI_STATE_UNSPECIFIED);
  EXPECT_THAT(PrintInstruction(*scan),
              HasSubstr("%zero), dimensions={0}, num_carries=1, to_apply=%add_step"));
  EXPECT_EQ(PrintInstruction(*scan).find("is_"), std::string::npos);
}

// XLA's first scan tests leave num_carries out; ranks tell inputs from
// carries (this is the mixed-type module of XLA's scan expander test).
TEST(ScanTextTest, MissingNumCarriesIsCountedFromToApply) {
  auto module = ParseHloModule(R"(HloModule complex_scan
body {
  p0 = s8[] parameter(0)
  p1 = s16[2] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s64[3,4] parameter(3)
  carry0 = u16[] parameter(4)
  carry1 = u32[5] parameter(5)
  carry2 = u64[] parameter(6)
  out0 = f32[6] constant({1.5, 1.5, 1.5, 1.5, 1.5, 1.5})
  out1 = f64[] constant(2.5)
  ROOT t = (f32[6], f64[], u16[], u32[5], u64[]) tuple(out0, out1, carry0, carry1, carry2)
}
ENTRY entry {
  in0 = s8[8] parameter(0)
  in1 = s16[8,2] parameter(1)
  in2 = s32[8] parameter(2)
  in3 = s64[8,3,4] parameter(3)
  init0 = u16[] constant(0)
  init1 = u32[5] constant({0, 0, 0, 0, 0})
  init2 = u64[] constant(0)
  ROOT scan = (f32[8,6], f64[8], u16[], u32[5], u64[]) scan(in0, in1, in2, in3, init0, init1, init2), dimensions={0}, to_apply=body
})");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  const HloInstruction* scan = Find(**module, "scan");
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(scan->attrs().num_carries, 3);
  EXPECT_THAT(PrintInstruction(*scan), HasSubstr("dimensions={0}, num_carries=3, to_apply="));
}

TEST(ScanTextTest, UncountableCarriesAreAnErrorAtTheInstruction) {
  auto module = ParseHloModule(R"(HloModule m
step {
  x = f32[4] parameter(0)
  acc = f32[] parameter(1)
  ROOT t = (f32[], f32[]) tuple(acc, acc)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  ROOT scan = (f32[4], f32[]) scan(x, zero), dimensions={0}, to_apply=step
})");
  ASSERT_FALSE(module.ok());
  // Both operands reach step whole: nothing is scanned.
  EXPECT_THAT(Message(module.status()),
              HasSubstr(":10:8: scan %scan has no num_carries and no operand is an input; give "
                        "num_carries="));
}

TEST(ScanTextTest, ScanAttributesBelongToScanOnly) {
  auto module = ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x), is_reverse=true
})");
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(Message(module.status()), HasSubstr("unexpected attribute 'is_reverse'"));
  auto negative = ParseHloModule(absl::StrCat(
      "HloModule m\nstep {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n",
      "ENTRY e {\n  x = f32[4] parameter(0)\n",
      "  ROOT s = f32[4] scan(x), dimensions={0}, num_carries=-1, to_apply=step\n}\n"));
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(Message(negative.status()), HasSubstr("num_carries must not be negative"));
}

// ---- proto

TEST(ScanProtoTest, FieldsAreXlasAndBothReadersGiveBackTheSameModule) {
  auto module = ParseHloModule(kFullScan);
  ASSERT_TRUE(module.ok()) << module.status();
  auto proto = ModuleToProto(**module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  const xla::HloInstructionProto* scan = nullptr;
  for (const auto& computation : proto->computations()) {
    for (const auto& instruction : computation.instructions()) {
      if (instruction.name() == "scan") scan = &instruction;
    }
  }
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(scan->opcode(), "scan");
  ASSERT_EQ(scan->dimensions_size(), 1);
  EXPECT_EQ(scan->dimensions(0), 0);
  EXPECT_EQ(scan->num_carries(), 2);
  EXPECT_TRUE(scan->is_reverse());
  EXPECT_EQ(scan->is_associative(), xla::TRI_STATE_FALSE);
  EXPECT_EQ(scan->called_computation_ids_size(), 1);

  const std::string bytes = proto->SerializeAsString();
  auto reference = ModuleFromProto(*proto);
  ASSERT_TRUE(reference.ok()) << reference.status();
  auto fast = ModuleFromProtoBytes(bytes);
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_EQ(PrintModule(**fast), PrintModule(**reference));
  EXPECT_EQ(PrintInstruction(*Find(**reference, "scan")), PrintInstruction(*Find(**module, "scan")));
  for (const HloModule* loaded : {reference->get(), fast->get()}) {
    auto back = ModuleToProto(*loaded);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->SerializeAsString(), bytes);
  }
}

// The scan fields on another opcode are not its attributes: they travel
// through unchanged (the module round trip is lossless).
TEST(ScanProtoTest, ScanFieldsOnOtherOpcodesAreCarried) {
  auto module = ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto proto = ModuleToProto(**module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  for (auto& instruction : *proto->mutable_computations(0)->mutable_instructions()) {
    if (instruction.name() != "n") continue;
    instruction.set_is_reverse(true);
    instruction.set_num_carries(3);
    instruction.set_is_associative(xla::TRI_STATE_TRUE);
  }
  const std::string bytes = proto->SerializeAsString();
  auto reference = ModuleFromProto(*proto);
  auto fast = ModuleFromProtoBytes(bytes);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_TRUE(fast.ok()) << fast.status();
  for (const HloModule* loaded : {reference->get(), fast->get()}) {
    auto back = ModuleToProto(*loaded);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->SerializeAsString(), bytes);
  }
}

TEST(ScanProtoTest, AnUnknownIsAssociativeValueIsRejectedByBothReaders) {
  auto module = ParseHloModule(kFullScan);
  ASSERT_TRUE(module.ok()) << module.status();
  auto proto = ModuleToProto(**module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  for (auto& computation : *proto->mutable_computations()) {
    for (auto& instruction : *computation.mutable_instructions()) {
      if (instruction.name() == "scan") {
        instruction.set_is_associative(static_cast<xla::TriState>(7));
      }
    }
  }
  auto reference = ModuleFromProto(*proto);
  auto fast = ModuleFromProtoBytes(proto->SerializeAsString());
  ASSERT_FALSE(reference.ok());
  ASSERT_FALSE(fast.ok());
  EXPECT_THAT(Message(reference.status()),
              HasSubstr("instruction 'scan' (id 12): enum value XLA does not define: "
                        "is_associative = 7"));
  EXPECT_EQ(fast.status(), reference.status());
}

// ---- verifier

// kFullScan's entry with one thing changed; the verifier's message.
std::string VerifyVariant(const std::string& from, const std::string& to) {
  std::string text = kFullScan;
  const size_t at = text.find(from);
  if (at == std::string::npos) return "variant text not found";
  text.replace(at, from.size(), to);
  auto module = ParseHloModule(text);
  if (!module.ok()) return absl::StrCat("parse: ", module.status().message());
  return Message(VerifyModule(**module));
}

TEST(ScanVerifierTest, AcceptsTheWellFormedScan) {
  EXPECT_EQ(VerifyVariant("", ""), "OK");
}

TEST(ScanVerifierTest, RejectsADimensionOutOfRange) {
  EXPECT_THAT(VerifyVariant("dimensions={0}, num_carries=2", "dimensions={1}, num_carries=2"),
              HasSubstr("instruction %scan"));
  EXPECT_THAT(VerifyVariant("dimensions={0}, num_carries=2", "dimensions={1}, num_carries=2"),
              HasSubstr("scan dimension 1 is out of range for rank 1"));
  EXPECT_THAT(VerifyVariant("dimensions={0}, num_carries=2", "dimensions={0,1}, num_carries=2"),
              HasSubstr("dimensions={0,1} must name exactly one dimension"));
}

TEST(ScanVerifierTest, RejectsInputsOfDifferentLengths) {
  EXPECT_THAT(VerifyVariant("b = f32[6,2] parameter(1)", "b = f32[5,2] parameter(1)"),
              HasSubstr("input 1 f32[5,2] has size 5 in scan dimension 0, input 0 has 6"));
}

TEST(ScanVerifierTest, RejectsTooManyCarries) {
  EXPECT_THAT(VerifyVariant("num_carries=2", "num_carries=4"),
              HasSubstr("num_carries=4 must leave at least one of the 4 operands as an input"));
}

TEST(ScanVerifierTest, RejectsAStepParameterThatIsNotTheSlice) {
  EXPECT_THAT(VerifyVariant("b = f32[6,2] parameter(1)", "b = f32[6,3] parameter(1)"),
              HasSubstr("instruction %scan: [shape] scan %scan: to_apply parameter 1 is f32[2], "
                        "expected f32[3] (input 1 without dimension 0)"));
}

TEST(ScanVerifierTest, RejectsANewCarryOfAnotherShape) {
  EXPECT_THAT(
      VerifyVariant("ROOT t = (pred[], s32[], f32[2]) tuple(y, n0, n1)",
                    "ROOT t = (pred[], s32[], s32[]) tuple(y, n0, n0)"),
      HasSubstr("to_apply's new carry 1 is s32[], init 1 is f32[2]"));
}

TEST(ScanVerifierTest, RejectsAWrongDeclaredResult) {
  EXPECT_THAT(VerifyVariant("ROOT scan = (pred[6], s32[], f32[2])",
                            "ROOT scan = (pred[5], s32[], f32[2])"),
              HasSubstr("instruction %scan"));
}

}  // namespace
}  // namespace hloc
