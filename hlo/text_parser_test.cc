// Tests of the HLO text parser: one test per piece of syntax it accepts, a
// table of malformed inputs whose errors must name the fault and point at it,
// and a check that parse time grows linearly (throughput: //bench:hlo_io_benchmark).
#include "hlo/text_parser.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

absl::StatusOr<std::unique_ptr<HloModule>> Parse(const std::string& text) {
  ParseOptions options;
  options.filename = "t.hlo";
  return ParseHloModule(text, options);
}

std::unique_ptr<HloModule> ParseOk(const std::string& text) {
  auto module = Parse(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(module).value() : nullptr;
}

// The module's instruction named `name`, or null.
HloInstruction* Find(const HloModule& module, absl::string_view name) {
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* i : c->instructions()) {
      if (i->name() == name) return i;
    }
  }
  return nullptr;
}

// One ENTRY computation around `body`.
std::string Entry(const std::string& body) {
  return absl::StrCat("HloModule m\n\nENTRY e {\n", body, "\n}\n");
}

TEST(TextParser, ModuleHeaderAttributesGoToTheConfig) {
  auto module = ParseOk(R"(
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0}, s32[])->(f32[2]{0}, s32[])}, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }, buffer_donor={ (0, {}) }, alias_passthrough_params=true, replica_count=2, num_partitions=4, allow_spmd_sharding_propagation_to_parameters={true,false}, allow_spmd_sharding_propagation_to_output=true, frontend_attributes={xla.sdy="1"}

ENTRY main {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (f32[2], s32[]) tuple(a, b)
})");
  ASSERT_NE(module, nullptr);
  const HloModuleConfig& config = module->config();
  EXPECT_EQ(module->name(), "jit_f");
  EXPECT_TRUE(config.is_scheduled);
  ASSERT_TRUE(config.entry_computation_layout.has_value());
  EXPECT_EQ(config.entry_computation_layout->parameters.size(), 2u);
  EXPECT_EQ(config.entry_computation_layout->result.ToString(), "(f32[2]{0}, s32[])");
  ASSERT_EQ(config.input_output_alias.entries_size(), 2);
  EXPECT_EQ(config.input_output_alias.entries(1).parameter_number(), 1);
  EXPECT_EQ(config.input_output_alias.entries(1).kind(), xla::MUST_ALIAS);
  EXPECT_EQ(config.input_output_alias.entries(0).kind(), xla::MAY_ALIAS);
  ASSERT_EQ(config.buffer_donor.entries_size(), 1);
  EXPECT_TRUE(config.alias_passthrough_params);
  EXPECT_EQ(config.replica_count, 2);
  EXPECT_EQ(config.num_partitions, 4);
  EXPECT_EQ(config.allow_spmd_sharding_propagation_to_parameters, (std::vector<bool>{true, false}));
  EXPECT_EQ(config.allow_spmd_sharding_propagation_to_output, (std::vector<bool>{true}));
  EXPECT_EQ(config.frontend_attributes.map().at("xla.sdy"), "1");
}

TEST(TextParser, JaxStackFrameSectionsAreRead) {
  auto module = ParseOk(R"(HloModule jit_g

FileNames
1 "make_zoo.py"

FunctionNames
1 "<module>"
2 "main"

FileLocations
1 {file_name_id=1 function_name_id=1 line=495 end_line=495 column=4 end_column=10}
2 {file_name_id=1 function_name_id=2 line=457 end_line=458 column=8 end_column=30}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}

ENTRY %main.4 (x.1: f32[2]) -> f32[2] {
  ROOT %x.1 = f32[2]{0} parameter(0), metadata={op_name="x" stack_frame_id=2}
})");
  ASSERT_NE(module, nullptr);
  const auto& index = module->config().carried.stack_frame_index();
  ASSERT_EQ(index.file_names_size(), 1);
  EXPECT_EQ(index.function_names(1), "main");
  ASSERT_EQ(index.file_locations_size(), 2);
  EXPECT_EQ(index.file_locations(1).end_line(), 458);
  ASSERT_EQ(index.stack_frames_size(), 2);
  // The text counts parent frames from 1, the proto from 0.
  EXPECT_EQ(index.stack_frames(1).parent_frame_id(), 1);
  EXPECT_EQ(module->entry()->root()->metadata().stack_frame_id(), 2);
}

TEST(TextParser, BareComputationsCommentsAndLaterCallees) {
  // No header, no '%', no signatures; the callee comes after its caller and
  // the last computation is the entry.
  ParseOptions options;
  options.filename = "dir/my-file.hlo";
  auto module = ParseHloModule(R"(
// A line comment.
caller {
  p = f32[] parameter(0)  /* a block comment */
  ROOT c = f32[] call(p), to_apply=callee /*index=5*/
}

callee (x: f32[]) -> f32[] {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}, execution_thread="side"
)",
                               options);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->name(), "my-file");
  EXPECT_EQ((*module)->entry()->name(), "callee");
  HloInstruction* call = Find(**module, "c");
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->called_computations().size(), 1u);
  EXPECT_EQ(call->to_apply()->name(), "callee");
  EXPECT_EQ(call->to_apply()->execution_thread(), "side");
}

TEST(TextParser, EntryMarkerWinsOverPosition) {
  auto module = ParseOk(R"(HloModule m
ENTRY %first (a: f32[]) -> f32[] {
  ROOT %a = f32[] parameter(0)
}
%second {
  ROOT %b = f32[] parameter(0)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "first");
}

TEST(TextParser, OperandsWithAndWithoutShapes) {
  auto module = ParseOk(Entry(R"(  %a = f32[2]{0} parameter(0)
  %b = f32[2] parameter(1)
  %s = f32[2] add(f32[2]{0} %a, %b)
  ROOT %t = f32[2] multiply(s, b))"));
  ASSERT_NE(module, nullptr);
  HloInstruction* t = Find(*module, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->operand(0)->name(), "s");
  EXPECT_EQ(t->operand(1)->name(), "b");
  EXPECT_EQ(module->entry()->root(), t);
}

TEST(TextParser, NamesAreScopedPerComputationAndUniquifiedInTheModule) {
  auto module = ParseOk(R"(HloModule m
f {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=f
})");
  ASSERT_NE(module, nullptr);
  // Both computations say "x" and "y"; the module keeps names unique.
  EXPECT_EQ(module->entry()->root()->name(), "y.1");
  EXPECT_EQ(module->entry()->parameter(0)->name(), "x.1");
  EXPECT_EQ(module->entry()->root()->operand(0), module->entry()->parameter(0));
}

TEST(TextParser, SliceIndexIotaAndDynamicSlice) {
  auto module = ParseOk(Entry(R"(  p = f32[4,6] parameter(0)
  i = s32[] parameter(1)
  s = f32[2,2] slice(p), slice={[0:2], [1:6:3]}
  d = f32[1,6] dynamic-slice(p, i, i), dynamic_slice_sizes={1,6}
  io = s32[4] iota(), iota_dimension=0
  t = (f32[2,2], s32[4]) tuple(s, io)
  ROOT g = s32[4] get-tuple-element(t), index=1)"));
  ASSERT_NE(module, nullptr);
  const HloAttributes& s = Find(*module, "s")->attrs();
  EXPECT_EQ(s.slice_starts, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(s.slice_limits, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(s.slice_strides, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Find(*module, "d")->attrs().dynamic_slice_sizes, (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(Find(*module, "g")->tuple_index(), 1);
  EXPECT_EQ(Find(*module, "io")->attrs().iota_dimension, 0);
}

TEST(TextParser, ConvolutionWindowAndDimLabels) {
  auto module = ParseOk(Entry(R"(  a = f32[1,8,8,8,4] parameter(0)
  k = f32[3,3,3,4,8] parameter(1)
  ROOT c = f32[1,4,4,4,8] convolution(a, k), window={size=3x3x3 stride=2x2x2 pad=0_1x1_1x-1_2 lhs_dilate=1x1x2 rhs_dilate=2x1x1 rhs_reversal=0x1x0}, dim_labels=b012f_012io->b012f, feature_group_count=2, batch_group_count=1, operand_precision={high,HIGHEST})"));
  ASSERT_NE(module, nullptr);
  const HloAttributes& a = module->entry()->root()->attrs();
  ASSERT_TRUE(a.has_window);
  ASSERT_EQ(a.window->dimensions_size(), 3);
  EXPECT_EQ(a.window->dimensions(0).stride(), 2);
  EXPECT_EQ(a.window->dimensions(2).padding_low(), -1);
  EXPECT_EQ(a.window->dimensions(2).padding_high(), 2);
  EXPECT_EQ(a.window->dimensions(2).base_dilation(), 2);
  EXPECT_EQ(a.window->dimensions(0).window_dilation(), 2);
  EXPECT_TRUE(a.window->dimensions(1).window_reversal());
  const auto& d = *a.convolution_dimension_numbers;
  EXPECT_EQ(d.input_batch_dimension(), 0);
  EXPECT_EQ(d.input_feature_dimension(), 4);
  EXPECT_EQ(d.kernel_input_feature_dimension(), 3);
  EXPECT_EQ(d.kernel_output_feature_dimension(), 4);
  ASSERT_EQ(d.output_spatial_dimensions_size(), 3);
  EXPECT_EQ(d.output_spatial_dimensions(2), 3);
  EXPECT_EQ(a.feature_group_count, 2);
  ASSERT_EQ(a.precision_config->operand_precision_size(), 2);
  EXPECT_EQ(a.precision_config->operand_precision(1), xla::PrecisionConfig::HIGHEST);
}

TEST(TextParser, DimLabelsWithUnorderedSpatialDimensions) {
  auto module = ParseOk(Entry(R"(  a = f32[8,1,5,5] parameter(0)
  k = f32[3,3,1,4] parameter(1)
  ROOT c = f32[8,4,3,3] convolution(a, k), window={size=3x3}, dim_labels=bf10_10io->bf01)"));
  ASSERT_NE(module, nullptr);
  const auto& d = *module->entry()->root()->attrs().convolution_dimension_numbers;
  EXPECT_EQ(d.input_spatial_dimensions(0), 3);
  EXPECT_EQ(d.input_spatial_dimensions(1), 2);
  EXPECT_EQ(d.kernel_spatial_dimensions(0), 1);
  EXPECT_EQ(d.output_spatial_dimensions(0), 2);
}

TEST(TextParser, DotRaggedDotAndSparsity) {
  auto module = ParseOk(Entry(R"(  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  g = s64[2] parameter(2)
  d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, algorithm=dot_bf16_bf16_f32_x3
  m = u16[2,3,2] parameter(3)
  s = f32[2,3,5] dot(a, b, m), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sparsity=L.2@2:4
  ROOT r = f32[2,3,5] ragged-dot(a, b, g), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})"));
  ASSERT_NE(module, nullptr);
  const HloAttributes& d = Find(*module, "d")->attrs();
  EXPECT_EQ(d.dot_dimension_numbers->lhs_contracting_dimensions(0), 2);
  EXPECT_EQ(d.dot_dimension_numbers->rhs_batch_dimensions(0), 0);
  EXPECT_EQ(d.precision_config->algorithm(), xla::PrecisionConfig::ALG_DOT_BF16_BF16_F32_X3);
  const xla::HloInstructionProto* carried = Find(*module, "s")->carried_proto_fields();
  ASSERT_NE(carried, nullptr);
  EXPECT_EQ(carried->sparsity_config().lhs().dimension(), 2);
  EXPECT_EQ(carried->sparsity_config().lhs().num_non_zero(), 2);
  EXPECT_EQ(carried->sparsity_config().lhs().block_size(), 4);
  const auto& r = *Find(*module, "r")->attrs().ragged_dot_dimension_numbers;
  EXPECT_EQ(r.dot_dimension_numbers().rhs_contracting_dimensions(0), 1);
  EXPECT_EQ(r.lhs_ragged_dimensions(0), 0);
  EXPECT_EQ(r.rhs_group_dimensions(0), 0);
}

TEST(TextParser, GatherAndScatter) {
  auto module = ParseOk(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  op = f32[4,5,6] parameter(0)
  idx = s32[4,1] parameter(1)
  g = f32[4,5,6] gather(op, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,5,6}, indices_are_sorted=true
  upd = f32[4,5,6] parameter(2)
  ROOT sc = f32[4,5,6] scatter(op, idx, upd), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  const HloAttributes& g = Find(*module, "g")->attrs();
  EXPECT_EQ(g.gather_dimension_numbers->offset_dims_size(), 2);
  EXPECT_EQ(g.gather_dimension_numbers->start_index_map(0), 1);
  EXPECT_EQ(g.gather_dimension_numbers->operand_batching_dims(0), 0);
  EXPECT_EQ(g.gather_dimension_numbers->index_vector_dim(), 1);
  EXPECT_EQ(g.gather_slice_sizes, (std::vector<int64_t>{1, 5, 6}));
  EXPECT_TRUE(g.indices_are_sorted);
  HloInstruction* sc = Find(*module, "sc");
  EXPECT_EQ(sc->attrs().scatter_dimension_numbers->scatter_dims_to_operand_dims(0), 1);
  EXPECT_EQ(sc->attrs().scatter_dimension_numbers->scatter_indices_batching_dims(0), 0);
  EXPECT_TRUE(sc->attrs().unique_indices);
  EXPECT_EQ(sc->to_apply()->name(), "add");
}

TEST(TextParser, PadCompareAndReducePrecision) {
  auto module = ParseOk(Entry(R"(  p = f32[4,4] parameter(0)
  z = f32[] constant(0)
  pd = f32[9,6] pad(p, z), padding=0_1_1x-1_3
  c = pred[4,4] compare(p, p), direction=LT, type=TOTALORDER
  ROOT r = f32[4,4] reduce-precision(p), exponent_bits=5, mantissa_bits=10)"));
  ASSERT_NE(module, nullptr);
  const auto& pad = *Find(*module, "pd")->attrs().padding_config;
  ASSERT_EQ(pad.dimensions_size(), 2);
  EXPECT_EQ(pad.dimensions(0).interior_padding(), 1);
  EXPECT_EQ(pad.dimensions(1).edge_padding_low(), -1);
  const HloAttributes& c = Find(*module, "c")->attrs();
  EXPECT_EQ(c.comparison_direction, ComparisonDirection::kLt);
  EXPECT_EQ(c.comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(module->entry()->root()->attrs().mantissa_bits, 10);
}

TEST(TextParser, FusionSetsFusionInstruction) {
  auto module = ParseOk(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT f = f32[2] fusion(p), kind=kLoop, calls=fused, output_to_operand_aliasing={{}: (0, {})}
}
fused {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* f = Find(*module, "f");
  ASSERT_NE(f->fused_computation(), nullptr);
  EXPECT_EQ(f->fused_computation()->fusion_instruction(), f);
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  ASSERT_EQ(f->attrs().output_to_operand_aliasing.size(), 1u);
  EXPECT_EQ(f->attrs().output_to_operand_aliasing[0].operand_number, 0);
  EXPECT_EQ(module->entry()->name(), "e");
}

TEST(TextParser, WhileAndConditionalCalleesInXlaOrder) {
  auto module = ParseOk(R"(HloModule m
c {
  a = s32[] parameter(0)
  z = s32[] constant(10)
  ROOT lt = pred[] compare(a, z), direction=LT
}
b {
  a = s32[] parameter(0)
  ROOT n = s32[] negate(a)
}
ENTRY e {
  p = s32[] parameter(0)
  w = s32[] while(p), body=b, condition=c
  t = pred[] constant(true)
  k = s32[] conditional(t, p, p), false_computation=b, true_computation=b
  i = s32[] constant(1)
  ROOT j = s32[] conditional(i, p, p, p), branch_computations={b, b, b}
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* w = Find(*module, "w");
  EXPECT_EQ(w->while_condition()->name(), "c");
  EXPECT_EQ(w->while_body()->name(), "b");
  EXPECT_EQ(Find(*module, "k")->called_computations().size(), 2u);
  EXPECT_EQ(Find(*module, "j")->called_computations().size(), 3u);
}

TEST(TextParser, CustomCallAttributes) {
  auto module = ParseOk(R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GT
}
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[5,5] parameter(1)
  c1 = f32[1,2,3]{0,2,1} custom-call(p, q), custom_call_target="foo", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, schedule=SCHEDULE_LATEST, operand_layout_constraints={f32[2,3]{0,1}, f32[5,5]{1,0}}, backend_config={"k": {"nested": "}"}}
  c2 = f32[2,3] custom-call(p), custom_call_target="SetBound", literal=s32[] 7, backend_config="plain \"text\""
  c3 = (f32[2,3], s32[2,3]) custom-call(p), custom_call_target="TopK", called_computations={cmp}, output_to_operand_aliasing={{0}: (0, {})}
  ROOT t = (f32[1,2,3], f32[2,3]) tuple(c1, c2)
})");
  ASSERT_NE(module, nullptr);
  HloInstruction* c1 = Find(*module, "c1");
  const HloAttributes& a = c1->attrs();
  EXPECT_EQ(a.custom_call_target, "foo");
  EXPECT_TRUE(a.custom_call_has_side_effect);
  EXPECT_EQ(a.custom_call_api_version, xla::API_VERSION_TYPED_FFI);
  EXPECT_EQ(a.custom_call_schedule, xla::SCHEDULE_LATEST);
  ASSERT_TRUE(a.operand_layout_constraints.has_value());
  EXPECT_EQ((*a.operand_layout_constraints)[0].ToString(), "f32[2,3]{0,1}");
  // Braced backend configs are kept verbatim, quoted ones unescaped.
  EXPECT_EQ(c1->backend_config(), R"({"k": {"nested": "}"}})");
  HloInstruction* c2 = Find(*module, "c2");
  EXPECT_EQ(c2->backend_config(), "plain \"text\"");
  ASSERT_TRUE(c2->attrs().literal.has_value());
  EXPECT_EQ(c2->attrs().literal->GetAsInt64(0), 7);
  HloInstruction* c3 = Find(*module, "c3");
  ASSERT_EQ(c3->called_computations().size(), 1u);
  EXPECT_EQ(c3->called_computations()[0]->name(), "cmp");
}

TEST(TextParser, RandomNumberOps) {
  auto module = ParseOk(Entry(R"(  a = f32[] parameter(0)
  b = f32[] parameter(1)
  r = f32[3] rng(a, b), distribution=rng_normal
  s = u64[2] parameter(2)
  g = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_philox
  st = u64[2] rng-get-and-update-state(), delta=131072
  ROOT t = (f32[3], u64[2]) tuple(r, st))"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Find(*module, "r")->attrs().distribution, xla::RNG_NORMAL);
  EXPECT_EQ(Find(*module, "g")->attrs().rng_algorithm, xla::RNG_PHILOX);
  EXPECT_EQ(Find(*module, "st")->carried_proto_fields()->delta(), 131072);
}

TEST(TextParser, LinearAlgebraSortTopKAndBatchNorm) {
  auto module = ParseOk(R"(HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  ts = f32[4,3] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE
  ch = f32[4,4] cholesky(a), lower=true
  f = c64[4,3] fft(ts), fft_type=RFFT, fft_length={4}
  so = f32[4,4] sort(a), dimensions={1}, is_stable=true, to_apply=lt
  tk = (f32[4,2], s32[4,2]) topk(a), k=2, largest=false
  sc = f32[4] parameter(2)
  bn = (f32[4,4], f32[4], f32[4]) batch-norm-training(a, sc, sc), epsilon=0.001, feature_index=1
  ROOT t = (f32[4,4], f32[4,4]) tuple(ch, so)
})");
  ASSERT_NE(module, nullptr);
  const auto& ts = *Find(*module, "ts")->attrs().triangular_solve_options;
  EXPECT_TRUE(ts.left_side() && ts.lower() && ts.unit_diagonal());
  EXPECT_EQ(ts.transpose_a(), xla::TriangularSolveOptions::NO_TRANSPOSE);
  EXPECT_TRUE(Find(*module, "ch")->attrs().cholesky_options->lower());
  EXPECT_EQ(Find(*module, "f")->attrs().fft_type, xla::RFFT);
  EXPECT_TRUE(Find(*module, "so")->attrs().is_stable);
  EXPECT_EQ(Find(*module, "tk")->attrs().k, 2);
  EXPECT_FALSE(Find(*module, "tk")->attrs().largest);
  EXPECT_FLOAT_EQ(Find(*module, "bn")->attrs().epsilon, 0.001f);
  EXPECT_EQ(Find(*module, "bn")->attrs().feature_index, 1);
}

TEST(TextParser, CollectivesAndCommunication) {
  auto module = ParseOk(R"(HloModule m, replica_count=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), channel_id=3, replica_groups={{0,1},{2,3}}, constrain_layout=true, use_global_device_ids=true, to_apply=add
  ag = f32[16] all-gather(p), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}
  cp = f32[8] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2}}
  tok = token[] after-all()
  inf = (f32[8], token[]) infeed(tok), infeed_config="cfg"
  out = token[] outfeed(p, tok), outfeed_shape=f32[8]{0}, outfeed_config="o"
  snd = (f32[8], u32[], token[]) send(p, tok), channel_id=5, is_host_transfer=true
  ROOT sd = token[] send-done(snd), channel_id=5, is_host_transfer=true
})");
  ASSERT_NE(module, nullptr);
  const HloAttributes& ar = Find(*module, "ar")->attrs();
  EXPECT_EQ(ar.channel_id, 3);
  ASSERT_TRUE(ar.replica_groups.has_value());
  EXPECT_EQ((*ar.replica_groups)[1], (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(ar.constrain_layout);
  EXPECT_TRUE(ar.use_global_device_ids);
  const HloAttributes& ag = Find(*module, "ag")->attrs();
  ASSERT_TRUE(ag.iota_replica_groups.has_value());
  EXPECT_EQ(ag.iota_replica_groups->num_replica_groups(), 2);
  EXPECT_EQ(ag.iota_replica_groups->iota_transpose_perm(0), 1);
  EXPECT_EQ(Find(*module, "cp")->attrs().source_target_pairs[1],
            (std::pair<int64_t, int64_t>{1, 2}));
  EXPECT_EQ(Find(*module, "inf")->attrs().infeed_config, "cfg");
  EXPECT_EQ(Find(*module, "out")->attrs().outfeed_shape->ToString(), "f32[8]{0}");
  EXPECT_TRUE(Find(*module, "snd")->attrs().is_host_transfer);
}

// XLA's mesh form of replica groups (JAX 0.10.2's partitioned dumps): read
// into the IR's MeshAxesReplicaGroupListProto, printed back the same way.
TEST(TextParser, MeshReplicaGroups) {
  const std::string text = R"(HloModule m, num_partitions=8
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}, use_global_device_ids=true, to_apply=add
  a2a = f32[8] all-to-all(p), channel_id=2, replica_groups=mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'b':(2)2,'a'}, dimensions={0}
  ag = f32[16] all-gather(p), channel_id=3, replica_groups=mesh["a"=2,'b'=4] {'1'}, dimensions={0}
  ROOT ar2 = f32[16] all-reduce(ag), channel_id=4, replica_groups=mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)) {'a'}, use_global_device_ids=true, to_apply=add
})";
  auto module = ParseOk(text);
  ASSERT_NE(module, nullptr);
  const HloAttributes& ar = Find(*module, "ar")->attrs();
  ASSERT_TRUE(ar.mesh_replica_groups.has_value());
  EXPECT_FALSE(ar.replica_groups.has_value());
  EXPECT_FALSE(ar.iota_replica_groups.has_value());
  ASSERT_EQ(ar.mesh_replica_groups->mesh().axes_size(), 3);
  EXPECT_EQ(ar.mesh_replica_groups->mesh().axes(2).name(), "axis_2");
  EXPECT_EQ(ar.mesh_replica_groups->mesh().axes(2).size(), 4);
  ASSERT_EQ(ar.mesh_replica_groups->axes_size(), 1);
  EXPECT_EQ(ar.mesh_replica_groups->axes(0).mesh_axis_index(), 0);
  EXPECT_FALSE(ar.mesh_replica_groups->axes(0).has_sub_axis_info());
  const HloAttributes& a2a = Find(*module, "a2a")->attrs();
  ASSERT_TRUE(a2a.mesh_replica_groups.has_value());
  EXPECT_EQ(a2a.mesh_replica_groups->mesh().device_ids_size(), 8);
  EXPECT_EQ(a2a.mesh_replica_groups->mesh().device_ids(0), 7);
  ASSERT_EQ(a2a.mesh_replica_groups->axes_size(), 2);
  EXPECT_EQ(a2a.mesh_replica_groups->axes(0).mesh_axis_index(), 1);
  EXPECT_EQ(a2a.mesh_replica_groups->axes(0).sub_axis_info().pre_size(), 2);
  EXPECT_EQ(a2a.mesh_replica_groups->axes(0).sub_axis_info().size(), 2);
  EXPECT_EQ(a2a.mesh_replica_groups->axes(1).mesh_axis_index(), 0);
  // An axis may be named by its index, as XLA's parser allows.
  EXPECT_EQ(Find(*module, "ag")->attrs().mesh_replica_groups->axes(0).mesh_axis_index(), 1);
  // Printed in XLA's form, which reads back to the same text.
  const std::string printed = PrintModule(*module);
  EXPECT_TRUE(absl::StrContains(
      printed, "replica_groups=mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}, "))
      << printed;
  EXPECT_TRUE(absl::StrContains(
      printed, "replica_groups=mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0) {'b':(2)2,'a'}, "))
      << printed;
  EXPECT_TRUE(absl::StrContains(printed, "replica_groups=mesh['a'=2,'b'=4] {'b'}, ")) << printed;
  EXPECT_TRUE(absl::StrContains(
      printed, "replica_groups=mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)) {'a'}, "))
      << printed;
  const xla::MeshProto& iota_mesh = Find(*module, "ar2")->attrs().mesh_replica_groups->mesh();
  ASSERT_TRUE(iota_mesh.has_iota_transform());
  EXPECT_EQ(iota_mesh.iota_transform().reshape_dims_size(), 2);
  EXPECT_EQ(iota_mesh.iota_transform().transpose_perm(0), 1);
  EXPECT_EQ(iota_mesh.device_ids_size(), 0);
  auto again = ParseOk(printed);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(PrintModule(*again), printed);
}

// Found by the text fuzzer in CI: "channel_id=0" kept a channel that the
// module's proto cannot hold (0 there means none), so a module verified as
// text and failed to verify after a proto round trip. 0 is no channel.
TEST(TextParser, ChannelIdZeroIsNoChannel) {
  auto module = ParseOk(R"(HloModule m, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ROOT ar = f32[8] all-reduce(p), channel_id=0, replica_groups={{0,1}}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(Find(*module, "ar")->attrs().channel_id.has_value());
  absl::StatusOr<std::unique_ptr<HloModule>> negative = ParseHloModule(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  ROOT ar = f32[8] all-reduce(p), channel_id=-2, replica_groups={{0}}, to_apply=add
})");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("channel_id must not be negative"), std::string::npos)
      << negative.status();
}

// Found by the text fuzzer in CI: an elided constant with no elements but
// huge leading dimensions printed 3.6e9 nested "{}" (out of memory). Past a
// few thousand it prints as "{...}", which parses back to the same literal.
TEST(TextParser, EmptyConstantsPrintInBoundedSpace) {
  auto module = ParseOk(R"(HloModule m
ENTRY e {
  small = f32[2,0] constant({ {}, {} })
  ROOT big = f32[60000,60000,0] constant({...})
})");
  ASSERT_NE(module, nullptr);
  const std::string text = PrintModule(*module);
  EXPECT_LT(text.size(), 1000u);
  EXPECT_NE(text.find("f32[2,0] constant({{}, {}})"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[60000,60000,0] constant({...})"), std::string::npos) << text;
  EXPECT_NE(ParseOk(text), nullptr) << text;
}

TEST(TextParser, ShardingForms) {
  auto module = ParseOk(Entry(R"(  a = f32[4] parameter(0), sharding={replicated}
  b = f32[4] parameter(1), sharding={maximal device=3}
  c = f32[4,4] parameter(2), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  d = f32[4,4] parameter(3), sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual} shard_as 7 metadata={op_name="x"}}
  e = f32[4] parameter(4), sharding={manual}
  ROOT t = (f32[4], f32[4]) tuple(a, b), sharding={{replicated}, {devices=[4]<=[4]}})"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Find(*module, "a")->sharding().type(), xla::OpSharding::REPLICATED);
  const xla::OpSharding& b = Find(*module, "b")->sharding();
  EXPECT_EQ(b.type(), xla::OpSharding::MAXIMAL);
  EXPECT_EQ(b.tile_assignment_devices(0), 3);
  const xla::OpSharding& c = Find(*module, "c")->sharding();
  EXPECT_EQ(c.type(), xla::OpSharding::OTHER);
  EXPECT_EQ(c.tile_assignment_devices_size(), 4);
  EXPECT_TRUE(c.replicate_on_last_tile_dim());
  const xla::OpSharding& d = Find(*module, "d")->sharding();
  EXPECT_EQ(d.iota_reshape_dims_size(), 2);
  EXPECT_EQ(d.iota_transpose_perm(0), 1);
  EXPECT_EQ(d.last_tile_dims(0), xla::OpSharding::MANUAL);
  EXPECT_TRUE(d.is_shard_group());
  EXPECT_EQ(d.shard_group_id(), 7);
  EXPECT_EQ(d.metadata(0).op_name(), "x");
  EXPECT_EQ(Find(*module, "e")->sharding().type(), xla::OpSharding::MANUAL);
  const xla::OpSharding& t = module->entry()->root()->sharding();
  EXPECT_EQ(t.type(), xla::OpSharding::TUPLE);
  ASSERT_EQ(t.tuple_shardings_size(), 2);
  EXPECT_EQ(t.tuple_shardings(1).iota_reshape_dims(0), 4);
}

TEST(TextParser, DomainMetadataAndFrontendAttributes) {
  auto module = ParseOk(R"(HloModule m
comp {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = f32[] parameter(0), metadata={op_type="Add" op_name="a/b" source_file="f.py" source_line=17 source_end_line=18 source_column=2 source_end_column=9 deduplicated_name="d" scheduling_name="s" profile_type={1}}
  d = f32[] domain(p), domain={kind="sharding", entry={maximal device=1}, exit={}}
  ROOT c = f32[] call(d), to_apply=comp, is_composite=true, frontend_attributes={composite.name="foo.bar", composite.attributes={n = 1 : i32, s = "}"}, composite.version="1"}
})");
  ASSERT_NE(module, nullptr);
  const xla::OpMetadata& m = Find(*module, "p")->metadata();
  EXPECT_EQ(m.op_type(), "Add");
  EXPECT_EQ(m.op_name(), "a/b");
  EXPECT_EQ(m.source_file(), "f.py");
  EXPECT_EQ(m.source_line(), 17);
  EXPECT_EQ(m.source_end_column(), 9);
  EXPECT_EQ(m.scheduling_name(), "s");
  const HloAttributes& d = Find(*module, "d")->attrs();
  EXPECT_EQ(d.domain_kind, "sharding");
  EXPECT_EQ(d.domain_entry_sharding->type(), xla::OpSharding::MAXIMAL);
  EXPECT_EQ(d.domain_exit_sharding->type(), xla::OpSharding::TUPLE);
  HloInstruction* c = Find(*module, "c");
  EXPECT_TRUE(c->is_composite());
  ASSERT_NE(c->FindFrontendAttribute("composite.attributes"), nullptr);
  EXPECT_EQ(*c->FindFrontendAttribute("composite.attributes"), R"({n = 1 : i32, s = "}"})");
  EXPECT_EQ(*c->FindFrontendAttribute("composite.name"), "foo.bar");
}

TEST(TextParser, ResultAccuracyControlPredecessorsAndCarriedFields) {
  auto module = ParseOk(Entry(R"(  p = f32[2] parameter(0), parameter_replication={true}
  a = f32[2] exponential(p), result_accuracy={mode=HIGHEST}
  b = f32[2] exponential(p), result_accuracy={tolerance={atol=0.5,rtol=0,ulps=10}}, control-predecessors={a}
  c = f32[2] negate(b), statistics={visualizing_index=1,stat-0=0.5,stat-1=25}, origin={{"orig" {1}}}
  ROOT t = (f32[2], f32[2]) tuple(a, c), origin={({"x"}, {})})"));
  ASSERT_NE(module, nullptr);
  const HloAttributes& a = Find(*module, "a")->attrs();
  ASSERT_TRUE(a.has_result_accuracy);
  EXPECT_EQ(a.result_accuracy->mode(), xla::ResultAccuracy::HIGHEST);
  HloInstruction* b = Find(*module, "b");
  EXPECT_EQ(b->attrs().result_accuracy->tolerance().ulps(), 10);
  EXPECT_DOUBLE_EQ(b->attrs().result_accuracy->tolerance().atol(), 0.5);
  ASSERT_EQ(b->control_predecessors().size(), 1u);
  EXPECT_EQ(b->control_predecessors()[0]->name(), "a");
  const auto* carried = Find(*module, "c")->carried_proto_fields();
  ASSERT_NE(carried, nullptr);
  EXPECT_EQ(carried->statistics_viz().stat_index_to_visualize(), 1);
  EXPECT_EQ(carried->statistics_viz().statistics(1).stat_val(), 25);
  EXPECT_EQ(carried->original_value().elements(0).original_array().instruction_name(), "orig");
  EXPECT_EQ(carried->original_value().elements(0).original_array().shape_index(0), 1);
  const auto* root = module->entry()->root()->carried_proto_fields();
  ASSERT_EQ(root->original_value().elements_size(), 1);
  EXPECT_EQ(root->original_value().elements(0).shape_index(0), 0);
  EXPECT_TRUE(Find(*module, "p")
                  ->carried_proto_fields()
                  ->parameter_replication()
                  .replicated_at_leaf_buffers(0));
}

TEST(TextParser, ConstantsOfEveryKind) {
  auto module = ParseOk(Entry(R"(  a = f32[] constant(-1.5e-3)
  b = f32[2,3] constant({ { 1, 2, 3 }, { 4, 5, 6 } })
  c = bf16[3] constant({inf, -inf, 0.1})
  d = f16[2] constant({nan, -nan})
  e = f8e4m3fn[2] constant({1.5, -2})
  f = pred[3] constant({true, false, 1})
  g = c64[2] constant({(1, -2), (0.5, inf)})
  h = s8[3] constant({-128, 127, 0x7f})
  i = u64[1] constant({18446744073709551615})
  j = (f32[2], s32[]) constant(({1, 2}, 3))
  k = f32[1000] constant({...})
  l = f32[] constant(nan(0x1234))
  m = s4[2] constant({-8, 7})
  n = f32[0,3] constant({})
  ROOT t = f32[] add(a, l))"));
  ASSERT_NE(module, nullptr);
  EXPECT_FLOAT_EQ(Find(*module, "a")->literal().GetAsDouble(0), -1.5e-3f);
  const Literal& b = Find(*module, "b")->literal();
  EXPECT_EQ(b.GetAsDouble(5), 6);
  EXPECT_EQ(b.GetAsDouble(3), 4);
  const Literal& c = Find(*module, "c")->literal();
  EXPECT_TRUE(std::isinf(c.GetAsDouble(1)) && c.GetAsDouble(1) < 0);
  EXPECT_NEAR(c.GetAsDouble(2), 0.1, 1e-3);
  EXPECT_TRUE(std::isnan(Find(*module, "d")->literal().GetAsDouble(1)));
  EXPECT_EQ(Find(*module, "e")->literal().GetAsDouble(1), -2);
  EXPECT_EQ(Find(*module, "f")->literal().GetAsInt64(2), 1);
  EXPECT_EQ(Find(*module, "g")->literal().GetAsComplex(0), std::complex<double>(1, -2));
  EXPECT_EQ(Find(*module, "h")->literal().GetAsInt64(0), -128);
  EXPECT_EQ(Find(*module, "h")->literal().GetAsInt64(2), 127);
  EXPECT_EQ(Find(*module, "i")->literal().GetAsUint64(0), 18446744073709551615ull);
  const Literal& j = Find(*module, "j")->literal();
  ASSERT_EQ(j.tuple_elements().size(), 2u);
  EXPECT_EQ(j.tuple_elements()[1].GetAsInt64(0), 3);
  const Literal& k = Find(*module, "k")->literal();
  EXPECT_EQ(k.element_count(), 1000);
  EXPECT_EQ(k.GetAsDouble(999), 0);
  float l = Find(*module, "l")->literal().data<float>()[0];
  uint32_t bits;
  std::memcpy(&bits, &l, sizeof(bits));
  EXPECT_EQ(bits & 0x7fffff, 0x1234u);
  EXPECT_EQ(Find(*module, "m")->literal().GetAsInt64(0), -8);
  EXPECT_EQ(Find(*module, "n")->literal().element_count(), 0);
}

TEST(TextParser, ShapesDynamicTokenTupleAndTiledLayouts) {
  auto module = ParseOk(Entry(R"(  a = f32[?,3] parameter(0)
  b = f32[<=10,2]{0,1:T(8,128)(2,1)E(16)S(1)} parameter(1)
  c = token[] parameter(2)
  d = (f32[], (s32[2]{0}, pred[])) parameter(3)
  e = f32[2,3]{1,0:T(2,*)} parameter(4)
  ROOT t = (token[]) tuple(c))"));
  ASSERT_NE(module, nullptr);
  const Shape& a = Find(*module, "a")->shape();
  EXPECT_TRUE(a.is_dynamic_dimension(0));
  EXPECT_EQ(a.dimensions(0), Shape::kUnboundedSize);
  const Shape& b = Find(*module, "b")->shape();
  EXPECT_TRUE(b.is_dynamic_dimension(0));
  EXPECT_EQ(b.dimensions(0), 10);
  ASSERT_TRUE(b.has_layout());
  ASSERT_EQ(b.layout().tiles.size(), 2u);
  EXPECT_EQ(b.layout().tiles[1].dimensions, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(b.layout().element_size_in_bits, 16);
  EXPECT_EQ(b.layout().memory_space, 1);
  EXPECT_TRUE(Find(*module, "c")->shape().IsToken());
  EXPECT_EQ(Find(*module, "d")->shape().ToString(), "(f32[], (s32[2]{0}, pred[]))");
  EXPECT_EQ(Find(*module, "e")->shape().layout().tiles[0].dimensions[1], Tile::kCombineDimension);
}

TEST(TextParser, NestedInstructionsAndOmittedShapes) {
  auto module = ParseOk(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = maximum(x, y)
}
ENTRY e {
  r = f32[8,7] reshape(f32[1,8,1,7] parameter(0))
  t = (f32[8,7], s32[]) tuple(r, s32[] constant(3))
  g = get-tuple-element(t), index=0
  c = compare(g, g), direction=EQ
  z = f32[] constant(0)
  ROOT red = reduce(g, z), dimensions={1}, to_apply=max
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Find(*module, "r")->operand(0)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(Find(*module, "g")->shape().ToString(), "f32[8,7]");
  EXPECT_EQ(Find(*module, "c")->shape().ToString(), "pred[8,7]");
  EXPECT_EQ(Find(*module, "red")->shape().ToString(), "f32[8]");
  EXPECT_EQ(Find(*module, "m")->shape().ToString(), "f32[]");
}

TEST(TextParser, AsyncOpsInheritTheirComputation) {
  auto module = ParseOk(R"(HloModule m
wrapped {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}, execution_thread="thread"
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped, async_execution_thread="thread"
  u = ((f32[4]), f32[4], s32[]) async-update(s)
  ROOT d = f32[4] async-done(u)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Find(*module, "s")->attrs().async_execution_thread, "thread");
  ASSERT_EQ(Find(*module, "d")->called_computations().size(), 1u);
  EXPECT_EQ(Find(*module, "d")->called_computations()[0]->name(), "wrapped");
}

TEST(TextParser, SplitModulesKeepFileLineNumbers) {
  const std::string text =
      "HloModule a\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"
      "  // -----  \n"
      "// just a comment piece\n// -----\n"
      "HloModule b\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n";
  ParseOptions options;
  options.filename = "split.hlo";
  auto modules = ParseHloModules(text, options);
  ASSERT_TRUE(modules.ok()) << modules.status();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[1]->name(), "b");
  auto bad = ParseHloModules(
      text + "// -----\nHloModule c\nENTRY e {\n  ROOT p = f32[] nope(0)\n}\n", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StartsWith(bad.status().message(), "split.hlo:15:18: unknown opcode 'nope'"))
      << bad.status();
}

TEST(TextParser, StandaloneShapeAndLiteral) {
  auto shape = ParseShape("(f32[2,3]{0,1}, s32[])");
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->ToString(), "(f32[2,3]{0,1}, s32[])");
  EXPECT_FALSE(ParseShape("f32[2] extra").ok());
  auto literal = ParseLiteral("{{1, 2}, {3, 4}}", Shape(xla::S32, {2, 2}));
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->GetAsInt64(3), 4);
}

// ---------------------------------------------------------------- errors

struct BadInput {
  const char* name;
  std::string text;
  const char* location;  // "LINE:COL"
  const char* message;   // substring of the message after the location
};

std::vector<BadInput> BadInputs() {
  const std::string p2 = "  p = f32[2] parameter(0)\n";
  return {
      {"empty", "", "1:1", "expected a computation, got end of input"},
      {"header_only", "HloModule m", "1:12", "expected a computation"},
      {"unterminated_string", Entry("  ROOT p = f32[] parameter(0), metadata={op_name=\"x}"),
       "4:50", "unterminated string"},
      {"unterminated_comment", Entry("  ROOT p = f32[] parameter(0) /* forever"), "4:31",
       "unterminated /* comment"},
      {"unknown_opcode", Entry("  ROOT p = f32[] frob(0)"), "4:18", "unknown opcode 'frob'"},
      {"unknown_element_type", Entry("  ROOT p = f33[] parameter(0)"), "4:12",
       "unknown element type 'f33'"},
      {"unknown_attribute", Entry(p2 + "  ROOT n = f32[2] negate(p), foo=1"), "5:30",
       "unknown attribute 'foo' for instruction %n"},
      {"attribute_for_other_opcode", Entry(p2 + "  ROOT n = f32[2] negate(p), index=1"), "5:30",
       "unexpected attribute 'index' for negate instruction %n"},
      {"duplicate_attribute",
       Entry(p2 + "  ROOT b = f32[2] broadcast(p), dimensions={0}, dimensions={0}"), "5:49",
       "attribute 'dimensions' appears twice"},
      {"missing_attribute",
       Entry("  p = (f32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p)"), "5:8",
       "missing attribute 'index' for get-tuple-element instruction %g"},
      {"undefined_operand", Entry(p2 + "  ROOT a = f32[2] add(p, q)"), "5:26",
       "instruction %q is not defined"},
      {"undefined_computation", Entry(p2 + "  ROOT c = f32[2] call(p), to_apply=nowhere"), "5:37",
       "computation %nowhere is not defined"},
      {"duplicate_instruction",
       Entry(p2 + "  p = f32[2] parameter(1)\n  ROOT a = f32[2] add(p, p)"), "5:3",
       "instruction %p is defined twice"},
      {"duplicate_computation",
       "HloModule m\nc {\n  ROOT a = f32[] parameter(0)\n}\nc {\n  ROOT a = f32[] "
       "parameter(0)\n}\n",
       "5:1", "computation %c is defined twice"},
      {"two_entries",
       "HloModule m\nENTRY a {\n  ROOT x = f32[] parameter(0)\n}\nENTRY b {\n  ROOT x = f32[] "
       "parameter(0)\n}\n",
       "5:1", "only one ENTRY"},
      {"two_roots", Entry("  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)"), "5:3",
       "more than one ROOT"},
      {"constant_too_few", Entry("  ROOT c = f32[3] constant({1, 2})"), "4:33",
       "dimension 0 of the constant has 2 elements, the shape says 3"},
      {"constant_too_many", Entry("  ROOT c = f32[2] constant({1, 2, 3})"), "4:35",
       "dimension 0 of the constant has more than 2 elements"},
      {"constant_flat_for_rank2", Entry("  ROOT c = f32[2,2] constant({1, 2, 3, 4})"), "4:31",
       "expected '{' in constant of shape f32[2,2]"},
      {"constant_missing_comma", Entry("  ROOT c = f32[2] constant({1 2})"), "4:31",
       "expected ',' or '}', got number 2"},
      {"int_out_of_range", Entry("  ROOT c = s8[1] constant({300})"), "4:28",
       "value 300 is out of range for s8"},
      {"f16_out_of_range", Entry("  ROOT c = f16[] constant(1e10)"), "4:27",
       "value 1e10 is out of range for f16"},
      {"huge_constant_text", Entry("  ROOT c = f32[100000000000] constant({1})"), "4:39",
       "needs 100000000000 elements"},
      {"huge_elided_constant", Entry("  ROOT c = f32[100000000000] constant({...})"), "4:39",
       "would take more than"},
      {"dimension_overflow", Entry("  ROOT p = f32[99999999999999999999] parameter(0)"), "4:16",
       "integer 99999999999999999999 does not fit in 64 bits"},
      {"element_count_overflow", Entry("  ROOT p = f32[4294967296,4294967296,4] parameter(0)"),
       "4:12", "more elements than fit in 64 bits"},
      {"layout_not_permutation", Entry("  ROOT p = f32[2,3]{0,0} parameter(0)"), "4:12",
       "not a permutation"},
      {"unsupported_layout_attribute", Entry("  ROOT p = f32[2,3]{1,0:D(D,C)} parameter(0)"),
       "4:25", "unsupported or repeated layout attribute 'D'"},
      {"deep_tuple_shape",
       Entry(absl::StrCat("  ROOT p = ", std::string(5000, '('), "f32[]", std::string(5000, ')'),
                          " parameter(0)")),
       "4:76", "nesting deeper than 64 levels"},
      {"deep_constant",
       Entry(absl::StrCat("  ROOT c = f32[1] constant(", std::string(5000, '{'), "1",
                          std::string(5000, '}'), ")")),
       "4:29", "nests '{' deeper than its rank 1"},
      {"nested_tuple_sharding",
       Entry("  ROOT p = (f32[], f32[]) parameter(0), sharding={{{replicated}}}"), "4:51",
       "tuple shardings do not nest"},
      {"sharding_device_count",
       Entry("  ROOT p = f32[4] parameter(0), sharding={devices=[2,2]0,1,2}"), "4:42",
       "tile dimensions hold 4 devices but 3 are listed"},
      {"negative_tile_dimension", Entry("  ROOT p = f32[4]{0:T(-24)} parameter(0)"), "4:23",
       "tile dimension -24 is not positive"},
      {"zero_tile_dimension", Entry("  ROOT p = f32[4]{0:T(8)(0)} parameter(0)"), "4:26",
       "tile dimension 0 is not positive"},
      {"negative_element_size", Entry("  ROOT p = f32[4]{0:E(-3)} parameter(0)"), "4:23",
       "negative element size E(-3)"},
      {"iota_group_count",
       Entry(p2 + "  ROOT a = f32[2] all-gather(p), replica_groups=[2,2]<=[3], dimensions={0}"),
       "5:59", "iota dimensions must hold as many devices"},
      {"mesh_unknown_axis",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=2] {'z'}, dimensions={0}"),
       "5:62", "'z' is not an axis of the mesh ('x')"},
      {"mesh_unquoted_axis",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh[x=2] {'x'}, dimensions={0}"),
       "5:54", "expected a quoted string, got"},
      {"mesh_axis_twice",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=2,'x'=1] {'x'}, dimensions={0}"),
       "5:60", "mesh axis 'x' is named twice"},
      {"mesh_axis_size",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=0] {'x'}, dimensions={0}"),
       "5:58", "a mesh axis size must be at least 1"},
      {"mesh_device_ids",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=2], device_ids=(0,0) {'x'}, dimensions={0}"),
       "5:49", "device_ids must be a permutation of 0..1"},
      {"mesh_iota_order_size",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=2], device_ids=([3]T(0)) {'x'}, dimensions={0}"),
       "5:49", "iota device order [3] does not hold the mesh's 2 devices"},
      {"mesh_group_axis_twice",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=2] {'x','x'}, dimensions={0}"),
       "5:66", "'x' and 'x' overlap"},
      {"mesh_bad_sub_axis",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=4] {'x':(3)2}, dimensions={0}"),
       "5:62", "sub-axis 'x':(3)2 does not split an axis of size 4"},
      {"mesh_overlapping_sub_axes",
       Entry(p2 + "  ROOT a = f32[4] all-gather(p), replica_groups=mesh['x'=8] {'x':(1)4,'x':(2)2}, dimensions={0}"),
       "5:71", "'x':(1)4 and 'x':(2)2 overlap"},
      {"truncated", Entry(p2 + "  ROOT a = f32[2] add(p,"), "6:1",
       "expected an operand name, got '}'"},
      {"truncated_file", "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)", "3:31",
       "expected an instruction or '}', got end of input"},
      {"bad_window_field",
       Entry(p2 + "  ROOT r = f32[2] reduce-window(p, p), window={size=2 shape=3}, to_apply=e"),
       "5:55", "unknown window field 'shape'"},
      {"bad_window_value",
       Entry(p2 + "  ROOT r = f32[2] reduce-window(p, p), window={size=2xq}, to_apply=e"), "5:53",
       "expected numbers separated by 'x', got '2xq'"},
      {"bad_dim_labels", Entry(p2 + "  ROOT c = f32[2] convolution(p, p), dim_labels=b0f_0io->zz"),
       "5:49", "in output part 'zz' of dim_labels 'b0f_0io->zz'"},
      {"bad_padding",
       Entry(p2 + "  z = f32[] constant(0)\n  ROOT d = f32[4] pad(p, z), padding=1_1_1_1"), "6:38",
       "expected padding like low_high or low_high_interior"},
      {"bad_escape", Entry("  ROOT p = f32[] parameter(0), metadata={op_name=\"a\\q\"}"), "4:50",
       "malformed escape sequence"},
      {"parameter_gap",
       "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(2)\n}\n",
       "2:7", "has parameter(2) but no parameter(1)"},
      {"parameter_duplicate", Entry("  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(0)"),
       "5:28", "parameter(0) appears twice"},
      {"parameter_number_too_large", Entry("  ROOT p = f32[] parameter(100000)"), "4:28",
       "parameter number 100000 is out of range"},
      {"wrong_arity", Entry(p2 + "  ROOT n = f32[2] negate(p, p)"), "5:25",
       "negate takes 1 operand, got 2"},
      {"declared_operand_shape", Entry(p2 + "  ROOT n = f32[2] negate(f32[3] p)"), "5:26",
       "operand %p of %n is written with shape f32[3] but has shape f32[2]"},
      {"unknown_module_attribute",
       "HloModule m, colour=red\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", "1:14",
       "unknown module attribute 'colour'"},
      {"cannot_infer", Entry(p2 + "  ROOT b = broadcast(p), dimensions={0}"), "5:8",
       "cannot infer the shape of broadcast instruction %b"},
      {"inline_computation",
       Entry(p2 + "  ROOT c = f32[2] call(p), to_apply={ ROOT x = f32[] parameter(0) }"), "5:37",
       "inline computations are not supported"},
      {"garbage_after_computation", Entry("  ROOT p = f32[] parameter(0)") + "junk", "6:1",
       "expected '{' to start the body of computation 'junk'"},
  };
}

TEST(TextParser, MalformedInputsGiveLocatedErrors) {
  const std::vector<BadInput> cases = BadInputs();
  EXPECT_GE(cases.size(), 30u);
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.name);
    auto module = Parse(c.text);
    ASSERT_FALSE(module.ok()) << "accepted";
    const std::string message(module.status().message());
    EXPECT_TRUE(absl::StartsWith(message, absl::StrCat("t.hlo:", c.location, ": "))) << message;
    EXPECT_TRUE(absl::StrContains(message, c.message)) << message;
  }
}

// Found while fuzzing: an elided constant of a huge shape is a few bytes of
// text; ParseOptions::max_constant_bytes refuses it before allocating.
TEST(TextParser, ElidedConstantAboveTheLimitIsAnError) {
  const char* text = R"(HloModule m
ENTRY e {
  ROOT c = f32[20000,20000] constant({...})
})";
  ParseOptions options;
  options.max_constant_bytes = 64 << 20;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, options);
  ASSERT_FALSE(module.ok());
  const std::string message(module.status().message());
  EXPECT_TRUE(absl::StartsWith(message, "<text>:3:")) << message;
  EXPECT_TRUE(absl::StrContains(message, "constant of shape f32[20000,20000] takes 1600000000 "
                                         "bytes, more than the limit of 67108864"))
      << message;
  options.max_constant_bytes = int64_t{2} << 30;
  EXPECT_TRUE(ParseHloModule(R"(HloModule m
ENTRY e {
  ROOT c = f32[2,3] constant({...})
})", options).ok());
}

TEST(TextParser, TruncationsOfAValidModuleNeverCrash) {
  const std::string text = R"(HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[2]{0} parameter(0), sharding={devices=[2]0,1}, metadata={op_name="p"}
  c = f32[2] constant({1.5, -inf})
  r = f32[] reduce(p, f32[] constant(0)), dimensions={0}, to_apply=add
  ROOT o = f32[2] add(p, c), frontend_attributes={a="b", c={d}}, backend_config={"x":1}
})";
  ASSERT_TRUE(Parse(text).ok());
  // Every prefix is either a module or a clean error.
  for (size_t n = 0; n < text.size(); ++n) {
    auto module = Parse(text.substr(0, n));
    if (!module.ok()) {
      EXPECT_TRUE(absl::StartsWith(module.status().message(), "t.hlo:")) << module.status();
    }
  }
}

// Random byte edits of a valid module: each result must be a module whose
// printout parses again, or an error with a location; never a crash (this
// test is most useful under --config=asan).
TEST(TextParser, RandomEditsNeverCrashAndAcceptedTextPrintsBack) {
  const std::string text =
      R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0}, s32[])->f32[2,3]{1,0}}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}, metadata={op_name="p" source_line=3}
  i = s32[] parameter(1)
  c = f32[2,3] constant({{1.5, -inf, 2}, {3, 4, nan}})
  b = f32[2,3,4] broadcast(c), dimensions={0,1}
  r = f32[2,3] reduce(b, f32[] constant(0)), dimensions={2}, to_apply=add
  sl = f32[1,3] dynamic-slice(r, i, i), dynamic_slice_sizes={1,3}
  t = (f32[2,3], s32[]) tuple(r, i), sharding={{replicated}, {maximal device=0}}
  g = f32[2,3] get-tuple-element(t), index=0, frontend_attributes={a="b", c={d {e}}}
  cv = f32[2,3] convolution(g, f32[3,3] broadcast(f32[] constant(2))), window={}, dim_labels=bf_io->bf
  pd = f32[4,5] pad(cv, f32[] constant(0)), padding=1_1x1_1
  ROOT o = f32[2,3] add(p, g), backend_config={"x":[1,2]}, control-predecessors={sl}
})";
  ASSERT_TRUE(Parse(text).ok()) << Parse(text).status();
  uint64_t state = 12345;
  auto next = [&state](uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  const std::string alphabet = "{}()[],=:%\"-01239.xe_/* \nfT<>?";
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(next(3));
    for (int e = 0; e < edits; ++e) {
      const size_t at = next(mutated.size());
      switch (next(3)) {
        case 0:
          mutated.erase(at, 1 + next(4));
          break;
        case 1:
          mutated.insert(at, 1, alphabet[next(alphabet.size())]);
          break;
        default:
          mutated[at] = alphabet[next(alphabet.size())];
      }
    }
    auto module = Parse(mutated);
    if (!module.ok()) {
      EXPECT_TRUE(absl::StartsWith(module.status().message(), "t.hlo:")) << module.status();
      continue;
    }
    ++accepted;
    const std::string printed = PrintModule(**module);
    auto again = ParseHloModule(printed);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << mutated << "\n" << printed;
    EXPECT_EQ(PrintModule(**again), printed);
  }
  std::printf("random edits: %d of 3000 edited modules still parse\n", accepted);
  EXPECT_GT(accepted, 0);
}

// Throughput itself is measured by //bench:hlo_io_benchmark (mobilenet_v2,
// -c opt). What a test can check on any machine is that parsing stays
// linear: a module eight times longer takes about eight times the CPU time.
// A quadratic step (a name lookup by scan, a re-copy per line) makes it 64x;
// the bound leaves room for noise but not for that.
std::string ChainModule(int length) {
  std::string text = "HloModule chain\nENTRY e {\n  v0 = f32[4,8]{1,0} parameter(0)\n";
  for (int i = 1; i <= length; ++i) {
    // Each value is read by the next only: a value with thousands of users
    // is another matter (users are kept in a list).
    absl::StrAppend(&text, "  v", i, " = f32[4,8]{1,0} add(f32[4,8]{1,0} v", i - 1,
                    ", f32[4,8]{1,0} v", i - 1, "), metadata={op_name=\"chain/add_", i, "\"}\n");
  }
  absl::StrAppend(&text, "  ROOT r = f32[4,8]{1,0} negate(v", length, ")\n}\n");
  return text;
}

// Best of `repeats` parses of `text`, in thread CPU time (other work on the
// machine does not count).
double BestParseSeconds(const std::string& text, int repeats) {
  auto cpu_seconds = [] {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
  };
  double best = 1e9;
  for (int i = 0; i < repeats; ++i) {
    const double start = cpu_seconds();
    auto module = ParseHloModule(text);
    const double seconds = cpu_seconds() - start;
    EXPECT_TRUE(module.ok()) << module.status();
    best = std::min(best, seconds);
  }
  return best;
}

TEST(TextParser, ParseTimeGrowsLinearlyWithModuleSize) {
  const std::string small = ChainModule(1000);
  const std::string large = ChainModule(8000);
  const double small_seconds = BestParseSeconds(small, 5);
  const double large_seconds = BestParseSeconds(large, 3);
  std::printf("parsed %zu bytes in %.2f ms, %zu bytes in %.2f ms of CPU time (ratio %.1f)\n",
              small.size(), small_seconds * 1e3, large.size(), large_seconds * 1e3,
              large_seconds / small_seconds);
  EXPECT_LT(large_seconds, 24 * small_seconds)
      << "8x the text took " << large_seconds / small_seconds << "x the time";
}

}  // namespace
}  // namespace hloc
