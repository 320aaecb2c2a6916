// A host emulator for GPU kernels (see gpu_emulator.h): a kernel's LLVM IR
// (as emitted, before libdevice and the NVPTX backend) is retargeted to the
// host and JIT-compiled, PTX special registers, bar.sync and shfl.sync.down
// become calls into the small runtime below, which runs every thread of a
// block as an OS thread (blocks one after another, so one copy of the
// shared-memory arrays suffices), and libdevice calls go to libm.
#include "backend/gpu/gpu_emulator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

namespace hloc {
namespace gpu {
namespace {

using Entry = Emulator::Entry;

// ---- The per-thread runtime the kernels call.

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


void CollectLeaves(Literal* literal, std::vector<Literal*>* out) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_tuple_elements()) CollectLeaves(&element, out);
  } else if (literal->shape().IsArray()) {
    out->push_back(literal);
  }
}

}  // namespace

Emulator::Emulator() {
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
  add("__nv_hypotf", static_cast<F2>(&::hypotf));
  add("__nv_hypot", static_cast<D2>(&::hypot));
  llvm::Error defined = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(symbols));
  if (defined) error_ = llvm::toString(std::move(defined));
}

Emulator::~Emulator() = default;

absl::StatusOr<Entry> Emulator::Load(const GpuKernel& kernel, bool second) {
  const std::string& name = second ? kernel.second_name : kernel.name;
  auto loaded = loaded_.find(name);
  if (loaded != loaded_.end()) return loaded->second;
  absl::Status compiled = Compile(kernel);
  if (!compiled.ok()) return compiled;
  loaded = loaded_.find(name);
  if (loaded == loaded_.end()) return absl::InternalError("kernel entry missing");
  return loaded->second;
}

absl::Status Emulator::Compile(const GpuKernel& kernel) {
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

std::string CheckKernel(Emulator& emulator, const HloComputation& computation, uint64_t seed,
                        bool* ran, const GpuTarget& target) {
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

}  // namespace gpu
}  // namespace hloc
