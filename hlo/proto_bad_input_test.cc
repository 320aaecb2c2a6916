// Corrupted and hostile protos: each must give a clear error (naming what is
// wrong and where) and never crash, hang, or allocate what the input claims.
// Run under --config=asan as well.
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/proto_io.h"

namespace hloc {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Shape WithLayout(Shape shape) {
  shape.set_layout(Layout::RowMajor(shape.rank()));
  return shape;
}

HloInstruction* Add(HloComputation* c, std::unique_ptr<HloInstruction> instruction,
                    const std::string& name) {
  instruction->set_name(name);
  return c->AddInstruction(std::move(instruction));
}

// adder(a, b) = a + b;  main(p0: f32[4], p1: (f32[], s32[])) =
//   (reduce(p0, zero, adder) + p1[0], p0)
xla::HloModuleProto ValidProto() {
  HloModule module("victim");
  const Shape f32 = WithLayout(Shape::Scalar(xla::F32));
  const Shape f4 = WithLayout(Shape(xla::F32, {4}));
  auto adder = std::make_unique<HloComputation>("adder");
  auto* a = Add(adder.get(), HloInstruction::CreateParameter(0, f32, ""), "a");
  auto* b = Add(adder.get(), HloInstruction::CreateParameter(1, f32, ""), "b");
  adder->set_root(Add(adder.get(), HloInstruction::Create(HloOpcode::kAdd, f32, {a, b}), "ab"));
  HloComputation* adder_c = module.AddComputation(std::move(adder));

  auto main = std::make_unique<HloComputation>("main");
  HloComputation* m = main.get();
  auto* p0 = Add(m, HloInstruction::CreateParameter(0, f4, ""), "p0");
  auto* p1 = Add(m, HloInstruction::CreateParameter(
                        1, Shape::Tuple({f32, WithLayout(Shape::Scalar(xla::S32))}), ""),
                 "p1");
  auto* gte = Add(m, HloInstruction::CreateGetTupleElement(p1, 0), "gte");
  Literal zero_value(f32);
  auto* zero = Add(m, HloInstruction::CreateConstant(zero_value), "zero");
  auto* reduce = Add(m, HloInstruction::Create(HloOpcode::kReduce, f32, {p0, zero}), "reduce");
  reduce->mutable_attrs()->dimensions = {0};
  reduce->AppendCalledComputation(adder_c);
  auto* sum = Add(m, HloInstruction::Create(HloOpcode::kAdd, f32, {reduce, gte}), "sum");
  m->set_root(Add(m, HloInstruction::CreateTuple({sum, p0}), "root"));
  module.AddEntryComputation(std::move(main));
  auto proto = ModuleToProto(module);
  EXPECT_TRUE(proto.ok()) << proto.status();
  return *proto;
}

xla::HloComputationProto* Computation(xla::HloModuleProto* proto, const std::string& name) {
  for (auto& c : *proto->mutable_computations()) {
    if (c.name() == name) return &c;
  }
  ADD_FAILURE() << "no computation " << name;
  return proto->mutable_computations(0);
}

xla::HloInstructionProto* Instruction(xla::HloModuleProto* proto, const std::string& name) {
  for (auto& c : *proto->mutable_computations()) {
    for (auto& i : *c.mutable_instructions()) {
      if (i.name() == name) return &i;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return proto->mutable_computations(0)->mutable_instructions(0);
}

// Every load also goes through the fast reader (ModuleFromProtoBytes), which
// must give exactly the reference path's status, or protobuf's refusal when
// the serialized proto does not parse back (nesting beyond its limit).
absl::Status Load(const xla::HloModuleProto& proto) {
  absl::Status reference = ModuleFromProto(proto).status();
  const std::string bytes = proto.SerializeAsString();
  const absl::Status fast = ModuleFromProtoBytes(bytes).status();
  xla::HloModuleProto reparsed;
  if (reparsed.ParseFromString(bytes)) {
    EXPECT_EQ(fast, reference);
  } else {
    EXPECT_TRUE(absl::IsDataLoss(fast)) << fast;
  }
  return reference;
}

// Parse failures count as errors too: that is where protobuf stops bad bytes.
absl::Status LoadBytes(const std::string& bytes) {
  const absl::Status fast = ModuleFromProtoBytes(bytes).status();
  xla::HloModuleProto proto;
  if (!proto.ParseFromString(bytes)) {
    EXPECT_TRUE(absl::IsDataLoss(fast)) << fast;
    return absl::DataLossError("protobuf parse failed");
  }
  absl::Status reference = Load(proto);
  EXPECT_EQ(fast, reference);
  return reference;
}

std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

TEST(ProtoBadInputTest, TheVictimIsValid) {
  xla::HloModuleProto proto = ValidProto();
  ASSERT_TRUE(Load(proto).ok()) << Load(proto);
  ASSERT_TRUE(LoadBytes(proto.SerializeAsString()).ok());
}

// ---- bytes ----

TEST(ProtoBadInputTest, TruncatedBytes) {
  const std::string bytes = ValidProto().SerializeAsString();
  const size_t n = bytes.size();
  for (size_t cut : {size_t{1}, size_t{7}, n / 4, n / 2, 3 * n / 4, n - 1}) {
    SCOPED_TRACE(cut);
    EXPECT_FALSE(LoadBytes(bytes.substr(0, cut)).ok());
  }
  // Every other prefix: any outcome but a crash; most must fail.
  int failures = 0;
  for (size_t cut = 0; cut < n; ++cut) failures += !LoadBytes(bytes.substr(0, cut)).ok();
  EXPECT_GT(failures, static_cast<int>(n * 9 / 10));
}

TEST(ProtoBadInputTest, RandomByteFlips) {
  const std::string bytes = ValidProto().SerializeAsString();
  std::mt19937 rng(20240611);
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string mutant = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      mutant[rng() % mutant.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    xla::HloModuleProto proto;
    if (!proto.ParseFromString(mutant)) {
      EXPECT_TRUE(absl::IsDataLoss(ModuleFromProtoBytes(mutant).status()));
      continue;
    }
    auto module = ModuleFromProto(proto);
    EXPECT_EQ(ModuleFromProtoBytes(mutant).status(), module.status());
    if (!module.ok()) {
      EXPECT_FALSE(module.status().message().empty());
      continue;
    }
    // Whatever was accepted must be a module that can be written again.
    ++accepted;
    EXPECT_TRUE(ModuleToProto(**module).ok());
  }
  EXPECT_LT(accepted, 3000);
}

TEST(ProtoBadInputTest, WrongWireTypes) {
  const std::string valid = ValidProto().SerializeAsString();
  // Field 3 (computations) as an unterminated group, and with wire type 7.
  EXPECT_FALSE(LoadBytes("\x1b" + valid).ok());
  EXPECT_FALSE(LoadBytes("\x1f" + valid).ok());
  // Field 3 as a varint: protobuf keeps it as an unknown field, so the
  // module has no computations.
  EXPECT_THAT(LoadBytes(std::string("\x0a\x01x\x18\x05", 5)).message(),
              HasSubstr("no computations"));
  // An instruction whose shape (field 3) arrives as a varint.
  xla::HloModuleProto proto = ValidProto();
  xla::HloInstructionProto* sum = Instruction(&proto, "sum");
  sum->clear_shape();
  sum->GetReflection()->MutableUnknownFields(sum)->AddVarint(3, 11);
  EXPECT_THAT(LoadBytes(proto.SerializeAsString()).message(),
              AllOf(HasSubstr("'sum'"), HasSubstr("no shape")));
}

TEST(ProtoBadInputTest, HugeLengthClaims) {
  const std::string valid = ValidProto().SerializeAsString();
  // computations: a length-delimited field claiming 2^40 bytes.
  EXPECT_FALSE(LoadBytes("\x1a" + Varint(uint64_t{1} << 40) + valid).ok());
  // A literal's packed f32s claiming 2^31 - 1 bytes over four real ones.
  xla::LiteralProto literal;
  EXPECT_FALSE(literal.ParseFromString("\x42" + Varint((uint64_t{1} << 31) - 1) + "abcd"));
  // A snapshot argument claiming billions of bytes.
  xla::HloSnapshot snapshot;
  EXPECT_FALSE(snapshot.ParseFromString("\x12" + Varint(uint64_t{3} << 32) + "xyz"));
}

TEST(ProtoBadInputTest, HugeShapesAreRefusedBeforeAllocating) {
  xla::HloModuleProto proto = ValidProto();
  xla::LiteralProto* literal = Instruction(&proto, "zero")->mutable_literal();
  // f32[2^30]: 4 GiB of data claimed by a shape, one element present.
  literal->mutable_shape()->add_dimensions(int64_t{1} << 30);
  literal->mutable_shape()->add_is_dynamic_dimension(false);
  literal->mutable_shape()->mutable_layout()->add_minor_to_major(0);
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'zero'"), HasSubstr("needs 1073741824")));
  // f32[2^40, 2^40]: the element count overflows.
  xla::HloModuleProto overflow = ValidProto();
  xla::ShapeProto* shape = Instruction(&overflow, "p0")->mutable_shape();
  shape->set_dimensions(0, int64_t{1} << 40);
  shape->add_dimensions(int64_t{1} << 40);
  shape->add_is_dynamic_dimension(false);
  shape->mutable_layout()->add_minor_to_major(1);
  EXPECT_THAT(Load(overflow).message(),
              AllOf(HasSubstr("'p0'"), HasSubstr("more elements than fit")));
}

TEST(ProtoBadInputTest, NestingBeyondProtobufsLimit) {
  xla::HloModuleProto proto = ValidProto();
  xla::ShapeProto* shape = Instruction(&proto, "p1")->mutable_shape();
  for (int depth = 0; depth < 150; ++depth) {
    shape->set_element_type(xla::TUPLE);
    shape = shape->add_tuple_shapes();
  }
  shape->set_element_type(xla::F32);
  EXPECT_FALSE(LoadBytes(proto.SerializeAsString()).ok());
  // In memory (no parser limit) the reader stops on its own.
  EXPECT_THAT(Load(proto).message(), HasSubstr("nested deeper"));
}

// ---- references ----

TEST(ProtoBadInputTest, DanglingOperandId) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "sum")->set_operand_ids(1, 999999);
  EXPECT_THAT(Load(proto).message(),
              AllOf(HasSubstr("'sum'"), HasSubstr("999999"), HasSubstr("names no instruction")));
}

TEST(ProtoBadInputTest, DanglingControlPredecessorId) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "sum")->add_control_predecessor_ids(-42);
  EXPECT_THAT(Load(proto).message(),
              AllOf(HasSubstr("'sum'"), HasSubstr("control predecessor id -42")));
}

TEST(ProtoBadInputTest, DanglingCalledComputationId) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "reduce")->set_called_computation_ids(0, 777);
  EXPECT_THAT(Load(proto).message(),
              AllOf(HasSubstr("'reduce'"), HasSubstr("unknown computation id 777")));
}

TEST(ProtoBadInputTest, DanglingRootId) {
  xla::HloModuleProto proto = ValidProto();
  Computation(&proto, "main")->set_root_id(4242);
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'main'"), HasSubstr("root_id 4242")));
}

TEST(ProtoBadInputTest, MissingEntry) {
  xla::HloModuleProto proto = ValidProto();
  proto.set_entry_computation_id(12345);
  proto.set_entry_computation_name("");
  EXPECT_THAT(Load(proto).message(), HasSubstr("no entry computation"));
  proto.set_entry_computation_name("not_there");
  EXPECT_THAT(Load(proto).message(), HasSubstr("not_there"));
}

TEST(ProtoBadInputTest, NoComputations) {
  xla::HloModuleProto proto = ValidProto();
  proto.clear_computations();
  EXPECT_THAT(Load(proto).message(), HasSubstr("no computations"));
}

TEST(ProtoBadInputTest, CycleBetweenInstructions) {
  xla::HloModuleProto proto = ValidProto();
  // sum's operand becomes root, which uses sum.
  Instruction(&proto, "sum")->set_operand_ids(1, Instruction(&proto, "root")->id());
  EXPECT_THAT(Load(proto).message(), HasSubstr("cycle"));
  // A control edge closing a loop is a cycle too.
  xla::HloModuleProto control = ValidProto();
  Instruction(&control, "gte")->add_control_predecessor_ids(Instruction(&control, "sum")->id());
  EXPECT_THAT(Load(control).message(), HasSubstr("cycle"));
}

TEST(ProtoBadInputTest, OperandInAnotherComputation) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "sum")->set_operand_ids(0, Instruction(&proto, "ab")->id());
  EXPECT_THAT(Load(proto).message(),
              AllOf(HasSubstr("'sum'"), HasSubstr("another computation"), HasSubstr("'adder'")));
}

TEST(ProtoBadInputTest, ComputationCallingItself) {
  xla::HloModuleProto proto = ValidProto();
  xla::HloComputationProto* adder = Computation(&proto, "adder");
  Instruction(&proto, "ab")->add_called_computation_ids(adder->id());
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'adder'"), HasSubstr("calls itself")));
  // Through another computation: adder -> main -> adder.
  xla::HloModuleProto mutual = ValidProto();
  Instruction(&mutual, "ab")->add_called_computation_ids(Computation(&mutual, "main")->id());
  EXPECT_THAT(Load(mutual).message(), HasSubstr("calls itself through"));
}

TEST(ProtoBadInputTest, DuplicateIds) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "gte")->set_id(Instruction(&proto, "p0")->id());
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'gte'"), HasSubstr("shares its id")));
  xla::HloModuleProto computations = ValidProto();
  Computation(&computations, "main")->set_id(Computation(&computations, "adder")->id());
  EXPECT_THAT(Load(computations).message(), HasSubstr("shares its id with computation"));
}

// ---- instructions ----

TEST(ProtoBadInputTest, UnknownOpcode) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "sum")->set_opcode("frobnicate");
  EXPECT_THAT(Load(proto).message(),
              AllOf(HasSubstr("'sum'"), HasSubstr("unknown opcode \"frobnicate\"")));
}

TEST(ProtoBadInputTest, WrongOperandCount) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "sum")->mutable_operand_ids()->RemoveLast();
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'sum'"), HasSubstr("takes 2 operands")));
}

TEST(ProtoBadInputTest, WrongCalledComputationCount) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "reduce")->clear_called_computation_ids();
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'reduce'"), HasSubstr("calls 0")));
}

TEST(ProtoBadInputTest, UnknownPrimitiveType) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "sum")->mutable_shape()->set_element_type(
      static_cast<xla::PrimitiveType>(999));
  // Proto3 enums are open: the value survives the wire.
  EXPECT_THAT(LoadBytes(proto.SerializeAsString()).message(),
              AllOf(HasSubstr("'sum'"), HasSubstr("unknown primitive type enum value 999")));
  Instruction(&proto, "sum")->mutable_shape()->set_element_type(xla::OPAQUE_TYPE);
  EXPECT_THAT(Load(proto).message(), HasSubstr("not supported"));
}

TEST(ProtoBadInputTest, BadShapes) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "p0")->mutable_shape()->set_dimensions(0, -5);
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'p0'"), HasSubstr("negative dimension")));

  proto = ValidProto();
  Instruction(&proto, "p0")->mutable_shape()->mutable_layout()->set_minor_to_major(0, 3);
  EXPECT_THAT(Load(proto).message(), HasSubstr("not a permutation"));

  proto = ValidProto();
  Instruction(&proto, "p0")->mutable_shape()->mutable_layout()->add_tiles()->add_dimensions(0);
  EXPECT_THAT(Load(proto).message(), HasSubstr("tile dimension 0"));

  proto = ValidProto();
  Instruction(&proto, "p0")->mutable_shape()->add_is_dynamic_dimension(true);
  EXPECT_THAT(Load(proto).message(), HasSubstr("is_dynamic_dimension"));

  proto = ValidProto();
  xla::ShapeProto* wide = Instruction(&proto, "p0")->mutable_shape();
  wide->clear_layout();
  for (int i = 0; i < 5000; ++i) wide->add_dimensions(1);
  wide->clear_is_dynamic_dimension();
  EXPECT_THAT(Load(proto).message(), HasSubstr("rank"));
}

TEST(ProtoBadInputTest, LiteralTypeMismatch) {
  xla::HloModuleProto proto = ValidProto();
  xla::LiteralProto* literal = Instruction(&proto, "zero")->mutable_literal();
  literal->clear_f32s();
  literal->add_s32s(0);
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'zero'"), HasSubstr("s32s")));
}

TEST(ProtoBadInputTest, LiteralWrongElementCount) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "zero")->mutable_literal()->add_f32s(1.0f);
  EXPECT_THAT(Load(proto).message(),
              AllOf(HasSubstr("'zero'"), HasSubstr("needs 1 elements"), HasSubstr("holds 2")));
  // Odd number of complex components.
  xla::LiteralProto complex;
  complex.mutable_shape()->set_element_type(xla::C64);
  complex.mutable_shape()->mutable_layout();
  complex.add_c64s(1);
  EXPECT_THAT(LiteralFromProto(complex).status().message(), HasSubstr("odd number"));
  // 16-bit data with an odd byte count.
  xla::LiteralProto half;
  half.mutable_shape()->set_element_type(xla::F16);
  half.mutable_shape()->mutable_layout();
  half.set_f16s("abc");
  EXPECT_THAT(LiteralFromProto(half).status().message(), HasSubstr("not a multiple of 2"));
}

TEST(ProtoBadInputTest, LiteralShapeDisagreesWithInstruction) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "zero")->mutable_literal()->mutable_shape()->set_element_type(xla::F64);
  Instruction(&proto, "zero")->mutable_literal()->clear_f32s();
  Instruction(&proto, "zero")->mutable_literal()->add_f64s(0);
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'zero'"), HasSubstr("does not match")));
  xla::HloModuleProto missing = ValidProto();
  Instruction(&missing, "zero")->clear_literal();
  EXPECT_THAT(Load(missing).message(), HasSubstr("constant has no literal"));
}

TEST(ProtoBadInputTest, BadTupleIndex) {
  for (int64_t index : {int64_t{7}, int64_t{-1}, int64_t{1} << 40}) {
    xla::HloModuleProto proto = ValidProto();
    Instruction(&proto, "gte")->set_tuple_index(index);
    EXPECT_THAT(Load(proto).message(),
                AllOf(HasSubstr("'gte'"), HasSubstr(absl::StrCat("tuple_index ", index))));
  }
  // get-tuple-element of a non-tuple.
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "gte")->set_operand_ids(0, Instruction(&proto, "p0")->id());
  EXPECT_THAT(Load(proto).message(), HasSubstr("out of range for operand shape f32[4]"));
}

TEST(ProtoBadInputTest, BadParameterNumbers) {
  xla::HloModuleProto proto = ValidProto();
  Instruction(&proto, "p1")->set_parameter_number(5);
  EXPECT_THAT(Load(proto).message(), AllOf(HasSubstr("'p1'"), HasSubstr("out of range")));
  Instruction(&proto, "p1")->set_parameter_number(0);
  EXPECT_THAT(Load(proto).message(), HasSubstr("repeats parameter number 0"));
}

TEST(ProtoBadInputTest, BadEnumStrings) {
  xla::HloModuleProto proto = ValidProto();
  xla::HloInstructionProto* sum = Instruction(&proto, "sum");
  sum->set_opcode("compare");
  sum->set_comparison_direction("SIDEWAYS");
  sum->mutable_shape()->set_element_type(xla::PRED);
  EXPECT_THAT(Load(proto).message(), HasSubstr("unknown comparison_direction \"SIDEWAYS\""));
  sum->set_comparison_direction("LT");
  sum->set_comparison_type("FUZZY");
  EXPECT_THAT(Load(proto).message(), HasSubstr("unknown comparison_type \"FUZZY\""));

  xla::HloModuleProto fusion = ValidProto();
  xla::HloInstructionProto* reduce = Instruction(&fusion, "reduce");
  reduce->set_opcode("fusion");
  reduce->set_fusion_kind("kSideways");
  EXPECT_THAT(Load(fusion).message(), HasSubstr("unknown fusion_kind \"kSideways\""));
}

TEST(ProtoBadInputTest, FusedComputationSharedByTwoFusions) {
  xla::HloModuleProto proto = ValidProto();
  xla::HloInstructionProto* reduce = Instruction(&proto, "reduce");
  reduce->set_opcode("fusion");
  reduce->set_fusion_kind("kLoop");
  xla::HloInstructionProto* sum = Instruction(&proto, "sum");
  sum->set_opcode("fusion");
  sum->set_fusion_kind("kLoop");
  sum->add_called_computation_ids(reduce->called_computation_ids(0));
  EXPECT_THAT(Load(proto).message(), HasSubstr("already fused by"));
}

TEST(ProtoBadInputTest, EntryLayoutDisagreesWithEntry) {
  xla::HloModuleProto proto = ValidProto();
  proto.mutable_host_program_shape()->mutable_parameters()->RemoveLast();
  EXPECT_THAT(Load(proto).message(), HasSubstr("host_program_shape"));
}

TEST(ProtoBadInputTest, ScheduleWithUnknownIds) {
  xla::HloModuleProto proto = ValidProto();
  (*proto.mutable_schedule()->mutable_sequences())[Computation(&proto, "main")->id()]
      .add_instruction_ids(31337);
  EXPECT_THAT(Load(proto).message(), HasSubstr("schedule names unknown instruction id 31337"));
}

TEST(ProtoBadInputTest, SnapshotWithBadArgument) {
  xla::HloSnapshot snapshot;
  *snapshot.mutable_hlo()->mutable_hlo_module() = ValidProto();
  xla::LiteralProto* argument = snapshot.add_arguments();
  argument->mutable_shape()->set_element_type(xla::F32);
  argument->mutable_shape()->add_dimensions(4);
  argument->mutable_shape()->mutable_layout()->add_minor_to_major(0);
  argument->add_f32s(1);
  EXPECT_THAT(SnapshotFromProto(snapshot).status().message(),
              AllOf(HasSubstr("snapshot argument 0"), HasSubstr("needs 4 elements")));
  EXPECT_EQ(SnapshotFromProtoBytes(snapshot.SerializeAsString()).status(),
            SnapshotFromProto(snapshot).status());
  xla::HloSnapshot empty;
  EXPECT_THAT(SnapshotFromProto(empty).status().message(), HasSubstr("has no module"));
  EXPECT_EQ(SnapshotFromProtoBytes("").status(), SnapshotFromProto(empty).status());
}

}  // namespace
}  // namespace hloc
