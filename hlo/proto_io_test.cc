// Round trips through XLA's protos: shapes, literals of every element type
// (including non-row-major data order), modules built with the IR API
// (including attributes the IR does not model), and XLA's test corpus.
#include "hlo/proto_io.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

using google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

// Differences between two messages, or "" when equal.
std::string Diff(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  std::string report;
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);  // Constants hold NaNs; bits are checked elsewhere.
  MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  differencer.ReportDifferencesToString(&report);
  differencer.Compare(a, b);
  return report;
}

Shape WithLayout(Shape shape, std::vector<int64_t> minor_to_major) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  shape.set_layout(layout);
  return shape;
}

// ---- shapes ----

TEST(ShapeProtoTest, ArrayWithFullLayoutRoundTrips) {
  Shape shape(xla::BF16, {16, 128});
  Layout layout;
  layout.minor_to_major = {0, 1};
  layout.tiles = {Tile{{8, 128}}, Tile{{Tile::kCombineDimension, 2}}};
  layout.element_size_in_bits = 16;
  layout.memory_space = 1;
  shape.set_layout(layout);
  xla::ShapeProto proto = ShapeToProto(shape);
  EXPECT_EQ(proto.layout().tiles(1).dimensions(0), INT64_MIN);
  EXPECT_EQ(proto.layout().tail_padding_alignment_in_elements(), 1);
  EXPECT_EQ(proto.is_dynamic_dimension_size(), 2);
  auto back = ShapeFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, shape);
  EXPECT_EQ(back->layout().tiles, layout.tiles);
}

TEST(ShapeProtoTest, DynamicTupleAndTokenShapesRoundTrip) {
  Shape dynamic(xla::F32, {});
  dynamic.add_dimension(8, /*is_dynamic=*/true);
  dynamic.add_dimension(Shape::kUnboundedSize, /*is_dynamic=*/true);
  dynamic.add_dimension(3);
  Shape tuple = Shape::Tuple({dynamic, Shape::Token(), Shape::Tuple({}),
                              WithLayout(Shape::Scalar(xla::S4), {})});
  auto back = ShapeFromProto(ShapeToProto(tuple));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, tuple);
  EXPECT_TRUE(back->tuple_shapes(0).is_dynamic_dimension(1));
  EXPECT_FALSE(back->tuple_shapes(0).is_dynamic_dimension(2));
  EXPECT_TRUE(back->tuple_shapes(3).has_layout());
}

TEST(ShapeProtoTest, MissingDynamicFlagsMeanStatic) {
  xla::ShapeProto proto;
  proto.set_element_type(xla::S32);
  proto.add_dimensions(4);
  auto shape = ShapeFromProto(proto);
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_TRUE(shape->is_static());
  EXPECT_FALSE(shape->has_layout());
}

// ---- literals ----

// A literal of `shape` whose element i holds a value derived from i that
// the type can represent exactly.
Literal Iota(const Shape& shape) {
  Literal literal(shape);
  const PrimitiveType type = shape.element_type();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (type == xla::PRED) {
      literal.SetFromInt64(i, i % 3 == 1);
    } else if (IsComplex(type)) {
      literal.SetFromComplex(i, {static_cast<double>(i) + 0.5, -static_cast<double>(i)});
    } else if (IsFloatingPoint(type)) {
      literal.SetFromDouble(i, IsNarrowFloat(type) ? (i % 4) * 0.5 : i * 0.25 - 1);
    } else if (IsSignedInteger(type)) {
      const int bits = BitWidth(type);
      literal.SetFromInt64(i, bits < 8 ? (i % 2 ? -1 : 0) : -static_cast<int64_t>(i) * 3);
    } else {
      literal.SetFromUint64(i, BitWidth(type) < 8 ? i % 2 : i * 7 + 1);
    }
  }
  return literal;
}

TEST(LiteralProtoTest, EveryElementTypeRoundTrips) {
  const PrimitiveType kTypes[] = {
      xla::PRED, xla::S1, xla::S2, xla::S4, xla::S8, xla::S16, xla::S32, xla::S64,
      xla::U1, xla::U2, xla::U4, xla::U8, xla::U16, xla::U32, xla::U64,
      xla::F16, xla::BF16, xla::F32, xla::F64, xla::C64, xla::C128,
      xla::F8E5M2, xla::F8E4M3FN, xla::F8E4M3B11FNUZ, xla::F8E5M2FNUZ, xla::F8E4M3FNUZ,
      xla::F8E4M3, xla::F8E3M4, xla::F4E2M1FN, xla::F8E8M0FNU, xla::F6E3M2FN, xla::F6E2M3FN};
  for (PrimitiveType type : kTypes) {
    SCOPED_TRACE(PrimitiveTypeName(type));
    Literal literal = Iota(Shape(type, {2, 3}));
    xla::LiteralProto proto = LiteralToProto(literal);
    ASSERT_TRUE(proto.shape().has_layout());
    auto back = LiteralFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, literal) << back->ToString() << " vs " << literal.ToString();
    EXPECT_EQ(Diff(LiteralToProto(*back), proto), "");
  }
}

TEST(LiteralProtoTest, WireEncodingsMatchXla) {
  Literal f16 = Literal(Shape(xla::F16, {2}));
  f16.SetFromDouble(0, 1.0);   // 0x3c00
  f16.SetFromDouble(1, -2.0);  // 0xc000
  EXPECT_EQ(LiteralToProto(f16).f16s(), std::string("\x00\x3c\x00\xc0", 4));

  Literal bf16 = Literal(Shape(xla::BF16, {1}));
  bf16.SetFromDouble(0, 1.0);  // 0x3f80
  EXPECT_EQ(LiteralToProto(bf16).bf16s(), std::string("\x80\x3f", 2));

  Literal c64 = Literal(Shape(xla::C64, {2}));
  c64.SetFromComplex(0, {1, 2});
  c64.SetFromComplex(1, {3, 4});
  xla::LiteralProto c64_proto = LiteralToProto(c64);
  EXPECT_THAT(c64_proto.c64s(), ::testing::ElementsAre(1, 2, 3, 4));

  // Sub-byte integers: one byte each, value in the low bits, high bits clear.
  Literal s4 = Literal(Shape(xla::S4, {3}));
  s4.SetFromInt64(0, -1);
  s4.SetFromInt64(1, 7);
  s4.SetFromInt64(2, -8);
  EXPECT_EQ(LiteralToProto(s4).s4s(), std::string("\x0f\x07\x08", 3));

  Literal pred = Literal(Shape(xla::PRED, {3}));
  pred.SetFromInt64(1, 1);
  EXPECT_THAT(LiteralToProto(pred).preds(), ::testing::ElementsAre(false, true, false));

  Literal s8 = Literal(Shape(xla::S8, {2}));
  s8.SetFromInt64(0, -128);
  s8.SetFromInt64(1, 5);
  EXPECT_EQ(LiteralToProto(s8).s8s(), std::string("\x80\x05", 2));
}

TEST(LiteralProtoTest, SubByteHighBitsAreIgnoredAndSignExtended) {
  xla::LiteralProto proto;
  *proto.mutable_shape() = ShapeToProto(WithLayout(Shape(xla::S4, {2}), {0}));
  proto.set_s4s(std::string("\xff\x79", 2));  // Low nibbles: -1, -7.
  auto literal = LiteralFromProto(proto);
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->GetAsInt64(0), -1);
  EXPECT_EQ(literal->GetAsInt64(1), -7);
}

TEST(LiteralProtoTest, DataFollowsTheLayoutOrder) {
  // f32[2,3]{0,1}: column-major in memory, so XLA's data is column-major.
  Literal literal(WithLayout(Shape(xla::F32, {2, 3}), {0, 1}));
  for (int64_t i = 0; i < 6; ++i) literal.SetFromDouble(i, i);  // Row-major values 0..5.
  xla::LiteralProto proto = LiteralToProto(literal);
  EXPECT_THAT(proto.f32s(), ::testing::ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_THAT(proto.shape().layout().minor_to_major(), ::testing::ElementsAre(0, 1));

  auto back = LiteralFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(back->GetAsDouble(i), i);
  EXPECT_EQ(back->shape().layout().minor_to_major, (std::vector<int64_t>{0, 1}));
}

TEST(LiteralProtoTest, ThreeDimensionalPermutedLayout) {
  // s32[2,3,4]{1,2,0}: dimension 1 fastest, then 2, then 0.
  xla::LiteralProto proto;
  *proto.mutable_shape() = ShapeToProto(WithLayout(Shape(xla::S32, {2, 3, 4}), {1, 2, 0}));
  // Physical element p at index (i0, i1, i2) with p = i1 + 3 * (i2 + 4 * i0);
  // store the row-major index there.
  std::vector<int32_t> physical(24);
  for (int i0 = 0; i0 < 2; ++i0)
    for (int i1 = 0; i1 < 3; ++i1)
      for (int i2 = 0; i2 < 4; ++i2) physical[i1 + 3 * (i2 + 4 * i0)] = (i0 * 3 + i1) * 4 + i2;
  for (int32_t v : physical) proto.add_s32s(v);
  auto literal = LiteralFromProto(proto);
  ASSERT_TRUE(literal.ok()) << literal.status();
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(literal->GetAsInt64(i), i);
  EXPECT_EQ(Diff(LiteralToProto(*literal), proto), "");
}

TEST(LiteralProtoTest, TuplesAndLayoutlessShapes) {
  Literal inner = Literal::Tuple({Iota(Shape(xla::BF16, {3})), Iota(Shape::Scalar(xla::PRED))});
  Literal tuple = Literal::Tuple({Iota(Shape(xla::C128, {2})), inner, Literal(Shape::Token())});
  xla::LiteralProto proto = LiteralToProto(tuple);
  EXPECT_EQ(proto.tuple_literals_size(), 3);
  EXPECT_EQ(proto.shape().tuple_shapes_size(), 3);
  EXPECT_TRUE(proto.tuple_literals(0).shape().has_layout());  // Added: XLA requires one.
  auto back = LiteralFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, tuple);
}

TEST(LiteralProtoTest, CountAndTypeMismatchesAreErrors) {
  xla::LiteralProto proto;
  *proto.mutable_shape() = ShapeToProto(WithLayout(Shape(xla::F32, {3}), {0}));
  proto.add_s32s(1);
  proto.add_s32s(2);
  proto.add_s32s(3);
  auto wrong_type = LiteralFromProto(proto);
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(wrong_type.status().message(), HasSubstr("s32s"));
  proto.clear_s32s();
  proto.add_f32s(1);
  EXPECT_THAT(LiteralFromProto(proto).status().message(), HasSubstr("needs 3 elements"));
}

// ---- modules ----

HloInstruction* Add(HloComputation* c, std::unique_ptr<HloInstruction> instruction,
                    const std::string& name = "") {
  if (!name.empty()) instruction->set_name(name);
  return c->AddInstruction(std::move(instruction));
}

HloComputation* AddScalarAdder(HloModule* module, const std::string& name) {
  auto c = std::make_unique<HloComputation>(name);
  auto* a = Add(c.get(), HloInstruction::CreateParameter(0, Shape::Scalar(xla::F32), name + ".a"));
  auto* b = Add(c.get(), HloInstruction::CreateParameter(1, Shape::Scalar(xla::F32), name + ".b"));
  c->set_root(Add(c.get(), HloInstruction::Create(HloOpcode::kAdd, Shape::Scalar(xla::F32), {a, b}),
                  name + ".sum"));
  return module->AddComputation(std::move(c));
}

// A module exercising most attributes, callees of every kind, control
// edges, sharding, metadata and module config.
std::unique_ptr<HloModule> BuildModule() {
  auto module = std::make_unique<HloModule>("everything");
  HloComputation* adder = AddScalarAdder(module.get(), "adder");
  const Shape f23 = WithLayout(Shape(xla::F32, {2, 3}), {1, 0});
  const Shape s32 = Shape::Scalar(xla::S32);
  const Shape loop_state = Shape::Tuple({s32});

  // while condition / body
  auto cond = std::make_unique<HloComputation>("cond");
  {
    auto* p = Add(cond.get(), HloInstruction::CreateParameter(0, loop_state, "cond.p"));
    auto* i = Add(cond.get(), HloInstruction::CreateGetTupleElement(p, 0), "cond.i");
    auto* ten = Add(cond.get(), HloInstruction::CreateConstant(Literal::Scalar(xla::S32, 10)));
    auto* lt = Add(cond.get(),
                   HloInstruction::Create(HloOpcode::kCompare, Shape::Scalar(xla::PRED), {i, ten}),
                   "cond.lt");
    lt->mutable_attrs()->comparison_direction = ComparisonDirection::kLt;
    cond->set_root(lt);
  }
  HloComputation* cond_c = module->AddComputation(std::move(cond));
  auto body = std::make_unique<HloComputation>("body");
  {
    auto* p = Add(body.get(), HloInstruction::CreateParameter(0, loop_state, "body.p"));
    auto* i = Add(body.get(), HloInstruction::CreateGetTupleElement(p, 0), "body.i");
    auto* one = Add(body.get(), HloInstruction::CreateConstant(Literal::Scalar(xla::S32, 1)));
    auto* next = Add(body.get(), HloInstruction::Create(HloOpcode::kAdd, s32, {i, one}));
    body->set_root(Add(body.get(), HloInstruction::CreateTuple({next})));
  }
  HloComputation* body_c = module->AddComputation(std::move(body));

  auto fused = std::make_unique<HloComputation>("fused_negate");
  {
    auto* p = Add(fused.get(), HloInstruction::CreateParameter(0, f23, "fused.p"));
    fused->set_root(Add(fused.get(), HloInstruction::Create(HloOpcode::kNegate, f23, {p})));
  }
  HloComputation* fused_c = module->AddComputation(std::move(fused));

  auto composite = std::make_unique<HloComputation>("my_composite_impl");
  {
    auto* p = Add(composite.get(), HloInstruction::CreateParameter(0, f23, "composite.p"));
    composite->set_root(Add(composite.get(), HloInstruction::Create(HloOpcode::kExp, f23, {p})));
  }
  HloComputation* composite_c = module->AddComputation(std::move(composite));

  auto entry = std::make_unique<HloComputation>("main");
  HloComputation* e = entry.get();
  auto* p0 = Add(e, HloInstruction::CreateParameter(0, f23, "p0"));
  auto* p1 = Add(e, HloInstruction::CreateParameter(1, s32, "p1"));
  auto* p2 = Add(e, HloInstruction::CreateParameter(
                        2, Shape::Tuple({Shape::Scalar(xla::F32), Shape(xla::PRED, {4})}), "p2"));
  Literal column_major(WithLayout(Shape(xla::F32, {2, 3}), {0, 1}));
  for (int64_t i = 0; i < 6; ++i) column_major.SetFromDouble(i, i * 1.5);
  auto* c0 = Add(e, HloInstruction::CreateConstant(column_major), "c0");
  auto* sum = Add(e, HloInstruction::Create(HloOpcode::kAdd, f23, {p0, c0}), "sum");
  sum->mutable_metadata()->set_op_name("jit(f)/add");
  sum->mutable_metadata()->set_source_file("model.py");
  sum->mutable_metadata()->set_source_line(42);
  xla::OpSharding sharding;
  sharding.set_type(xla::OpSharding::OTHER);
  sharding.add_tile_assignment_dimensions(2);
  sharding.add_tile_assignment_dimensions(1);
  sharding.add_tile_assignment_devices(0);
  sharding.add_tile_assignment_devices(1);
  sum->set_sharding(sharding);
  auto* cmp = Add(e, HloInstruction::Create(HloOpcode::kCompare, Shape(xla::PRED, {2, 3}),
                                            {sum, c0}),
                  "cmp");
  cmp->mutable_attrs()->comparison_direction = ComparisonDirection::kGe;
  cmp->mutable_attrs()->comparison_type = ComparisonType::kTotalOrder;
  auto* zero = Add(e, HloInstruction::CreateConstant(Literal::Scalar(xla::F32, 0)), "zero");
  auto* reduce = Add(e, HloInstruction::Create(HloOpcode::kReduce, Shape(xla::F32, {2}),
                                               {sum, zero}),
                     "reduce");
  reduce->mutable_attrs()->dimensions = {1};
  reduce->AppendCalledComputation(adder);
  auto* bcast = Add(e, HloInstruction::CreateBroadcast(f23, reduce, {0}), "bcast");
  auto* transpose = Add(e, HloInstruction::Create(HloOpcode::kTranspose,
                                                  Shape(xla::F32, {3, 2}), {p0}),
                        "transpose");
  transpose->mutable_attrs()->dimensions = {1, 0};
  auto* dot = Add(e, HloInstruction::Create(HloOpcode::kDot, Shape(xla::F32, {2, 2}),
                                            {p0, transpose}),
                  "dot");
  dot->mutable_attrs()->dot_dimension_numbers->add_lhs_contracting_dimensions(1);
  dot->mutable_attrs()->dot_dimension_numbers->add_rhs_contracting_dimensions(0);
  dot->mutable_attrs()->precision_config->add_operand_precision(xla::PrecisionConfig::HIGHEST);
  dot->mutable_attrs()->precision_config->add_operand_precision(xla::PrecisionConfig::DEFAULT);
  auto* slice = Add(e, HloInstruction::Create(HloOpcode::kSlice, Shape(xla::F32, {1, 2}), {bcast}),
                    "slice");
  slice->mutable_attrs()->slice_starts = {1, 0};
  slice->mutable_attrs()->slice_limits = {2, 3};
  slice->mutable_attrs()->slice_strides = {1, 2};
  auto* iota = Add(e, HloInstruction::Create(HloOpcode::kIota, Shape(xla::S32, {4, 5})), "iota");
  iota->mutable_attrs()->iota_dimension = 1;
  auto* gte = Add(e, HloInstruction::CreateGetTupleElement(p2, 1), "gte");
  gte->AddControlDependencyTo(slice);
  auto* init = Add(e, HloInstruction::CreateTuple({p1}), "init");
  auto* loop = Add(e, HloInstruction::Create(HloOpcode::kWhile, loop_state, {init}), "loop");
  loop->AppendCalledComputation(cond_c);
  loop->AppendCalledComputation(body_c);
  auto* fusion = Add(e, HloInstruction::CreateFusion(fused_c, FusionKind::kLoop, {sum}), "fusion");
  fused_c->set_fusion_instruction(fusion);
  auto* custom = Add(e, HloInstruction::Create(HloOpcode::kCustomCall, f23, {p0, sum}), "custom");
  {
    HloAttributes* a = custom->mutable_attrs();
    a->custom_call_target = "my_target";
    a->custom_call_has_side_effect = true;
    a->custom_call_api_version = xla::API_VERSION_TYPED_FFI;
    a->custom_call_schedule = xla::SCHEDULE_LATEST;
    a->output_to_operand_aliasing = {OutputOperandAlias{{}, 1, {}}};
    a->operand_layout_constraints = std::vector<Shape>{f23, f23};
    custom->set_backend_config("{\"alpha\": 2}");
  }
  auto* call = Add(e, HloInstruction::CreateCall(composite_c, {p0}), "composite_call");
  call->set_is_composite(true);
  call->SetFrontendAttribute("composite.name", "my.exp");
  call->SetFrontendAttribute("composite.attributes", "{scale = 2 : i32}");
  call->SetFrontendAttribute("composite.version", "1");
  auto* all_reduce = Add(e, HloInstruction::Create(HloOpcode::kAllReduce, f23, {sum}), "ar");
  all_reduce->AppendCalledComputation(adder);
  all_reduce->mutable_attrs()->replica_groups =
      std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}};
  all_reduce->mutable_attrs()->channel_id = 5;
  all_reduce->mutable_attrs()->use_global_device_ids = true;
  auto* all_gather = Add(e, HloInstruction::Create(HloOpcode::kAllGather, Shape(xla::F32, {4, 3}),
                                                   {sum}),
                         "ag");
  all_gather->mutable_attrs()->dimensions = {0};
  xla::IotaReplicaGroupListProto iota_groups;
  iota_groups.set_num_replica_groups(2);
  iota_groups.set_num_devices_per_group(2);
  iota_groups.add_iota_reshape_dims(4);
  iota_groups.add_iota_transpose_perm(0);
  all_gather->mutable_attrs()->iota_replica_groups = iota_groups;
  e->set_root(Add(e, HloInstruction::CreateTuple(
                         {cmp, dot, slice, iota, gte, loop, fusion, custom, call, all_reduce,
                          all_gather}),
                  "root"));
  module->AddEntryComputation(std::move(entry));

  HloModuleConfig* config = module->mutable_config();
  config->entry_computation_layout = module->entry()->ComputeProgramShape();
  auto* alias = config->input_output_alias.add_entries();
  alias->add_output_shape_index(0);
  alias->set_parameter_number(0);
  alias->set_kind(xla::MUST_ALIAS);
  config->buffer_donor.add_entries()->set_parameter_number(1);
  (*config->frontend_attributes.mutable_map())["module_attr"] = "yes";
  config->is_scheduled = true;
  return module;
}

HloInstruction* Find(const HloModule& module, const std::string& name) {
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* i : c->instructions()) {
      if (i->name() == name) return i;
    }
  }
  return nullptr;
}

TEST(ModuleProtoTest, BuiltModuleRoundTrips) {
  std::unique_ptr<HloModule> module = BuildModule();
  auto proto = ModuleToProto(*module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  auto loaded = ModuleFromProto(*proto);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->instruction_count(), module->instruction_count());
  EXPECT_EQ((*loaded)->computation_count(), module->computation_count());
  EXPECT_EQ((*loaded)->entry()->name(), "main");

  auto proto2 = ModuleToProto(**loaded);
  ASSERT_TRUE(proto2.ok()) << proto2.status();
  xla::HloModuleProto a = *proto, b = *proto2;
  CanonicalizeProtoIds(&a);
  CanonicalizeProtoIds(&b);
  EXPECT_EQ(Diff(a, b), "");
  // And from there on ids agree too: an exact fixed point.
  auto loaded2 = ModuleFromProto(*proto2);
  ASSERT_TRUE(loaded2.ok()) << loaded2.status();
  auto proto3 = ModuleToProto(**loaded2);
  ASSERT_TRUE(proto3.ok());
  EXPECT_EQ(Diff(*proto2, *proto3), "");

  // Every instruction keeps its name, opcode, shape and operands.
  const HloModule& m = **loaded;
  for (HloComputation* c : module->computations()) {
    for (HloInstruction* original : c->instructions()) {
      SCOPED_TRACE(original->name());
      HloInstruction* copy = Find(m, original->name());
      ASSERT_NE(copy, nullptr);
      EXPECT_EQ(copy->opcode(), original->opcode());
      EXPECT_EQ(copy->shape(), original->shape());
      ASSERT_EQ(copy->operand_count(), original->operand_count());
      for (int64_t k = 0; k < copy->operand_count(); ++k) {
        EXPECT_EQ(copy->operand(k)->name(), original->operand(k)->name());
      }
      ASSERT_EQ(copy->called_computations().size(), original->called_computations().size());
      for (size_t k = 0; k < copy->called_computations().size(); ++k) {
        EXPECT_EQ(copy->called_computations()[k]->name(),
                  original->called_computations()[k]->name());
      }
      EXPECT_EQ(copy->parent()->name(), original->parent()->name());
    }
  }
}

TEST(ModuleProtoTest, AttributesSurvive) {
  std::unique_ptr<HloModule> module = BuildModule();
  auto proto = ModuleToProto(*module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  auto loaded = ModuleFromProto(*proto);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const HloModule& m = **loaded;

  const HloInstruction* loop = Find(m, "loop");
  EXPECT_EQ(loop->while_condition()->name(), "cond");
  EXPECT_EQ(loop->while_body()->name(), "body");
  const HloInstruction* cmp = Find(m, "cmp");
  EXPECT_EQ(cmp->attrs().comparison_direction, ComparisonDirection::kGe);
  EXPECT_EQ(cmp->attrs().comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(Find(m, "cond.lt")->attrs().comparison_type, ComparisonType::kDefault);
  EXPECT_EQ(Find(m, "reduce")->dimensions(), (std::vector<int64_t>{1}));
  EXPECT_EQ(Find(m, "reduce")->to_apply()->name(), "adder");
  EXPECT_EQ(Find(m, "iota")->attrs().iota_dimension, 1);
  EXPECT_EQ(Find(m, "slice")->attrs().slice_strides, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Find(m, "gte")->tuple_index(), 1);
  ASSERT_EQ(Find(m, "slice")->control_predecessors().size(), 1u);
  EXPECT_EQ(Find(m, "slice")->control_predecessors()[0]->name(), "gte");
  EXPECT_EQ(Find(m, "dot")->attrs().precision_config->operand_precision(0),
            xla::PrecisionConfig::HIGHEST);
  const HloInstruction* fusion = Find(m, "fusion");
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(fusion->fused_computation()->fusion_instruction(), fusion);

  const HloInstruction* c0 = Find(m, "c0");
  EXPECT_EQ(c0->literal(), Find(*module, "c0")->literal());
  EXPECT_EQ(c0->literal().shape().layout().minor_to_major, (std::vector<int64_t>{0, 1}));

  const HloInstruction* sum = Find(m, "sum");
  EXPECT_EQ(sum->metadata().source_line(), 42);
  ASSERT_TRUE(sum->has_sharding());
  EXPECT_EQ(sum->sharding().tile_assignment_devices_size(), 2);

  const HloAttributes& custom = Find(m, "custom")->attrs();
  EXPECT_EQ(custom.custom_call_target, "my_target");
  EXPECT_TRUE(custom.custom_call_has_side_effect);
  EXPECT_EQ(custom.custom_call_api_version, xla::API_VERSION_TYPED_FFI);
  EXPECT_EQ(custom.custom_call_schedule, xla::SCHEDULE_LATEST);
  ASSERT_EQ(custom.output_to_operand_aliasing.size(), 1u);
  EXPECT_EQ(custom.output_to_operand_aliasing[0].operand_number, 1);
  ASSERT_TRUE(custom.operand_layout_constraints.has_value());
  EXPECT_EQ(custom.operand_layout_constraints->size(), 2u);
  EXPECT_EQ(Find(m, "custom")->backend_config(), "{\"alpha\": 2}");

  const HloAttributes& ar = Find(m, "ar")->attrs();
  ASSERT_TRUE(ar.replica_groups.has_value());
  EXPECT_EQ(*ar.replica_groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(ar.channel_id, 5);
  EXPECT_TRUE(ar.use_global_device_ids);
  const HloAttributes& ag = Find(m, "ag")->attrs();
  ASSERT_TRUE(ag.iota_replica_groups.has_value());
  EXPECT_EQ(ag.iota_replica_groups->num_replica_groups(), 2);

  const HloModuleConfig& config = m.config();
  ASSERT_TRUE(config.entry_computation_layout.has_value());
  EXPECT_EQ(config.entry_computation_layout->parameters.size(), 3u);
  EXPECT_EQ(config.input_output_alias.entries(0).kind(), xla::MUST_ALIAS);
  EXPECT_EQ(config.buffer_donor.entries(0).parameter_number(), 1);
  EXPECT_EQ(config.frontend_attributes.map().at("module_attr"), "yes");
  EXPECT_TRUE(config.is_scheduled);
}

TEST(ModuleProtoTest, CompositeCallAttributesSurvive) {
  std::unique_ptr<HloModule> module = BuildModule();
  auto proto = ModuleToProto(*module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  // In the proto: is_composite plus the three frontend attributes.
  const xla::HloInstructionProto* call_proto = nullptr;
  for (const auto& c : proto->computations()) {
    for (const auto& i : c.instructions()) {
      if (i.name() == "composite_call") call_proto = &i;
    }
  }
  ASSERT_NE(call_proto, nullptr);
  EXPECT_TRUE(call_proto->is_composite());
  EXPECT_EQ(call_proto->opcode(), "call");
  EXPECT_EQ(call_proto->frontend_attributes().map().at("composite.name"), "my.exp");

  auto loaded = ModuleFromProto(*proto);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const HloInstruction* call = Find(**loaded, "composite_call");
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->is_composite());
  EXPECT_EQ(*call->FindFrontendAttribute("composite.name"), "my.exp");
  EXPECT_EQ(*call->FindFrontendAttribute("composite.attributes"), "{scale = 2 : i32}");
  EXPECT_EQ(*call->FindFrontendAttribute("composite.version"), "1");
  EXPECT_EQ(call->to_apply()->name(), "my_composite_impl");
}

TEST(ModuleProtoTest, WhileCalleesAreBodyThenConditionInTheProto) {
  std::unique_ptr<HloModule> module = BuildModule();
  auto proto = ModuleToProto(*module);
  ASSERT_TRUE(proto.ok());
  absl::flat_hash_map<int64_t, std::string> names;
  for (const auto& c : proto->computations()) names[c.id()] = c.name();
  for (const auto& c : proto->computations()) {
    for (const auto& i : c.instructions()) {
      if (i.opcode() != "while") continue;
      ASSERT_EQ(i.called_computation_ids_size(), 2);
      EXPECT_EQ(names[i.called_computation_ids(0)], "body");
      EXPECT_EQ(names[i.called_computation_ids(1)], "cond");
    }
  }
}

// Builds a one-computation proto: parameter -> negate (root).
xla::HloModuleProto SmallProto() {
  auto module = std::make_unique<HloModule>("small");
  auto c = std::make_unique<HloComputation>("main");
  const Shape f4 = WithLayout(Shape(xla::F32, {4}), {0});
  auto* p = Add(c.get(), HloInstruction::CreateParameter(0, f4, "x"));
  c->set_root(Add(c.get(), HloInstruction::Create(HloOpcode::kNegate, f4, {p}), "neg"));
  module->AddEntryComputation(std::move(c));
  return *ModuleToProto(*module);
}

TEST(ModuleProtoTest, UnmodeledFieldsAreCarried) {
  xla::HloModuleProto proto = SmallProto();
  xla::HloInstructionProto* neg = proto.mutable_computations(0)->mutable_instructions(1);
  auto* stat = neg->mutable_statistics_viz()->add_statistics();
  stat->set_stat_name("flops");
  stat->set_stat_val(12.5);
  neg->mutable_original_value()->add_elements()->mutable_original_array()->set_instruction_name(
      "orig");
  neg->set_delta(3);
  neg->mutable_sparsity_config();  // Present but empty: must stay present.
  neg->set_fusion_kind("kLoop");   // Meaningless on a negate, but XLA wrote it.
  // A field from a newer XLA: unknown to this proto, kept as bytes.
  neg->GetReflection()->MutableUnknownFields(neg)->AddVarint(1000, 77);
  // A layout detail the IR does not model (the root's shape is also the
  // program's result shape, where XLA writes the same details).
  for (xla::ShapeProto* shape :
       {neg->mutable_shape(), proto.mutable_computations(0)->mutable_program_shape()->mutable_result(),
        proto.mutable_host_program_shape()->mutable_result()}) {
    shape->mutable_layout()->set_tail_padding_alignment_in_elements(4);
    shape->mutable_layout()->add_dim_level_types(xla::DIM_DENSE);
  }
  proto.mutable_stack_frame_index()->add_file_names("model.py");
  proto.set_device_type("gpu");
  proto.GetReflection()->MutableUnknownFields(&proto)->AddLengthDelimited(999, "future");

  auto loaded = ModuleFromProto(proto);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto written = ModuleToProto(**loaded);
  ASSERT_TRUE(written.ok()) << written.status();
  xla::HloModuleProto expected = proto;
  CanonicalizeProtoIds(&expected);
  CanonicalizeProtoIds(&*written);
  EXPECT_EQ(Diff(expected, *written), "");
  EXPECT_EQ(written->GetReflection()->GetUnknownFields(*written).field_count(), 1);
}

TEST(ModuleProtoTest, CarriedShapeIsDroppedWhenTheShapeChanges) {
  xla::HloModuleProto proto = SmallProto();
  proto.mutable_computations(0)->mutable_instructions(1)->mutable_shape()->mutable_layout()
      ->set_tail_padding_alignment_in_elements(4);
  auto loaded = ModuleFromProto(proto);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  HloInstruction* neg = Find(**loaded, "neg");
  neg->set_shape(WithLayout(Shape(xla::F32, {4}), {0}));
  neg->mutable_shape()->mutable_layout()->memory_space = 2;
  auto written = ModuleToProto(**loaded);
  ASSERT_TRUE(written.ok());
  const auto& layout = written->computations(0).instructions(1).shape().layout();
  EXPECT_EQ(layout.memory_space(), 2);
  EXPECT_EQ(layout.tail_padding_alignment_in_elements(), 1);
}

TEST(ModuleProtoTest, ReadsAnyComputationAndInstructionOrder) {
  // Callers before callees and users before operands: resolved by id.
  std::unique_ptr<HloModule> module = BuildModule();
  auto proto = ModuleToProto(*module);
  ASSERT_TRUE(proto.ok());
  xla::HloModuleProto shuffled = *proto;
  std::reverse(shuffled.mutable_computations()->begin(), shuffled.mutable_computations()->end());
  for (auto& c : *shuffled.mutable_computations()) {
    std::reverse(c.mutable_instructions()->begin(), c.mutable_instructions()->end());
  }
  auto loaded = ModuleFromProto(shuffled);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->instruction_count(), module->instruction_count());
  auto written = ModuleToProto(**loaded);
  ASSERT_TRUE(written.ok()) << written.status();
  // Written back callees-first, operands-first.
  absl::flat_hash_set<int64_t> seen_computations;
  for (const auto& c : written->computations()) {
    absl::flat_hash_set<int64_t> seen;
    for (const auto& i : c.instructions()) {
      for (int64_t id : i.operand_ids()) EXPECT_TRUE(seen.contains(id)) << i.name();
      for (int64_t id : i.called_computation_ids()) {
        EXPECT_TRUE(seen_computations.contains(id)) << i.name();
      }
      seen.insert(i.id());
    }
    seen_computations.insert(c.id());
  }
}

TEST(ModuleProtoTest, ScheduleRoundTrips) {
  xla::HloModuleProto proto = SmallProto();
  auto& sequence = (*proto.mutable_schedule()->mutable_sequences())[proto.computations(0).id()];
  for (const auto& i : proto.computations(0).instructions()) sequence.add_instruction_ids(i.id());
  auto loaded = ModuleFromProto(proto);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE((*loaded)->config().is_scheduled);
  auto written = ModuleToProto(**loaded);
  ASSERT_TRUE(written.ok());
  CanonicalizeProtoIds(&proto);
  CanonicalizeProtoIds(&*written);
  EXPECT_EQ(Diff(proto.schedule(), written->schedule()), "");
}

TEST(SnapshotProtoTest, RoundTrips) {
  LoadedSnapshot snapshot;
  snapshot.module = BuildModule();
  snapshot.arguments.push_back(Iota(Shape(xla::F32, {2, 3})));
  snapshot.arguments.push_back(Literal::Scalar(xla::S32, 3));
  snapshot.result = Iota(Shape(xla::BF16, {5}));
  snapshot.execution_platform = "Host";
  auto proto = SnapshotToProto(snapshot);
  ASSERT_TRUE(proto.ok()) << proto.status();
  auto back = SnapshotFromProto(*proto);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->arguments.size(), 2u);
  EXPECT_EQ(back->arguments[0], snapshot.arguments[0]);
  EXPECT_EQ(back->arguments[1], snapshot.arguments[1]);
  ASSERT_TRUE(back->result.has_value());
  EXPECT_EQ(*back->result, *snapshot.result);
  EXPECT_EQ(back->execution_platform, "Host");
  EXPECT_EQ(back->module->instruction_count(), snapshot.module->instruction_count());
}

// Every module of XLA's own test corpus (HLO text, set HLOC_CORPUS_DIR)
// survives IR -> proto -> IR: the text printed before and after agrees, and
// the proto is a fixed point.
std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  const char* root = std::getenv("HLOC_CORPUS_DIR");
  if (root == nullptr) return files;
  for (const char* sub : {"/xla", "/xla2023"}) {
    const std::string dir = std::string(root) + sub;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* entry = readdir(d)) {
        if (absl::EndsWith(entry->d_name, ".hlo")) files.push_back(dir + "/" + entry->d_name);
      }
      closedir(d);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Text of every computation (the module header holds settings that
// HloModuleProto has no fields for).
std::string PrintComputations(const HloModule& module) {
  std::string out;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    absl::StrAppend(&out, PrintComputation(*c), "\n");
  }
  return out;
}

// "" when equal, else the first line where the texts part.
std::string FirstDifferentLine(const std::string& a, const std::string& b) {
  std::vector<std::string> la = absl::StrSplit(a, '\n'), lb = absl::StrSplit(b, '\n');
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    const std::string x = i < la.size() ? la[i] : "<end>", y = i < lb.size() ? lb[i] : "<end>";
    if (x != y) return absl::StrCat("line ", i + 1, ":\n  ", x, "\nvs\n  ", y);
  }
  return "";
}

TEST(ModuleProtoTest, XlaCorpusSurvivesProtos) {
  const std::vector<std::string> files = CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set";
  int modules = 0;
  for (const std::string& path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    ParseOptions options;
    options.filename = path;
    for (auto& parsed : ParseEachHloModule(text.str(), options)) {
      if (!parsed.ok()) continue;  // The parser's business, tested elsewhere.
      SCOPED_TRACE(absl::StrCat(path, " module ", (*parsed)->name()));
      ++modules;
      // The reader reads a compare type the operands imply as "default", as
      // XLA prints it; text may spell it out.
      for (HloComputation* c : (*parsed)->computations()) {
        for (HloInstruction* i : c->instructions()) {
          if (i->opcode() != HloOpcode::kCompare) continue;
          const PrimitiveType t = i->operand(0)->shape().element_type();
          const ComparisonType implied = IsFloatingPoint(t) || IsComplex(t) ? ComparisonType::kFloat
                                         : IsSignedInteger(t)             ? ComparisonType::kSigned
                                                                          : ComparisonType::kUnsigned;
          if (i->attrs().comparison_type == implied) {
            i->mutable_attrs()->comparison_type = ComparisonType::kDefault;
          }
        }
      }
      auto proto = ModuleToProto(**parsed);
      ASSERT_TRUE(proto.ok()) << proto.status();
      auto loaded = ModuleFromProto(*proto);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      EXPECT_EQ(FirstDifferentLine(PrintComputations(**loaded), PrintComputations(**parsed)), "");
      auto again = ModuleToProto(**loaded);
      ASSERT_TRUE(again.ok()) << again.status();
      xla::HloModuleProto a = *proto, b = *again;
      CanonicalizeProtoIds(&a);
      CanonicalizeProtoIds(&b);
      EXPECT_EQ(Diff(a, b), "");
    }
  }
  EXPECT_GT(modules, 100);
}

// replica_groups=mesh[...] {...} is HloInstructionProto field 93
// (mesh_axes_replica_group_list: a MeshProto and AxisRefProtos by index),
// as JAX 0.10.2's XLA writes it; both readers decode it into the IR.
TEST(ProtoIoTest, MeshReplicaGroupsRoundTrip) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(HloModule m, num_partitions=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ROOT ar = f32[8] all-reduce(p), channel_id=1, replica_groups=mesh['x'=2,'y'=2], device_ids=(3,2,1,0) {'y':(1)1,'x'}, use_global_device_ids=true, to_apply=add
})");
  // (1)1 is no sub-axis: the parser refuses it.
  ASSERT_FALSE(module.ok());
  module = ParseHloModule(R"(HloModule m, num_partitions=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), channel_id=1, replica_groups=mesh['x'=2,'y'=2], device_ids=(3,2,1,0) {'y','x'}, use_global_device_ids=true, to_apply=add
  ROOT ar2 = f32[8] all-reduce(ar), channel_id=2, replica_groups=mesh['x'=2,'y'=2], device_ids=([2,2]T(1,0)) {'x'}, use_global_device_ids=true, to_apply=add
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(**module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  const xla::HloInstructionProto* ar = nullptr;
  for (const auto& c : proto->computations()) {
    for (const auto& i : c.instructions()) {
      if (i.name() == "ar") ar = &i;
    }
  }
  ASSERT_NE(ar, nullptr);
  ASSERT_TRUE(ar->has_mesh_axes_replica_group_list());
  EXPECT_FALSE(ar->has_collective_device_list());
  EXPECT_EQ(ar->replica_groups_size(), 0);
  const auto& list = ar->mesh_axes_replica_group_list();
  ASSERT_EQ(list.mesh().axes_size(), 2);
  EXPECT_EQ(list.mesh().axes(1).name(), "y");
  EXPECT_EQ(list.mesh().device_ids_size(), 4);
  ASSERT_EQ(list.axes_size(), 2);
  EXPECT_EQ(list.axes(0).mesh_axis_index(), 1);
  EXPECT_EQ(list.axes(1).mesh_axis_index(), 0);
  // The iota order is MeshProto field 3 (as JAX 0.10.2's XLA writes it).
  const xla::HloInstructionProto* ar2 = nullptr;
  for (const auto& c : proto->computations()) {
    for (const auto& i : c.instructions()) {
      if (i.name() == "ar2") ar2 = &i;
    }
  }
  ASSERT_NE(ar2, nullptr);
  const xla::MeshProto& iota_mesh = ar2->mesh_axes_replica_group_list().mesh();
  ASSERT_TRUE(iota_mesh.has_iota_transform());
  EXPECT_EQ(iota_mesh.iota_transform().reshape_dims_size(), 2);
  EXPECT_EQ(iota_mesh.device_ids_size(), 0);
  const std::string bytes = proto->SerializeAsString();
  absl::StatusOr<std::unique_ptr<HloModule>> fast = ModuleFromProtoBytes(bytes);
  ASSERT_TRUE(fast.ok()) << fast.status();
  absl::StatusOr<std::unique_ptr<HloModule>> slow = ModuleFromProto(*proto);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(PrintComputation(*(*fast)->entry()), PrintComputation(*(*module)->entry()));
  EXPECT_EQ(PrintComputation(*(*slow)->entry()), PrintComputation(*(*module)->entry()));
  absl::StatusOr<xla::HloModuleProto> again = ModuleToProto(**slow);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->SerializeAsString(), bytes);
}

}  // namespace
}  // namespace hloc
