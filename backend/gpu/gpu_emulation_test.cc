// GPU kernels checked against the interpreter with no GPU: the kernel's LLVM
// IR (as emitted, before libdevice and the NVPTX backend) is retargeted to
// the host and JIT-compiled, PTX special registers, bar.sync and
// shfl.sync.down become calls into a small emulator that runs every thread
// of a block as an OS thread (blocks one after another, so one copy of the
// shared-memory arrays suffices), and libdevice calls go to libm. The
// results must match the interpreter on random arguments within the default
// tolerances. This checks the emitters' index math, launch dimensions,
// shuffles and shared-memory tiling; the NVPTX backend itself and ptxas are
// covered by the other tests.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_pipeline.h"
#include "backend/gpu/gpu_compiler.h"
#include "backend/gpu/gpu_library_calls.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/kernel_codegen.h"
#include "backend/gpu/kernel_sites.h"
#include "backend/gpu/row_normalization_fusion.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace gpu {
namespace {

// ---- The emulator.

class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  // False when the other threads never came (a kernel bug: divergent
  // barrier); the caller then records the failure and carries on.
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return true;
    }
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int count_;
  int waiting_ = 0;
  int64_t generation_ = 0;
};

struct Warp {
  Warp() : barrier(32) {}
  int32_t slots[32] = {};
  Barrier barrier;
};

struct Block {
  explicit Block(int threads) : barrier(threads), warps((threads + 31) / 32) {}
  int block_x = 1, block_y = 1, grid_x = 1, block_id = 0;
  Barrier barrier;
  std::vector<Warp> warps;
  std::atomic<bool> failed{false};
};

thread_local Block* t_block = nullptr;
thread_local int t_tid_x = 0, t_tid_y = 0;

int LinearThread() { return t_tid_y * t_block->block_x + t_tid_x; }

extern "C" int32_t emu_tid_x() { return t_tid_x; }
extern "C" int32_t emu_tid_y() { return t_tid_y; }
extern "C" int32_t emu_tid_z() { return 0; }
extern "C" int32_t emu_ctaid_x() { return t_block->block_id; }
extern "C" int32_t emu_ctaid_y() { return 0; }
extern "C" int32_t emu_ctaid_z() { return 0; }
extern "C" int32_t emu_ntid_x() { return t_block->block_x; }
extern "C" int32_t emu_nctaid_x() { return t_block->grid_x; }
extern "C" void emu_barrier() {
  if (!t_block->barrier.Wait()) t_block->failed = true;
}
extern "C" int32_t emu_shfl_down(int32_t, int32_t value, int32_t offset, int32_t) {
  const int thread = LinearThread();
  Warp& warp = t_block->warps[thread / 32];
  const int lane = thread % 32;
  warp.slots[lane] = value;
  if (!warp.barrier.Wait()) t_block->failed = true;
  const int32_t result = lane + offset < 32 ? warp.slots[lane + offset] : value;
  if (!warp.barrier.Wait()) t_block->failed = true;
  return result;
}

using Entry = void (*)(void* const*);

// Runs `entry` with the kernel's launch dimensions: a thread per GPU thread
// of a block, blocks one after another. False on a barrier deadlock.
bool Launch(Entry entry, const LaunchDims& launch, const std::vector<void*>& buffers) {
  const int bx = static_cast<int>(launch.block[0]), by = static_cast<int>(launch.block[1]);
  const int threads = bx * by;
  for (int64_t b = 0; b < launch.grid[0]; ++b) {
    Block block(threads);
    block.block_x = bx;
    block.block_y = by;
    block.grid_x = static_cast<int>(launch.grid[0]);
    block.block_id = static_cast<int>(b);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        t_block = &block;
        t_tid_x = t % bx;
        t_tid_y = t / bx;
        entry(buffers.data());
      });
    }
    for (std::thread& worker : workers) worker.join();
    if (block.failed) return false;
  }
  return true;
}

// ---- Retargeting the kernel's IR to the host.

std::string EmulatorName(absl::string_view intrinsic) {
  if (absl::StartsWith(intrinsic, "llvm.nvvm.read.ptx.sreg.")) {
    std::string name = absl::StrCat("emu_", intrinsic.substr(24));
    std::replace(name.begin(), name.end(), '.', '_');
    return name;
  }
  if (intrinsic == "llvm.nvvm.barrier0") return "emu_barrier";
  if (intrinsic == "llvm.nvvm.shfl.sync.down.i32") return "emu_shfl_down";
  return "";
}

class Emulator {
 public:
  Emulator() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit) {
      error_ = llvm::toString(jit.takeError());
      return;
    }
    jit_ = std::move(*jit);
    llvm::orc::SymbolMap symbols;
    auto add = [&](const char* name, auto* address) {
      symbols[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                              llvm::JITSymbolFlags::Exported};
    };
    add("emu_tid_x", &emu_tid_x);
    add("emu_tid_y", &emu_tid_y);
    add("emu_tid_z", &emu_tid_z);
    add("emu_ctaid_x", &emu_ctaid_x);
    add("emu_ctaid_y", &emu_ctaid_y);
    add("emu_ctaid_z", &emu_ctaid_z);
    add("emu_ntid_x", &emu_ntid_x);
    add("emu_nctaid_x", &emu_nctaid_x);
    add("emu_barrier", &emu_barrier);
    add("emu_shfl_down", &emu_shfl_down);
    using F1 = float (*)(float);
    using D1 = double (*)(double);
    using F2 = float (*)(float, float);
    using D2 = double (*)(double, double);
    add("__nv_expf", static_cast<F1>(&::expf));
    add("__nv_exp", static_cast<D1>(&::exp));
    add("__nv_expm1f", static_cast<F1>(&::expm1f));
    add("__nv_expm1", static_cast<D1>(&::expm1));
    add("__nv_logf", static_cast<F1>(&::logf));
    add("__nv_log", static_cast<D1>(&::log));
    add("__nv_log1pf", static_cast<F1>(&::log1pf));
    add("__nv_log1p", static_cast<D1>(&::log1p));
    add("__nv_sinf", static_cast<F1>(&::sinf));
    add("__nv_sin", static_cast<D1>(&::sin));
    add("__nv_cosf", static_cast<F1>(&::cosf));
    add("__nv_cos", static_cast<D1>(&::cos));
    add("__nv_tanf", static_cast<F1>(&::tanf));
    add("__nv_tan", static_cast<D1>(&::tan));
    add("__nv_tanhf", static_cast<F1>(&::tanhf));
    add("__nv_tanh", static_cast<D1>(&::tanh));
    add("__nv_erff", static_cast<F1>(&::erff));
    add("__nv_erf", static_cast<D1>(&::erf));
    add("__nv_cbrtf", static_cast<F1>(&::cbrtf));
    add("__nv_cbrt", static_cast<D1>(&::cbrt));
    add("__nv_powf", static_cast<F2>(&::powf));
    add("__nv_pow", static_cast<D2>(&::pow));
    add("__nv_atan2f", static_cast<F2>(&::atan2f));
    add("__nv_atan2", static_cast<D2>(&::atan2));
    llvm::Error defined = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(symbols));
    if (defined) error_ = llvm::toString(std::move(defined));
  }

  const std::string& error() const { return error_; }

  // The host entry `void entry(void* const* buffers)` for a kernel's IR
  // (`second`: its second entry, GpuKernel::second_name). Identical
  // computations share a kernel name: loaded once.
  absl::StatusOr<Entry> Load(const GpuKernel& kernel, bool second = false) {
    const std::string& name = second ? kernel.second_name : kernel.name;
    auto loaded = loaded_.find(name);
    if (loaded != loaded_.end()) return loaded->second;
    absl::Status compiled = Compile(kernel);
    if (!compiled.ok()) return compiled;
    loaded = loaded_.find(name);
    if (loaded == loaded_.end()) return absl::InternalError("kernel entry missing");
    return loaded->second;
  }

 private:
  absl::Status Compile(const GpuKernel& kernel) {
    auto context = std::make_unique<llvm::LLVMContext>();
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(kernel.unoptimized_ir, diagnostic, *context);
    if (module == nullptr) return absl::InternalError(diagnostic.getMessage().str());
    for (llvm::Function& f : llvm::make_early_inc_range(*module)) {
      const std::string name = EmulatorName(f.getName().str());
      if (name.empty()) continue;
      llvm::FunctionCallee replacement = module->getOrInsertFunction(name, f.getFunctionType());
      f.replaceAllUsesWith(replacement.getCallee());
      f.eraseFromParent();
    }
    if (llvm::NamedMDNode* annotations = module->getNamedMetadata("nvvm.annotations")) {
      module->eraseNamedMetadata(annotations);
    }
    module->setTargetTriple(jit_->getTargetTriple().str());
    module->setDataLayout(jit_->getDataLayout());
    std::vector<std::string> names = {kernel.name};
    if (!kernel.second_name.empty()) names.push_back(kernel.second_name);
    for (const std::string& name : names) {
      llvm::Function* gpu_entry = module->getFunction(name);
      if (gpu_entry == nullptr) return absl::InternalError("kernel function missing");
      // The wrapper reads each buffer pointer straight as a global pointer.
      llvm::Function* wrapper = llvm::Function::Create(
          llvm::FunctionType::get(llvm::Type::getVoidTy(*context),
                                  {llvm::PointerType::getUnqual(*context)}, false),
          llvm::GlobalValue::ExternalLinkage, absl::StrCat("emu_", name), module.get());
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(*context, "entry", wrapper));
      std::vector<llvm::Value*> args;
      for (llvm::Argument& arg : gpu_entry->args()) {
        llvm::Value* slot = b.CreateConstInBoundsGEP1_64(llvm::PointerType::getUnqual(*context),
                                                         wrapper->getArg(0), arg.getArgNo());
        args.push_back(b.CreateLoad(arg.getType(), slot));
      }
      b.CreateCall(gpu_entry, args);
      b.CreateRetVoid();
    }
    llvm::Error added =
        jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)));
    if (added) return absl::InternalError(llvm::toString(std::move(added)));
    for (const std::string& name : names) {
      auto address = jit_->lookup(absl::StrCat("emu_", name));
      if (!address) return absl::InternalError(llvm::toString(address.takeError()));
      loaded_[name] = address->toPtr<Entry>();
    }
    return absl::OkStatus();
  }

  std::map<std::string, Entry> loaded_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::string error_;
};

void CollectLeaves(Literal* literal, std::vector<Literal*>* out) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_tuple_elements()) CollectLeaves(&element, out);
  } else if (literal->shape().IsArray()) {
    out->push_back(literal);
  }
}

// Runs `computation`'s kernel in the emulator and in the interpreter on the
// same random arguments; a failure message, or "" when they agree. `ran`
// says whether the comparison happened (not for computations with no
// kernel, or that the interpreter or the argument generator cannot handle).
std::string CheckKernel(Emulator& emulator, const HloComputation& computation, uint64_t seed,
                        bool* ran, const GpuTarget& target = GpuTarget()) {
  *ran = false;
  GpuCompileOptions options;
  options.target = target;
  options.assemble = false;
  options.keep_unoptimized_ir = true;
  absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(computation, options);
  if (!kernel.ok()) {
    return kernel.status().code() == absl::StatusCode::kUnimplemented
               ? ""
               : std::string(kernel.status().message());
  }
  std::vector<Literal> arguments;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    absl::StatusOr<Literal> argument =
        MakeRandomLiteral(computation.parameter(i)->shape(), seed + i, /*index_bound=*/4);
    if (!argument.ok()) return "";  // A type the generator lacks.
    arguments.push_back(*std::move(argument));
  }
  std::vector<const Literal*> argument_pointers;
  for (const Literal& argument : arguments) argument_pointers.push_back(&argument);
  EvaluatorOptions evaluator_options;
  absl::StatusOr<Literal> expected =
      EvaluateComputation(computation, argument_pointers, evaluator_options);
  if (!expected.ok()) return "";  // Not runnable in the interpreter.
  absl::StatusOr<Entry> entry = emulator.Load(*kernel);
  if (!entry.ok()) return absl::StrCat("JIT: ", entry.status().message());
  Literal actual(computation.root()->shape());
  std::vector<void*> buffers;
  for (Literal& argument : arguments) {
    std::vector<Literal*> leaves;
    CollectLeaves(&argument, &leaves);
    for (Literal* leaf : leaves) buffers.push_back(leaf->mutable_raw());
  }
  std::vector<Literal*> result_leaves;
  CollectLeaves(&actual, &result_leaves);
  const size_t first_output = buffers.size();
  for (Literal* leaf : result_leaves) buffers.push_back(leaf->mutable_raw());
  // What the launcher does around the kernel: copies into outputs updated in
  // place (scatter), and the scratch buffer (long sorts).
  for (const auto& [input, output] : kernel->copy_before) {
    if (input < 0 || output < static_cast<int64_t>(first_output) ||
        output >= static_cast<int64_t>(buffers.size())) {
      return "copy_before out of range";
    }
    const Literal* out_leaf = result_leaves[output - first_output];
    std::memcpy(buffers[output], buffers[input], out_leaf->size_bytes());
  }
  std::vector<uint64_t> scratch;
  if (kernel->scratch_bytes > 0) {
    scratch.resize(static_cast<size_t>(kernel->scratch_bytes + 7) / 8, 0x5a5a5a5a5a5a5a5aull);
    buffers.push_back(scratch.data());
  }
  if (static_cast<int64_t>(buffers.size()) != kernel->num_buffers) return "buffer count";
  if (!kernel->empty() && !Launch(*entry, kernel->launch, buffers)) {
    return "barrier deadlock";
  }
  // Split reductions: the combine kernel, over the same buffers.
  if (!kernel->empty() && !kernel->second_name.empty()) {
    absl::StatusOr<Entry> second = emulator.Load(*kernel, /*second=*/true);
    if (!second.ok()) return absl::StrCat("JIT: ", second.status().message());
    if (!Launch(*second, kernel->second_launch, buffers)) return "barrier deadlock (combine)";
  }
  *ran = true;
  // Dot and convolution sum many products in f32 in the emitter's order,
  // the interpreter in its own (blocked) order: cancellation can leave a
  // few ulps of the terms' magnitude, so they get an absolute tolerance.
  Tolerance tolerance;
  for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
    if (hlo->opcode() == HloOpcode::kDot || hlo->opcode() == HloOpcode::kConvolution) {
      tolerance.rtol = 1e-5;
      tolerance.atol = 1e-5;
    }
  }
  // Atomic scatters combine duplicate indices in whatever order the threads
  // arrive, the interpreter in update order: sums round differently (an
  // ulp or two per duplicate; f16/bf16 ulps are coarse).
  if (kernel->strategy == "scatter-atomic") {
    const PrimitiveType type = computation.root()->shape().IsArray()
                                   ? computation.root()->shape().element_type()
                                   : xla::F32;
    const bool coarse = type == xla::F16 || type == xla::BF16;
    tolerance.rtol = coarse ? 1e-2 : 1e-4;
    tolerance.atol = coarse ? 1e-2 : 1e-5;
  }
  ComparisonReport report = CompareLiterals(*expected, actual, tolerance);
  return report.ok ? "" : absl::StrCat(kernel->strategy, ": ", report.ToString());
}

constexpr char kKernels[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
argmax_reducer {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
elementwise {
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
long_rows {
  x = f32[4,3000] parameter(0)
  one = f32[] constant(1)
  ROOT s = f32[4] reduce(x, one), dimensions={1}, to_apply=add
}
short_rows {
  x = f32[37,100] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT m = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max
}
tiny_rows {
  x = f32[9,5] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[9] reduce(x, zero), dimensions={1}, to_apply=add
}
columns {
  x = f32[300,70] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[70] reduce(x, zero), dimensions={0}, to_apply=add
}
middle {
  x = f32[6,50,40] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[6,40] reduce(x, zero), dimensions={1}, to_apply=add
}
multi_output {
  x = f32[33,300] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[33] reduce(x, zero), dimensions={1}, to_apply=add
  m = f32[33] reduce(x, ninf), dimensions={1}, to_apply=max
  d = f32[33] divide(s, m)
  ROOT t = (f32[33], f32[33], f32[33]) tuple(s, m, d)
}
argmax {
  x = f32[5,1000] parameter(0)
  iota = s32[5,1000] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[5], s32[5]) reduce(x, iota, ninf, zero), dimensions={1}, to_apply=argmax_reducer
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
two_shapes {
  x = f32[8,8] parameter(0)
  y = s32[100] parameter(1)
  n = f32[8,8] negate(x)
  a = s32[100] abs(y)
  ROOT t = (f32[8,8], s32[100]) tuple(n, a)
}
ENTRY e {
  ROOT p = f32[] parameter(0)
}
)";

TEST(GpuEmulation, EmitterKernelsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(kKernels);
  ASSERT_NE(module, nullptr);
  for (const char* name :
       {"elementwise", "odd", "half", "long_rows", "short_rows", "tiny_rows", "columns", "middle",
        "multi_output", "argmax", "transpose", "transpose3", "two_shapes"}) {
    const HloComputation* computation = module->FindComputation(name);
    ASSERT_NE(computation, nullptr) << name;
    bool ran = false;
    EXPECT_EQ(CheckKernel(emulator, *computation, 7, &ran), "") << name;
    EXPECT_TRUE(ran) << name;
  }
}

constexpr char kSplitReductions[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
argmax_reducer {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
full_sum {
  x = f32[70000] parameter(0)
  one = f32[] constant(1)
  ROOT s = f32[] reduce(x, one), dimensions={0}, to_apply=add
}
full_max {
  x = f32[2,35000] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT m = f32[] reduce(x, ninf), dimensions={0,1}, to_apply=max
}
full_s32 {
  x = s32[70000] parameter(0)
  seven = s32[] constant(7)
  ROOT s = s32[] reduce(x, seven), dimensions={0}, to_apply=add_s32
}
full_argmax {
  x = f32[70000] parameter(0)
  iota = s32[70000] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[], s32[]) reduce(x, iota, ninf, zero), dimensions={0}, to_apply=argmax_reducer
}
few_long_rows {
  x = f32[4,70000] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[4] reduce(x, zero), dimensions={1}, to_apply=add
}
strided_rows {
  x = f32[40,4,2000] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[4] reduce(x, zero), dimensions={0,2}, to_apply=add
}
columns {
  x = f32[4096,20] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[20] reduce(x, zero), dimensions={0}, to_apply=add
}
middle_columns {
  x = f32[3,2048,40] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT m = f32[3,40] reduce(x, ninf), dimensions={1}, to_apply=max
}
epilogue {
  x = f32[3,70000] parameter(0)
  y = f32[3] parameter(1)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[3] reduce(x, zero), dimensions={1}, to_apply=add
  m = f32[3] reduce(x, ninf), dimensions={1}, to_apply=max
  d = f32[3] divide(s, m)
  e = f32[3] multiply(s, y)
  ROOT t = (f32[3], f32[3], f32[3], f32[3]) tuple(s, m, d, e)
}
bf16_to_f32 {
  x = bf16[3,70000] parameter(0)
  c = f32[3,70000] convert(x)
  zero = f32[] constant(0)
  ROOT s = f32[3] reduce(c, zero), dimensions={1}, to_apply=add
}
bf16_sum {
  x = bf16[70000] parameter(0)
  zero = bf16[] constant(0)
  ROOT s = bf16[] reduce(x, zero), dimensions={0}, to_apply=add_bf16
}
not_split {
  x = f32[128,4096] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[128] reduce(x, zero), dimensions={1}, to_apply=add
}
ENTRY e {
  ROOT p = f32[] parameter(0)
}
)";

// Reductions split across blocks (a partials kernel, then a combine
// kernel) against the interpreter; `strategy` is what each must choose on
// a device with `sms` SMs (fewer SMs: fewer chunks, quicker to emulate).
TEST(GpuEmulation, SplitReductionsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(kSplitReductions);
  ASSERT_NE(module, nullptr);
  struct Case {
    const char* name;
    const char* strategy;
    int sms;
  };
  for (const Case& c : {Case{"full_sum", "row-reduction-split", 132},
                        Case{"full_max", "row-reduction-split", 132},
                        Case{"full_s32", "row-reduction-split", 132},
                        Case{"full_argmax", "row-reduction-split", 132},
                        Case{"few_long_rows", "row-reduction-split", 132},
                        Case{"strided_rows", "row-reduction-split", 8},
                        Case{"columns", "column-reduction-split", 132},
                        Case{"middle_columns", "column-reduction-split", 8},
                        Case{"epilogue", "row-reduction-split", 108},
                        Case{"bf16_to_f32", "row-reduction-split", 132},
                        Case{"bf16_sum", "row-reduction-split", 132},
                        Case{"not_split", "row-reduction", 132}}) {
    const HloComputation* computation = module->FindComputation(c.name);
    ASSERT_NE(computation, nullptr) << c.name;
    GpuTarget target;
    target.sm_count = c.sms;
    GpuCompileOptions options;
    options.target = target;
    options.assemble = false;
    absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(*computation, options);
    ASSERT_TRUE(kernel.ok()) << c.name << ": " << kernel.status();
    EXPECT_EQ(kernel->strategy, c.strategy) << c.name;
    EXPECT_EQ(kernel->second_name.empty(), std::string(c.strategy) == "row-reduction") << c.name;
    std::cout << c.name << ": " << kernel->strategy << " grid " << kernel->launch.grid[0]
              << " block " << kernel->launch.block[0] << "x" << kernel->launch.block[1]
              << ", combine grid " << kernel->second_launch.grid[0] << " block "
              << kernel->second_launch.block[0] << ", scratch " << kernel->scratch_bytes
              << " bytes\n";
    if (kernel->second_name.empty()) continue;  // The unsplit kernel is checked above.
    bool ran = false;
    EXPECT_EQ(CheckKernel(emulator, *computation, 5, &ran, target), "") << c.name;
    EXPECT_TRUE(ran) << c.name;
  }
}

constexpr char kSortScatter[] = R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
lt_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
gt_pair {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
lt_u8_pair {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  i = f32[] parameter(2)
  j = f32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=LT
}
lt_total {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
max_s64 {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT s = s64[] maximum(a, b)
}
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
add_max {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s0, s1)
}
sort_rows {
  x = f32[6,100] parameter(0)
  ROOT s = f32[6,100] sort(x), dimensions={1}, to_apply=lt
}
sort_dim0 {
  x = f32[37,5] parameter(0)
  ROOT s = f32[37,5] sort(x), dimensions={0}, to_apply=lt_total
}
sort_middle {
  x = f16[3,19,4] parameter(0)
  ROOT s = f16[3,19,4] sort(x), dimensions={1}, to_apply=lt_f16
}
sort_pairs {
  x = f32[3,50] parameter(0)
  i = s32[3,50] parameter(1)
  ROOT s = (f32[3,50], s32[3,50]) sort(x, i), dimensions={1}, is_stable=true, to_apply=gt_pair
}
sort_ties {
  k = u8[2,300] parameter(0)
  v = f32[2,300] parameter(1)
  ROOT s = (u8[2,300], f32[2,300]) sort(k, v), dimensions={1}, to_apply=lt_u8_pair
}
sort_1d {
  x = f32[1000] parameter(0)
  ROOT s = f32[1000] sort(x), dimensions={0}, to_apply=lt
}
sort_uncached {
  x = f32[2,5000] parameter(0)
  ROOT s = f32[2,5000] sort(x), dimensions={1}, to_apply=lt
}
sort_long {
  x = f32[2,9000] parameter(0)
  ROOT s = f32[2,9000] sort(x), dimensions={1}, to_apply=lt
}
topk_op {
  x = f32[4,40] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) topk(x), k=5, largest=true
}
topk_smallest {
  x = s32[3,64] parameter(0)
  ROOT t = (s32[3,7], s32[3,7]) topk(x), k=7, largest=false
}
topk_call {
  x = f32[3,20] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) custom-call(x), custom_call_target="TopK"
}
scatter_add {
  t = f32[16,8] parameter(0)
  i = s32[10,1] parameter(1)
  u = f32[10,8] parameter(2)
  ROOT s = f32[16,8] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
scatter_set {
  t = f32[16,8] parameter(0)
  i = s32[10,1] parameter(1)
  u = f32[10,8] parameter(2)
  ROOT s = f32[16,8] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=set
}
scatter_f16 {
  t = f16[9,5] parameter(0)
  i = s32[7,1] parameter(1)
  u = f16[7,5] parameter(2)
  ROOT s = f16[9,5] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f16
}
scatter_s64 {
  t = s64[6] parameter(0)
  i = s32[20] parameter(1)
  u = s64[20] parameter(2)
  ROOT s = s64[6] scatter(t, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=max_s64
}
scatter_windows {
  t = f32[5,5] parameter(0)
  i = s32[6,2] parameter(1)
  u = f32[6,3,3] parameter(2)
  ROOT s = f32[5,5] scatter(t, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=set
}
scatter_unique {
  t = f32[6,8] parameter(0)
  i = s32[1,1] parameter(1)
  u = f32[1,8] parameter(2)
  ROOT s = f32[6,8] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add
}
scatter_variadic {
  t0 = f32[8,4] parameter(0)
  t1 = s32[8,4] parameter(1)
  i = s32[6,1] parameter(2)
  u0 = f32[6,4] parameter(3)
  u1 = s32[6,4] parameter(4)
  ROOT s = (f32[8,4], s32[8,4]) scatter(t0, t1, i, u0, u1), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_max
}
ENTRY e {
  ROOT p = f32[] parameter(0)
}
)";

// Sort, topk and scatter kernels against the interpreter; `strategy` is
// what each must choose.
TEST(GpuEmulation, SortTopkScatterKernelsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(kSortScatter);
  ASSERT_NE(module, nullptr);
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"sort_rows", "sort-shared-cached"},     {"sort_dim0", "sort-shared-cached"},
      {"sort_middle", "sort-shared-cached"},   {"sort_pairs", "sort-shared-cached"},
      {"sort_ties", "sort-shared-cached"},     {"sort_1d", "sort-shared-cached"},
      {"sort_uncached", "sort-shared"},        {"sort_long", "sort-global"},
      {"topk_op", "topk-shared-cached"},       {"topk_smallest", "topk-shared-cached"},
      {"topk_call", "topk-shared-cached"},
      {"scatter_add", "scatter-atomic"}, {"scatter_set", "scatter-ordered"},
      {"scatter_f16", "scatter-atomic"}, {"scatter_s64", "scatter-atomic"},
      {"scatter_windows", "scatter-serial"}, {"scatter_unique", "scatter"},
      {"scatter_variadic", "scatter-ordered"}};
  int sorts = 0, scatters = 0;
  for (const auto& [name, strategy] : cases) {
    const HloComputation* computation = module->FindComputation(name);
    ASSERT_NE(computation, nullptr) << name;
    GpuCompileOptions options;
    options.assemble = false;
    absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(*computation, options);
    ASSERT_TRUE(kernel.ok()) << name << ": " << kernel.status();
    EXPECT_EQ(kernel->strategy, strategy) << name;
    for (uint64_t seed : {3, 17}) {
      bool ran = false;
      EXPECT_EQ(CheckKernel(emulator, *computation, seed, &ran), "") << name << " seed " << seed;
      EXPECT_TRUE(ran) << name;
    }
    ++(absl::StartsWith(name, "scatter") ? scatters : sorts);
  }
  std::cout << "sort/topk cases emulated: " << sorts << ", scatter cases: " << scatters << "\n";
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
  GpuCompileOptions options;
  options.target = target;
  options.assemble = false;
  absl::StatusOr<GpuKernel> probe = CompileGpuKernel(*site.computation, options);
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
        GpuCompileOptions options;
        options.assemble = false;
        absl::StatusOr<GpuKernel> probe = CompileGpuKernel(*site.computation, options);
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

constexpr char kRowNormalizations[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
max_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
softmax {
  x = f32[37,100] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[37,100] broadcast(m), dimensions={0}
  c = f32[37,100] subtract(x, mb)
  e = f32[37,100] exponential(c)
  zero = f32[] constant(0)
  s = f32[37] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[37,100] broadcast(s), dimensions={0}
  ROOT d = f32[37,100] divide(e, sb)
}
log_softmax {
  x = f32[6,700] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[6] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[6,700] broadcast(m), dimensions={0}
  c = f32[6,700] subtract(x, mb)
  e = f32[6,700] exponential(c)
  zero = f32[] constant(0)
  s = f32[6] reduce(e, zero), dimensions={1}, to_apply=add
  l = f32[6] log(s)
  l1 = f32[6,1] reshape(l)
  l2 = f32[6] reshape(l1)
  lb = f32[6,700] broadcast(l2), dimensions={0}
  ROOT r = f32[6,700] subtract(c, lb)
}
layer_norm {
  x = f32[2,5,64] parameter(0)
  g = f32[64] parameter(1)
  b = f32[64] parameter(2)
  zero = f32[] constant(0)
  sixty_four = f32[] constant(64)
  n = f32[2,5] broadcast(sixty_four), dimensions={}
  sum = f32[2,5] reduce(x, zero), dimensions={2}, to_apply=add
  mean = f32[2,5] divide(sum, n)
  meanb = f32[2,5,64] broadcast(mean), dimensions={0,1}
  c = f32[2,5,64] subtract(x, meanb)
  sq = f32[2,5,64] multiply(c, c)
  sqsum = f32[2,5] reduce(sq, zero), dimensions={2}, to_apply=add
  var = f32[2,5] divide(sqsum, n)
  eps = f32[] constant(1e-5)
  epsb = f32[2,5] broadcast(eps), dimensions={}
  ve = f32[2,5] add(var, epsb)
  r = f32[2,5] rsqrt(ve)
  rb = f32[2,5,64] broadcast(r), dimensions={0,1}
  norm = f32[2,5,64] multiply(c, rb)
  gb = f32[2,5,64] broadcast(g), dimensions={2}
  scaled = f32[2,5,64] multiply(norm, gb)
  bb = f32[2,5,64] broadcast(b), dimensions={2}
  out = f32[2,5,64] add(scaled, bb)
  ROOT t = (f32[2,5,64], f32[2,5]) tuple(out, mean)
}
rms_norm {
  x = bf16[4,3000] parameter(0)
  w = bf16[3000] parameter(1)
  xf = f32[4,3000] convert(x)
  sq = f32[4,3000] multiply(xf, xf)
  zero = f32[] constant(0)
  sum = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add
  len = f32[] constant(3000)
  lenb = f32[4] broadcast(len), dimensions={}
  ms = f32[4] divide(sum, lenb)
  eps = f32[] constant(1e-6)
  epsb = f32[4] broadcast(eps), dimensions={}
  mse = f32[4] add(ms, epsb)
  r = f32[4] rsqrt(mse)
  rb = f32[4,3000] broadcast(r), dimensions={0}
  y = f32[4,3000] multiply(xf, rb)
  yb = bf16[4,3000] convert(y)
  wb = bf16[4,3000] broadcast(w), dimensions={1}
  ROOT o = bf16[4,3000] multiply(yb, wb)
}
transposed_input {
  x = f32[64,64] parameter(0)
  xt = f32[64,64] transpose(x), dimensions={1,0}
  y = f32[64,64] add(x, xt)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(y, ninf), dimensions={1}, to_apply=max
  mb = f32[64,64] broadcast(m), dimensions={0}
  c = f32[64,64] subtract(y, mb)
  ROOT o = f32[64,64] multiply(c, xt)
}
softmax_bf16 {
  x = bf16[9,256] parameter(0)
  ninf = bf16[] constant(-inf)
  m = bf16[9] reduce(x, ninf), dimensions={1}, to_apply=max_bf16
  mb = bf16[9,256] broadcast(m), dimensions={0}
  c = bf16[9,256] subtract(x, mb)
  e = bf16[9,256] exponential(c)
  zero = bf16[] constant(0)
  s = bf16[9] reduce(e, zero), dimensions={1}, to_apply=add_bf16
  sb = bf16[9,256] broadcast(s), dimensions={0}
  ROOT d = bf16[9,256] divide(e, sb)
}
ENTRY e {
  ROOT p = f32[] parameter(0)
}
)";

// Row normalizations get one row-normalization kernel each, which agrees
// with the interpreter: hand-written ones, and those the CUDA pipeline
// makes of the zoo's softmax, layer norm, attention and transformer block.
TEST(GpuEmulation, RowNormalizationKernelsMatchTheInterpreter) {
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  std::unique_ptr<HloModule> module = ParseForTest(kRowNormalizations);
  ASSERT_NE(module, nullptr);
  auto check = [&](const HloComputation& computation, const std::string& what) {
    GpuCompileOptions options;
    options.assemble = false;
    absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(computation, options);
    ASSERT_TRUE(kernel.ok()) << what << ": " << kernel.status();
    EXPECT_EQ(kernel->strategy, "row-normalization") << what;
    bool ran = false;
    EXPECT_EQ(CheckKernel(emulator, computation, 5, &ran), "") << what;
    EXPECT_TRUE(ran) << what;
  };
  for (const char* name :
       {"softmax", "log_softmax", "layer_norm", "rms_norm", "transposed_input", "softmax_bf16"}) {
    const HloComputation* computation = module->FindComputation(name);
    ASSERT_NE(computation, nullptr) << name;
    check(*computation, name);
  }
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) GTEST_SKIP() << "no runfiles";
  for (const char* model : {"softmax", "layer_norm", "attention", "transformer_block"}) {
    std::ifstream in(absl::StrCat(srcdir, "/", workspace, "/tests/jax/zoo/", model,
                                  ".before.txt"));
    ASSERT_TRUE(in.good()) << model;
    std::stringstream text;
    text << in.rdbuf();
    std::unique_ptr<HloModule> zoo = ParseForTest(text.str());
    ASSERT_NE(zoo, nullptr) << model;
    GpuPipelineOptions pipeline;
    pipeline.cublaslt = LibraryUse::kAvailable;
    pipeline.cudnn = LibraryUse::kAvailable;
    ASSERT_TRUE(OptimizeForGpu(*zoo, pipeline).ok()) << model;
    int row_normalizations = 0;
    for (const KernelSite& site : CollectKernelSites(*zoo).kernels) {
      if (!site.fused || !IsRowNormalizationFusion(*site.instruction)) continue;
      ++row_normalizations;
      check(*site.computation, absl::StrCat(model, " %", site.instruction->name()));
    }
    EXPECT_GT(row_normalizations, 0) << model;
  }
}

// Every kernel of every zoo model (after the default pipeline) small enough
// to emulate quickly.
TEST(GpuEmulation, ZooKernelsMatchTheInterpreter) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) GTEST_SKIP() << "no runfiles";
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  int checked = 0, skipped = 0;
  for (const char* model :
       {"attention", "bf16_mlp", "conv2d", "conv_bn_relu", "cumsum_scan", "depthwise_conv",
        "dynamic_slice", "embedding_scatter", "layer_norm", "mlp_gelu", "reductions",
        "resnet_block", "softmax", "topk_sort", "transformer_block", "while_loop"}) {
    const std::string path =
        absl::StrCat(srcdir, "/", workspace, "/tests/jax/zoo/", model, ".before.txt");
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    std::unique_ptr<HloModule> module = ParseForTest(text.str());
    ASSERT_NE(module, nullptr) << model;
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
        MakeStandardPipeline("default", PipelineOptions(), nullptr);
    ASSERT_TRUE(pipeline.ok());
    ASSERT_TRUE((*pipeline)->Run(*module).ok()) << model;
    KernelSites sites = CollectKernelSites(*module);
    for (const KernelSite& site : sites.kernels) {
      GpuCompileOptions options;
      options.assemble = false;
      absl::StatusOr<GpuKernel> probe = CompileGpuKernel(*site.computation, options);
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
  const char* const kModules[] = {
      R"(HloModule gemm_bias_relu
ENTRY main {
  x = f32[8,8] parameter(0)
  w = f32[8,8] parameter(1)
  b = f32[8] parameter(2)
  dot = f32[8,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,8] broadcast(b), dimensions={1}
  add = f32[8,8] add(dot, bb)
  zero = f32[] constant(0)
  zb = f32[8,8] broadcast(zero), dimensions={}
  ROOT relu = f32[8,8] maximum(add, zb)
})",
      R"(HloModule batched_gemm_rhs_transposed
ENTRY main {
  x = f32[2,8,16] parameter(0)
  w = f32[2,12,16] parameter(1)
  ROOT d = f32[2,8,12] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
})",
      R"(HloModule conv_nhwc_bias_relu
ENTRY main {
  x = f32[2,6,6,3] parameter(0)
  k = f32[3,3,3,8] parameter(1)
  b = f32[8] parameter(2)
  conv = f32[2,6,6,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,6,6,8] broadcast(b), dimensions={3}
  add = f32[2,6,6,8] add(conv, bb)
  zero = f32[] constant(0)
  zb = f32[2,6,6,8] broadcast(zero), dimensions={}
  ROOT relu = f32[2,6,6,8] maximum(add, zb)
})",
      R"(HloModule conv_nchw_strided
ENTRY main {
  x = f32[1,4,9,9] parameter(0)
  k = f32[8,4,3,3] parameter(1)
  ROOT conv = f32[1,8,5,5] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
  };
  Emulator emulator;
  ASSERT_TRUE(emulator.error().empty()) << emulator.error();
  for (const char* text : kModules) {
    std::unique_ptr<HloModule> module = ParseForTest(text);
    ASSERT_NE(module, nullptr);
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
        MakeStandardPipeline("outline", PipelineOptions(), nullptr);
    ASSERT_TRUE(pipeline.ok());
    ASSERT_TRUE((*pipeline)->Run(*module).ok()) << module->name();
    GpuProgramOptions options;
    options.cublaslt = LibraryUse::kAvailable;
    options.cudnn = LibraryUse::kAvailable;
    options.codegen.assemble = false;
    absl::StatusOr<std::unique_ptr<GpuProgram>> program = CompileForGpu(*module, options);
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
