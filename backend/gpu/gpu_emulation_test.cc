// GPU kernels checked against the interpreter with no GPU, in the host
// emulator (gpu_emulator.h): the loop, reduction and transpose emitters on
// small hand-written computations, every sort, topk and scatter kernel of
// the corpus (and its reductions that split), every zoo kernel small
// enough, and the generated alternatives of library calls. The results must
// match the interpreter on random arguments within the default tolerances.
// The less regular ops' own cases are in gpu_emulation_ops_test.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_emulator.h"
#include "backend/gpu/gpu_library_calls.h"
#include "backend/gpu/gpu_test_modules.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/kernel_codegen.h"
#include "backend/gpu/kernel_sites.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/verifier.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace gpu {
namespace {

namespace mods = test_modules;

std::string EmitterKernels() {
  return mods::Library({
      mods::Binary("add", "add", "f32"),
      mods::Binary("max", "maximum", "f32"),
      mods::ArgmaxReducer("argmax_reducer"),
      R"(elementwise {
  x = f32[64,256] parameter(0)
  y = f32[256] parameter(1)
  b = f32[64,256] broadcast(y), dimensions={1}
  e = f32[64,256] exponential(x)
  ROOT r = f32[64,256] add(e, b)
}
odd {
  x = f32[7,3] parameter(0)
  ROOT n = f32[7,3] negate(x)
}
half {
  x = f16[16,128] parameter(0)
  y = f16[16,128] parameter(1)
  ROOT m = f16[16,128] multiply(x, y)
}
transpose {
  x = f32[40,70] parameter(0)
  t = f32[70,40] transpose(x), dimensions={1,0}
  y = f32[70,40] parameter(1)
  ROOT a = f32[70,40] add(t, y)
}
transpose3 {
  x = f16[3,20,50] parameter(0)
  ROOT t = f16[3,50,20] transpose(x), dimensions={0,2,1}
}
layout_bitcast {
  x = f32[2,30,30,4]{3,2,1,0} parameter(0)
  b = f32[30,30,2,4]{3,1,0,2} bitcast(x)
  n = f32[30,30,2,4]{3,1,0,2} negate(b)
  ROOT c = f32[30,30,2,4]{3,2,1,0} copy(n)
}
)",
      mods::Reduce("long_rows", "f32[4,3000]", "f32[4]", "1", "1", "add"),
      mods::Reduce("short_rows", "f32[37,100]", "f32[37]", "1", "-inf", "max"),
      mods::Reduce("tiny_rows", "f32[9,5]", "f32[9]", "1", "0", "add"),
      mods::Reduce("columns", "f32[300,70]", "f32[70]", "0", "0", "add"),
      mods::Reduce("middle", "f32[6,50,40]", "f32[6,40]", "1", "0", "add"),
      mods::MultiOutputRows("multi_output", 33, 300),
      mods::ArgmaxRows("argmax", {5, 1000}, "argmax_reducer"),
      mods::TwoShapes("two_shapes", 8, 100),
  });
}

TEST(GpuEmulation, EmitterKernelsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(EmitterKernels());
  ASSERT_NE(module, nullptr);
  for (const char* name :
       {"elementwise", "odd", "half", "long_rows", "short_rows", "tiny_rows", "columns", "middle",
        "multi_output", "argmax", "transpose", "transpose3", "layout_bitcast", "two_shapes"}) {
    const HloComputation* computation = module->FindComputation(name);
    ASSERT_NE(computation, nullptr) << name;
    bool ran = false;
    EXPECT_EQ(CheckKernel(emulator, *computation, 7, &ran), "") << name;
    EXPECT_TRUE(ran) << name;
  }
}

// Whether `computation` reduces an operand of 2^16 elements or more (a
// candidate for a split reduction).
bool HasLongReduction(const HloComputation& computation) {
  for (const HloInstruction* hlo : computation.instructions()) {
    if (hlo->opcode() == HloOpcode::kReduce && hlo->operand(0)->shape().IsArray() &&
        hlo->operand(0)->shape().element_count() >= (1 << 16)) {
      return true;
    }
  }
  return false;
}

// The kernel of a corpus site with a long reduction, compiled for a device
// of 4 SMs (few chunks), emulated when it splits and is small enough.
void CheckCorpusSplitReduction(Emulator& emulator, const std::string& id, const KernelSite& site,
                               int* checked) {
  GpuTarget target;
  target.sm_count = 4;
  absl::StatusOr<GpuKernel> probe = CompileUnassembled(*site.computation, target);
  if (!probe.ok() || probe->second_name.empty() ||
      probe->launch.total_threads() + probe->second_launch.total_threads() > (1 << 17)) {
    return;
  }
  bool ran = false;
  EXPECT_EQ(CheckKernel(emulator, *site.computation, 5, &ran, target), "")
      << id << " %" << site.instruction->name();
  if (ran) ++*checked;
}

// Every sort, topk and scatter of the corpus (after the default pipeline)
// small enough to emulate, and the reductions that split.
TEST(GpuEmulation, CorpusSortScatterKernelsMatchTheInterpreter) {
  const std::string root = testdata::CorpusDir();
  if (root.empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set";
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  int checked = 0, skipped = 0, modules_with_ops = 0, split_checked = 0;
  std::vector<testdata::CorpusModule> pieces;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(root)) {
    if (!testdata::ParseCorpusFile(file, &pieces)) continue;
    for (testdata::CorpusModule& piece : pieces) {
      if (!piece.module.ok()) continue;
      std::unique_ptr<HloModule> module = *std::move(piece.module);
      if (!VerifyModule(*module).ok()) continue;
      absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
          MakeStandardPipeline("default", PipelineOptions(), nullptr);
      if (!pipeline.ok() || !(*pipeline)->Run(*module).ok()) continue;
      bool any = false;
      for (const KernelSite& site : CollectKernelSites(*module).kernels) {
        const HloOpcode op = site.instruction->opcode();
        if (HasLongReduction(*site.computation)) {
          CheckCorpusSplitReduction(emulator, piece.id, site, &split_checked);
          continue;
        }
        if (op != HloOpcode::kSort && op != HloOpcode::kScatter && op != HloOpcode::kTopK &&
            op != HloOpcode::kCustomCall) {
          continue;
        }
        any = true;
        absl::StatusOr<GpuKernel> probe = CompileUnassembled(*site.computation);
        if (!probe.ok() || probe->launch.total_threads() > (1 << 17)) {
          std::cout << "  skipped " << piece.id << " %" << site.instruction->name() << ": "
                    << (probe.ok() ? "too many threads" : probe.status().ToString()) << "\n";
          ++skipped;
          continue;
        }
        bool ran = false;
        EXPECT_EQ(CheckKernel(emulator, *site.computation, 5, &ran), "")
            << piece.id << " %" << site.instruction->name();
        if (!ran) {
          std::cout << "  skipped " << piece.id << " %" << site.instruction->name()
                    << ": the interpreter or the argument generator cannot run it\n";
        }
        ++(ran ? checked : skipped);
      }
      if (any) ++modules_with_ops;
    }
  }
  std::cout << "corpus sort/topk/scatter kernels emulated: " << checked << " in "
            << modules_with_ops << " modules (" << skipped
            << " skipped: no kernel, too many threads, or not runnable)\n";
  std::cout << "corpus split reductions emulated (4 SMs): " << split_checked << "\n";
  EXPECT_GT(checked, 0);
}

// Every kernel of every zoo model (after the default pipeline) small enough
// to emulate quickly.
TEST(GpuEmulation, ZooKernelsMatchTheInterpreter) {
  if (std::getenv("TEST_SRCDIR") == nullptr) GTEST_SKIP() << "no runfiles";
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  int checked = 0, skipped = 0;
  for (const char* model :
       {"attention", "bf16_mlp", "conv2d", "conv_bn_relu", "cumsum_scan", "depthwise_conv",
        "dynamic_slice", "embedding_scatter", "layer_norm", "mlp_gelu", "reductions",
        "resnet_block", "softmax", "topk_sort", "transformer_block", "while_loop"}) {
    const std::string text = ZooModelText(model);
    if (text.empty()) continue;
    std::unique_ptr<HloModule> module = ParseAndRunPipeline(text, "default");
    ASSERT_NE(module, nullptr) << model;
    KernelSites sites = CollectKernelSites(*module);
    for (const KernelSite& site : sites.kernels) {
      absl::StatusOr<GpuKernel> probe = CompileUnassembled(*site.computation);
      if (!probe.ok() || probe->launch.total_threads() > 65536) {
        ++skipped;
        continue;
      }
      bool ran = false;
      EXPECT_EQ(CheckKernel(emulator, *site.computation, 11, &ran), "")
          << model << " %" << site.instruction->name();
      ++(ran ? checked : skipped);
    }
  }
  std::cout << "zoo kernels emulated: " << checked << " (" << skipped
            << " skipped: too many threads, no kernel, or not runnable)\n";
  EXPECT_GT(checked, 20);
}

// The generated alternative of library calls (gpu_compiler.h: the callee as
// one kernel, timed against cuBLASLt / cuDNN at load) matches the
// interpreter on its own.
TEST(GpuEmulation, GeneratedAlternativesOfLibraryCallsMatchTheInterpreter) {
  const std::string modules[] = {
      mods::GemmBiasReluModule("gemm_bias_relu", 8, 8, 8),
      R"(HloModule batched_gemm_rhs_transposed
ENTRY main {
  x = f32[2,8,16] parameter(0)
  w = f32[2,12,16] parameter(1)
  ROOT d = f32[2,8,12] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
})",
      mods::ConvNhwcBiasReluModule("conv_nhwc_bias_relu", 2, 6, 3, 8),
      R"(HloModule conv_nchw_strided
ENTRY main {
  x = f32[1,4,9,9] parameter(0)
  k = f32[8,4,3,3] parameter(1)
  ROOT conv = f32[1,8,5,5] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
  };
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  for (const std::string& text : modules) {
    std::unique_ptr<HloModule> module = ParseAndRunPipeline(text, "outline");
    ASSERT_NE(module, nullptr);
    absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, PlanOptions());
    ASSERT_TRUE(program.ok()) << module->name() << ": " << program.status();
    const GpuCompileReport& report = (*program)->report();
    int checked = 0;
    for (const HloComputation* computation : module->computations()) {
      for (const HloInstruction* call : computation->MakeInstructionPostOrder()) {
        if (call->opcode() != HloOpcode::kCall || !GpuLibraryFamily(*call).has_value()) continue;
        bool listed = false;
        for (const std::string& line : report.alternatives) {
          listed |= absl::StartsWith(line, absl::StrCat("%", call->name(), " "));
        }
        EXPECT_TRUE(listed) << module->name() << " %" << call->name() << "\n"
                            << (*program)->PlanToString();
        bool ran = false;
        EXPECT_EQ(CheckKernel(emulator, *call->to_apply(), 5, &ran), "")
            << module->name() << " %" << call->name();
        EXPECT_TRUE(ran) << module->name() << " %" << call->name();
        ++checked;
      }
    }
    EXPECT_EQ(checked, 1) << module->name() << "\n" << (*program)->PlanToString();
  }
}

}  // namespace
}  // namespace gpu
}  // namespace hloc

