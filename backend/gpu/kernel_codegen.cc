// CompileGpuKernel and the kernel cache (see kernel_codegen.h): emit the
// kernel, link libdevice, optimize, emit PTX, run ptxas.
#include "backend/gpu/kernel_codegen.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/libdevice.h"
#include "backend/gpu/nvptx_compiler.h"
#include "backend/llvm/kernel_fingerprint.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/IPO/Internalize.h"

namespace hloc {
namespace gpu {
namespace {

// FNV-1a: a hash that is the same in every process and build (kernel names
// must not change between runs).
uint64_t StableHash(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string PrintModule(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  module.print(stream, nullptr);
  stream.flush();
  return text;
}

// Ops whose elemental form loops over many operand elements per output.
bool HasLongInnerLoops(const HloComputation& computation) {
  for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
    switch (hlo->opcode()) {
      case HloOpcode::kDot:
      case HloOpcode::kConvolution:
      case HloOpcode::kReduceWindow: return true;
      default: break;
    }
  }
  return false;
}

}  // namespace

GpuTarget GpuTarget::ForComputeCapability(int compute_capability) {
  GpuTarget target;
  target.compute_capability = compute_capability;
  if (compute_capability == 80) target.sm_count = 108;  // A100
  if (compute_capability == 90) target.sm_count = 132;  // H100 SXM
  return target;
}

std::string GpuTarget::SmName() const { return absl::StrCat("sm_", compute_capability); }

namespace {

std::string DefaultKernelName(const HloComputation& computation) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016" PRIx64,
                StableHash(codegen::KernelFingerprint(computation)));
  return absl::StrCat("hloc_", hex);
}

// Adds kernel `name` for `computation` to `module`. On failure the partial
// function is removed again, so the module stays valid for other kernels.
absl::StatusOr<GpuKernel> AddKernel(const HloComputation& computation, const std::string& name,
                                    llvm::Module& module, const GpuTarget& target,
                                    backend::KernelVariant variant = backend::KernelVariant::kWhole) {
  LibdeviceMathLowering math;
  absl::StatusOr<EmittedGpuKernel> emitted =
      EmitGpuKernel(computation, name, &module, &math, target, variant);
  if (!emitted.ok()) {
    for (const std::string& entry : {name, absl::StrCat(name, "_combine")}) {
      if (llvm::Function* partial = module.getFunction(entry)) {
        partial->dropAllReferences();
        partial->eraseFromParent();
      }
    }
    return emitted.status();
  }
  GpuKernel kernel;
  kernel.name = name;
  kernel.launch = emitted->launch;
  kernel.num_buffers = emitted->num_buffers;
  kernel.num_inputs = emitted->num_inputs;
  kernel.strategy = emitted->strategy;
  kernel.vector_width = emitted->vector_width;
  kernel.copy_before = emitted->copy_before;
  kernel.scratch_bytes = emitted->scratch_bytes;
  kernel.second_name = emitted->second_name;
  kernel.second_launch = emitted->second_launch;
  return kernel;
}

struct ModuleCode {
  std::string unoptimized_ir, llvm_ir, ptx, cubin, note;
};

// Verifies, links libdevice, internalizes all but `entries`, optimizes,
// emits PTX and (when options ask for it) a cubin.
absl::StatusOr<ModuleCode> FinishModule(llvm::Module& module, llvm::TargetMachine& machine,
                                        const GpuCompileOptions& options,
                                        const std::vector<std::string>& entries, bool unroll) {
  ModuleCode code;
  {
    std::string errors;
    llvm::raw_string_ostream stream(errors);
    if (llvm::verifyModule(module, &stream)) {
      stream.flush();
      return absl::InternalError(absl::StrCat("GPU kernel module ", module.getName().str(),
                                              " is invalid LLVM IR: ", errors));
    }
  }
  if (options.keep_unoptimized_ir) code.unoptimized_ir = PrintModule(module);
  if (NeedsLibdevice(module)) {
    absl::Status linked = LinkLibdevice(&module, LibdevicePath(options.libdevice_path));
    if (!linked.ok()) return linked;
  }
  // Only the kernels are visible outside the module; what else libdevice
  // brought in is inlined or deleted by the optimizer.
  llvm::internalizeModule(module, [&entries](const llvm::GlobalValue& value) {
    return std::find(entries.begin(), entries.end(), value.getName().str()) != entries.end();
  });
  OptimizeNvptxModule(module, machine, options.optimization_level, unroll);
  code.llvm_ir = PrintModule(module);
  absl::StatusOr<std::string> ptx = EmitPtx(module, machine);
  if (!ptx.ok()) return ptx.status();
  code.ptx = *std::move(ptx);
  if (options.assemble) {
    absl::StatusOr<std::string> cubin =
        AssemblePtx(code.ptx, options.target.compute_capability, PtxasPath(options));
    if (cubin.ok()) {
      code.cubin = *std::move(cubin);
    } else if (cubin.status().code() == absl::StatusCode::kNotFound) {
      code.note = absl::StrCat(cubin.status().message(), "; no cubin (the driver can JIT the PTX)");
    } else {
      return cubin.status();
    }
  }
  return code;
}

}  // namespace

absl::StatusOr<GpuKernel> CompileGpuKernel(const HloComputation& computation,
                                           const GpuCompileOptions& options,
                                           backend::KernelVariant variant) {
  std::string name =
      options.kernel_name.empty() ? DefaultKernelName(computation) : options.kernel_name;
  if (variant == backend::KernelVariant::kUpdateInPlace) absl::StrAppend(&name, "_update");
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> machine =
      CreateNvptxTargetMachine(options.target.compute_capability);
  if (!machine.ok()) return machine.status();
  llvm::LLVMContext context;
  llvm::Module module(name, context);
  PrepareModule(module, **machine);
  absl::StatusOr<GpuKernel> kernel = AddKernel(computation, name, module, options.target, variant);
  if (!kernel.ok()) return kernel.status();
  std::vector<std::string> entries = {name};
  if (!kernel->second_name.empty()) entries.push_back(kernel->second_name);
  absl::StatusOr<ModuleCode> code = FinishModule(module, **machine, options, entries,
                                                 /*unroll=*/!HasLongInnerLoops(computation));
  if (!code.ok()) return code.status();
  kernel->unoptimized_ir = std::move(code->unoptimized_ir);
  kernel->llvm_ir = std::move(code->llvm_ir);
  kernel->ptx = std::move(code->ptx);
  kernel->cubin = std::move(code->cubin);
  kernel->note = std::move(code->note);
  return kernel;
}

absl::StatusOr<GpuKernelBatch> CompileGpuKernels(
    absl::Span<const HloComputation* const> computations, const GpuCompileOptions& options) {
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> machine =
      CreateNvptxTargetMachine(options.target.compute_capability);
  if (!machine.ok()) return machine.status();
  llvm::LLVMContext context;
  llvm::Module module("hloc_kernels", context);
  PrepareModule(module, **machine);
  GpuKernelBatch batch;
  absl::flat_hash_map<std::string, size_t> first_with_name;
  std::vector<std::string> entries;
  bool unroll = true;
  for (const HloComputation* computation : computations) {
    const std::string name = DefaultKernelName(*computation);
    auto it = first_with_name.find(name);
    if (it != first_with_name.end()) {
      batch.kernels.push_back(batch.kernels[it->second]);
      continue;
    }
    first_with_name[name] = batch.kernels.size();
    absl::StatusOr<GpuKernel> kernel = AddKernel(*computation, name, module, options.target);
    if (!kernel.ok() && kernel.status().code() != absl::StatusCode::kUnimplemented) {
      return absl::Status(kernel.status().code(),
                          absl::StrCat(computation->name(), ": ", kernel.status().message()));
    }
    if (kernel.ok()) {
      entries.push_back(name);
      if (!kernel->second_name.empty()) entries.push_back(kernel->second_name);
      unroll = unroll && !HasLongInnerLoops(*computation);
    }
    batch.kernels.push_back(std::move(kernel));
  }
  if (entries.empty()) return batch;
  absl::StatusOr<ModuleCode> code = FinishModule(module, **machine, options, entries, unroll);
  if (!code.ok()) return code.status();
  batch.llvm_ir = std::move(code->llvm_ir);
  batch.ptx = std::move(code->ptx);
  batch.cubin = std::move(code->cubin);
  batch.note = std::move(code->note);
  return batch;
}

absl::StatusOr<std::shared_ptr<const GpuKernel>> GpuKernelCache::GetOrCompile(
    const HloComputation& computation, backend::KernelVariant variant) {
  const std::string fingerprint = codegen::KernelFingerprint(computation);
  const std::string key =
      fingerprint.empty() ? ""
                          : absl::StrCat(options_.target.SmName(),
                                         variant == backend::KernelVariant::kWhole ? "" : " update",
                                         "\n", fingerprint);
  if (!key.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(key);
    if (it != kernels_.end()) {
      ++hits_;
      return it->second;
    }
  }
  absl::StatusOr<GpuKernel> kernel = CompileGpuKernel(computation, options_, variant);
  if (!kernel.ok()) return kernel.status();
  auto shared = std::make_shared<const GpuKernel>(*std::move(kernel));
  std::lock_guard<std::mutex> lock(mu_);
  ++misses_;
  if (key.empty()) return shared;
  auto [it, inserted] = kernels_.emplace(key, shared);
  return it->second;
}

int64_t GpuKernelCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

int64_t GpuKernelCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace gpu
}  // namespace hloc
