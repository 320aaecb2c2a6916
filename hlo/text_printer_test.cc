// Tests of the canonical HLO text printer: exact output for small modules,
// ordering rules, value formatting, options, modules built without the
// parser, and print(parse(print(m))) == print(m) on a module that uses every
// attribute the parser knows.
#include "hlo/text_printer.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

std::unique_ptr<HloModule> ParseOk(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(module).value() : nullptr;
}

// print(parse(text)), checked to be a fixed point of parse-then-print.
std::string Canonical(const std::string& text) {
  std::unique_ptr<HloModule> module = ParseOk(text);
  if (module == nullptr) return "";
  const std::string first = PrintModule(*module);
  auto again = ParseHloModule(first);
  EXPECT_TRUE(again.ok()) << again.status() << "\n" << first;
  if (again.ok()) {
    EXPECT_EQ(PrintModule(**again), first);
  }
  return first;
}

TEST(TextPrinter, SmallModuleExactly) {
  const std::string text = Canonical(R"(
HloModule add_one, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

ENTRY main {
  x = f32[2]{0} parameter(0), metadata={op_name="x"}
  one = f32[] constant(1)
  b = f32[2]{0} broadcast(one), dimensions={}
  ROOT y = f32[2]{0} add(x, b)
})");
  EXPECT_EQ(text, R"(HloModule add_one, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

ENTRY %main (x: f32[2]{0}) -> f32[2]{0} {
  %x = f32[2]{0} parameter(0), metadata={op_name="x"}
  %one = f32[] constant(1)
  %b = f32[2]{0} broadcast(f32[] %one), dimensions={}
  ROOT %y = f32[2]{0} add(f32[2]{0} %x, f32[2]{0} %b)
}
)");
}

TEST(TextPrinter, CalleesFirstEntryLastInstructionsInPostOrder) {
  const std::string text = Canonical(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=outer
}
outer {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=inner
}
inner {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
})");
  const size_t inner = text.find("%inner (");
  const size_t outer = text.find("%outer (");
  const size_t entry = text.find("ENTRY %e (");
  ASSERT_NE(inner, std::string::npos);
  EXPECT_LT(inner, outer);
  EXPECT_LT(outer, entry);
}

TEST(TextPrinter, FrontendAttributesSortedAndBlocksVerbatim) {
  const std::string text = Canonical(R"(HloModule m
ENTRY e {
  ROOT p = f32[] parameter(0), frontend_attributes={zeta="1", alpha={a = 1 : i32}, mid="{not balanced", "odd key"="x"}, backend_config="{\"k\": 1}"
})");
  EXPECT_TRUE(absl::StrContains(
      text,
      R"(frontend_attributes={alpha={a = 1 : i32}, mid="{not balanced", "odd key"="x", zeta="1"})"))
      << text;
  // A quoted value that is one balanced {...} block prints as the block.
  EXPECT_TRUE(absl::StrContains(text, R"(backend_config={"k": 1})")) << text;
}

TEST(TextPrinter, ConstantsArePrintedInFullWithShortestFloats) {
  std::string values;
  for (int i = 0; i < 1500; ++i) absl::StrAppend(&values, i ? ", " : "", i);
  const std::string text = Canonical(absl::StrCat(R"(HloModule m
ENTRY e {
  big = s32[1500] constant({)",
                                                  values, R"(})
  f = f32[5] constant({0.1, 1e30, -0, inf, -nan})
  h = bf16[2] constant({0.1, 3})
  c = c64[1] constant({(1.5, -2)})
  t = (f32[], pred[2]) constant((2.5, {true, false}))
  ROOT r = f32[5] negate(f)
})"));
  EXPECT_TRUE(absl::StrContains(text, absl::StrCat("constant({", values, "})")));
  EXPECT_TRUE(absl::StrContains(text, "f32[5] constant({0.1, 1e+30, -0, inf, -nan})")) << text;
  EXPECT_TRUE(absl::StrContains(text, "bf16[2] constant({0.100097656, 3})")) << text;
  EXPECT_TRUE(absl::StrContains(text, "c64[1] constant({(1.5, -2)})")) << text;
  EXPECT_TRUE(absl::StrContains(text, "constant((2.5, {true, false}))")) << text;
}

// A module that uses every attribute the parser knows.
const char kKitchenSink[] =
    R"(HloModule kitchen_sink, is_scheduled=true, entry_computation_layout={(f32[4,4]{1,0}, s32[])->f32[4,4]{1,0}}, input_output_alias={ {}: (0, {}, must-alias) }, buffer_donor={ (1, {}) }, alias_passthrough_params=true, replica_count=2, num_partitions=2, allow_spmd_sharding_propagation_to_parameters={true,false}, allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={k="v"}

FileNames
1 "f.py"

FunctionNames
1 "fn"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=4 column=5 end_column=6}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT, type=TOTALORDER
}

cond {
  x = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT c = pred[] compare(x, ten), direction=LT
}

body {
  x = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT s = s32[] add(x, one)
}

fused {
  x = f32[4,4] parameter(0)
  ROOT n = f32[4,4] negate(x)
}

async_body {
  x = f32[4,4] parameter(0)
  ROOT n = f32[4,4] negate(x)
}, execution_thread="t"

ENTRY main {
  a = f32[4,4]{1,0} parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}, parameter_replication={false}, metadata={op_type="T" op_name="a" source_file="f.py" source_line=3 stack_frame_id=1}
  i = s32[] parameter(1), sharding={maximal device=1}
  k = f32[3,3,4,4] constant({...})
  cv = f32[4,4] convolution(a, a), window={size=1x1 stride=1x1 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=bf_io->bf, feature_group_count=1, operand_precision={high,default}
  cv2 = f32[1,4,4,4] convolution(f32[1,4,4,4] reshape(a), k), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, batch_group_count=1
  d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}, algorithm=dot_f32_f32_f32
  idx = s32[4,1] iota(), iota_dimension=0
  g = f32[4,4] gather(a, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true
  sc = f32[4,4] scatter(a, idx, a), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add
  sl = f32[2,2] slice(a), slice={[0:4:2], [1:3]}
  ds = f32[1,4] dynamic-slice(a, i, i), dynamic_slice_sizes={1,4}
  z = f32[] constant(0)
  pd = f32[8,5] pad(a, z), padding=1_1_1x0_1
  r = f32[4] reduce(a, z), dimensions={1}, to_apply=add
  rw = f32[4,4] reduce-window(a, z), window={size=3x3 pad=1_1x1_1}, to_apply=add
  ss = f32[4,4] select-and-scatter(a, a, z), window={size=1x1}, select=lt, scatter=add
  so = f32[4,4] sort(a), dimensions={1}, is_stable=true, to_apply=lt
  w = s32[] while(i), condition=cond, body=body, backend_config={"known_trip_count":{"n":"10"}}
  pr = pred[] compare(i, i), direction=EQ
  cd = s32[] conditional(pr, i, i), true_computation=body, false_computation=body
  cb = s32[] conditional(i, i, i, i), branch_computations={body, body, body}
  fu = f32[4,4] fusion(a), kind=kLoop, calls=fused, output_to_operand_aliasing={{}: (0, {})}
  as = ((f32[4,4]), f32[4,4], s32[]) async-start(a), calls=async_body, async_execution_thread="t"
  ad = f32[4,4] async-done(as)
  cc = (f32[4,4], s32[4,4]) custom-call(a), custom_call_target="TopK", called_computations={lt}, custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, schedule=SCHEDULE_EARLIEST, operand_layout_constraints={f32[4,4]{0,1}}, literal=s32[2]{0} {1, 2}, output_to_operand_aliasing={{0}: (0, {})}, backend_config="text"
  ccv = f32[1,4,4,4] custom-call(cv2, k), custom_call_target="conv", window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2, padding_type=PADDING_SAME, opaque="o"
  rn = f32[4] rng(z, z), distribution=rng_uniform
  rb = (u64[2], u32[4]) rng-bit-generator(u64[2] constant({1, 2})), algorithm=rng_three_fry
  rs = u64[2] rng-get-and-update-state(), delta=4
  rp = f32[4,4] reduce-precision(a), exponent_bits=8, mantissa_bits=7
  ff = c64[4,4] fft(c64[4,4] convert(a)), fft_type=FFT, fft_length={4}
  ts = f32[4,4] triangular-solve(a, a), left_side=true, lower=true, transpose_a=ADJOINT
  ch = f32[4,4] cholesky(a), lower=true
  tk = (f32[4,2], s32[4,2]) topk(a), k=2, largest=true
  bn = (f32[4,4], f32[4], f32[4]) batch-norm-training(a, r, r), epsilon=0.0001, feature_index=1
  ar = f32[4,4] all-reduce(a), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ag = f32[8,4] all-gather(a), channel_id=2, replica_groups=[1,2]<=[2], dimensions={0}, constrain_layout=true
  rsc = f32[2,4] reduce-scatter(a), replica_groups={{0,1}}, dimensions={0}, to_apply=add
  a2a = f32[4,4] all-to-all(a), replica_groups=[1,2]<=[2,1]T(1,0), dimensions={0}
  cp = f32[4,4] collective-permute(a), channel_id=3, source_target_pairs={{0,1},{1,0}}
  tok = token[] after-all()
  snd = (f32[4,4], u32[], token[]) send(a, tok), channel_id=4, is_host_transfer=true, frontend_attributes={_xla_host_transfer_rendezvous="r"}
  sd = token[] send-done(snd), channel_id=4, is_host_transfer=true
  inf = ((f32[2]), token[]) infeed(tok), infeed_config="c"
  of = token[] outfeed(a, tok), outfeed_shape=f32[4,4]{1,0}, outfeed_config="o"
  dm = f32[4,4] domain(a), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  cs = (f32[4,4], f32[4,4], u32[]) copy-start(a), cross_program_prefetch_index=0
  cdn = f32[4,4] copy-done(cs)
  ex = f32[4,4] exponential(a), result_accuracy={tolerance={atol=0.5,rtol=0.25,ulps=2}}
  lg = f32[4,4] log(a), result_accuracy={mode=HIGHEST}
  st = f32[4,4] negate(a), statistics={visualizing_index=0,s=50}, origin={{"orig" {0}}}, control-predecessors={ex, lg}
  call = f32[4,4] call(a), to_apply=fused, is_composite=true, frontend_attributes={composite.attributes={n = 1 : i32},composite.name="foo",composite.version="1"}
  sd2 = f32[4,4] add(st, call), sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual} shard_like 3 metadata={op_name="m"}}
  ROOT out = f32[4,4] add(sd2, cdn), sharding={{replicated}}
})";

TEST(TextPrinter, EveryAttributeRoundTrips) {
  const std::string text = Canonical(kKitchenSink);
  ASSERT_FALSE(text.empty());
  for (const char* expected : {
           "HloModule kitchen_sink, is_scheduled=true, entry_computation_layout={(f32[4,4]{1,0}, "
           "s32[])->f32[4,4]{1,0}}, input_output_alias={ {}: (0, {}, must-alias) }, "
           "buffer_donor={ (1, {}) }, alias_passthrough_params=true, replica_count=2, "
           "num_partitions=2, allow_spmd_sharding_propagation_to_parameters={true,false}, "
           "allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={k=\"v\"}",
           "\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n",
           "}, execution_thread=\"t\"\n",
           "sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}, "
           "parameter_replication={false}, metadata={op_type=\"T\" op_name=\"a\" "
           "source_file=\"f.py\" source_line=3 stack_frame_id=1}",
           "window={size=1x1}, dim_labels=bf_io->bf, operand_precision={high,default}",
           "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f",
           "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
           "operand_precision={highest,highest}, algorithm=dot_f32_f32_f32",
           "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
           "slice_sizes={1,4}, indices_are_sorted=true",
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, "
           "to_apply=%add",
           "slice={[0:4:2], [1:3]}",
           "padding=1_1_1x0_1_0",
           "select=%lt, scatter=%add",
           "dimensions={1}, is_stable=true, to_apply=%lt",
           "condition=%cond, body=%body, backend_config={\"known_trip_count\":{\"n\":\"10\"}}",
           "true_computation=%body, false_computation=%body",
           "branch_computations={%body, %body, %body}",
           "kind=kLoop, output_to_operand_aliasing={{}: (0, {})}, calls=%fused",
           "async_execution_thread=\"t\", calls=%async_body",
           "async-done(((f32[4,4]), f32[4,4], s32[]) %as), calls=%async_body",
           "custom_call_target=\"TopK\", operand_layout_constraints={f32[4,4]{0,1}}, "
           "custom_call_has_side_effect=true, output_to_operand_aliasing={{0}: (0, {})}, "
           "literal=s32[2]{0} {1, 2}, schedule=SCHEDULE_EARLIEST, "
           "api_version=API_VERSION_TYPED_FFI, "
           "called_computations={%lt}, backend_config=\"text\"",
           "feature_group_count=2, padding_type=PADDING_SAME, opaque=\"o\"",
           "distribution=rng_uniform",
           "algorithm=rng_three_fry",
           "delta=4",
           "exponent_bits=8, mantissa_bits=7",
           "fft_type=FFT, fft_length={4}",
           "left_side=true, lower=true, transpose_a=ADJOINT",
           "k=2, largest=true",
           "epsilon=1e-04, feature_index=1",
           "channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add",
           "channel_id=2, replica_groups=[1,2]<=[2], constrain_layout=true, dimensions={0}",
           "replica_groups=[1,2]<=[2,1]T(1,0), dimensions={0}",
           "channel_id=3, source_target_pairs={{0,1},{1,0}}",
           "channel_id=4, is_host_transfer=true, "
           "frontend_attributes={_xla_host_transfer_rendezvous=\"r\"}",
           "infeed_config=\"c\"",
           "outfeed_shape=f32[4,4]{1,0}, outfeed_config=\"o\"",
           "domain={kind=\"sharding\", entry={maximal device=0}, exit={replicated}}",
           "cross_program_prefetch_index=0",
           "result_accuracy={tolerance={atol=0.5,rtol=0.25,ulps=2}}",
           "result_accuracy={mode=HIGHEST}",
           "control-predecessors={%ex, %lg}, origin={{\"orig\" {0}}}, "
           "statistics={visualizing_index=0,s=50}",
           "to_apply=%fused, is_composite=true, frontend_attributes={composite.attributes={n = 1 : "
           "i32}, composite.name=\"foo\", composite.version=\"1\"}",
           "sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual} shard_like 3 "
           "metadata={op_name=\"m\"}}",
           "sharding={{replicated}}",
           "%reshape.anon = f32[1,4,4,4] reshape(f32[4,4]{1,0} %a)",
       }) {
    EXPECT_TRUE(absl::StrContains(text, expected)) << "missing: " << expected << "\n" << text;
  }
}

TEST(TextPrinter, ModulesBuiltWithoutTheParser) {
  auto module = std::make_unique<HloModule>("built");
  auto computation = std::make_unique<HloComputation>("entry comp");
  HloInstruction* p = computation->AddInstruction(
      HloInstruction::CreateParameter(0, Shape(xla::F32, {3}), "in/put"));
  HloInstruction* c =
      computation->AddInstruction(HloInstruction::CreateConstant(Literal::Scalar(xla::F32, 2.5)));
  HloInstruction* b =
      computation->AddInstruction(HloInstruction::CreateBroadcast(Shape(xla::F32, {3}), c, {}));
  HloInstruction* m =
      computation->AddInstruction(HloInstruction::Create(HloOpcode::kMultiply, p->shape(), {p, b}));
  m->set_name("1st->product");
  computation->set_root(m);
  module->AddEntryComputation(std::move(computation));
  const std::string text = PrintModule(*module);
  EXPECT_TRUE(absl::StrContains(text, "ENTRY %entry_comp (in_put: f32[3]) -> f32[3] {")) << text;
  EXPECT_TRUE(absl::StrContains(
      text, "ROOT %1st__product = f32[3] multiply(f32[3] %in_put, f32[3] %broadcast)"))
      << text;
  auto again = ParseHloModule(text);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << text;
  EXPECT_EQ(PrintModule(**again), text);
}

TEST(TextPrinter, OptionsDropLayoutsMetadataAndOperandShapes) {
  std::unique_ptr<HloModule> module = ParseOk(R"(HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0), metadata={op_name="p"}
  ROOT n = f32[2,3]{0,1} negate(p)
})");
  ASSERT_NE(module, nullptr);
  PrintOptions options;
  options.print_layouts = false;
  options.print_metadata = false;
  options.print_operand_shapes = false;
  const std::string text = PrintModule(*module, options);
  EXPECT_TRUE(absl::StrContains(text, "%p = f32[2,3] parameter(0)\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "ROOT %n = f32[2,3] negate(%p)\n")) << text;
  EXPECT_TRUE(ParseHloModule(text).ok());
}

TEST(TextPrinter, PrintInstructionAndComputation) {
  std::unique_ptr<HloModule> module = ParseOk(R"(HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  ROOT t = s32[4] transpose(p), dimensions={0}, sharding={replicated}
})");
  ASSERT_NE(module, nullptr);
  // Each form against expected text, not against the function it calls.
  const std::string expected =
      "%t = s32[4] transpose(s32[4] %p), dimensions={0}, sharding={replicated}";
  EXPECT_EQ(PrintInstruction(*module->entry()->root()), expected);
  EXPECT_EQ(module->entry()->root()->ToString(), expected);
  EXPECT_EQ(module->entry()->parameter(0)->ToString(), "%p = s32[4] parameter(0)");
  EXPECT_EQ(PrintComputation(*module->entry()),
            "ENTRY %e (p: s32[4]) -> s32[4] {\n  %p = s32[4] parameter(0)\n"
            "  ROOT %t = s32[4] transpose(s32[4] %p), dimensions={0}, sharding={replicated}\n}\n");
}

TEST(TextPrinter, HeaderlessModuleGetsANameThatParses) {
  const std::string text = Canonical("c {\n  ROOT p = f32[] parameter(0)\n}\n");
  EXPECT_TRUE(absl::StartsWith(text, "HloModule module_c\n")) << text;
}

}  // namespace
}  // namespace hloc
