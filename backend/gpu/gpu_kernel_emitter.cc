// The GPU kernel function, its buffers, and the choice of strategy (see
// gpu_kernel_emitter.h).
#include "backend/gpu/gpu_kernel_emitter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/llvm/array_leaves.h"
#include "hlo/status_macros.h"
#include "llvm/IR/Function.h"

namespace hloc {
namespace gpu {

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

int64_t GridBlocks(const GpuTarget& target, int64_t work, int64_t per_block) {
  const int64_t needed = (work + per_block - 1) / per_block;
  // Enough blocks to fill every SM many times over; more than that only
  // costs scheduling, and grid.x is limited to 2^31 - 1 anyway.
  const int64_t cap = std::max<int64_t>(1, int64_t{target.sm_count} * 2048 / per_block * 32);
  return std::max<int64_t>(1, std::min(needed, cap));
}

absl::Status CollectKernelBuffers(const HloComputation& computation,
                                  std::vector<codegen::KernelOutput>* outputs,
                                  KernelBuffers* buffers) {
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* parameter = computation.parameter(i);
    if (parameter == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation ", computation.name(), " lacks parameter ", i));
    }
    buffers->parameter_leaves.push_back(ArrayLeaves(parameter->shape()));
    for (const ArrayLeaf& leaf : buffers->parameter_leaves.back()) {
      buffers->shapes.push_back(leaf.shape);
    }
  }
  buffers->num_inputs = static_cast<int64_t>(buffers->shapes.size());
  HLOC_RETURN_IF_ERROR(codegen::CollectKernelOutputs(*computation.root(), outputs));
  for (const codegen::KernelOutput& output : *outputs) buffers->shapes.push_back(output.shape);
  return absl::OkStatus();
}

void BindKernelBuffers(llvm::Function* kernel, const KernelBuffers& buffers,
                       codegen::FusedIrEmitter* fused,
                       std::vector<codegen::KernelOutput>* outputs) {
  int64_t next = 0;
  for (size_t p = 0; p < buffers.parameter_leaves.size(); ++p) {
    std::vector<llvm::Value*> leaves;
    for (size_t l = 0; l < buffers.parameter_leaves[p].size(); ++l) {
      leaves.push_back(kernel->getArg(next++));
    }
    fused->BindParameter(static_cast<int64_t>(p), std::move(leaves));
  }
  for (codegen::KernelOutput& output : *outputs) output.buffer = kernel->getArg(next++);
}

llvm::Function* CreateKernelFunction(llvm::Module* module, const std::string& name,
                                     const std::vector<const Shape*>& buffer_shapes,
                                     int64_t num_inputs, bool outputs_read, bool scratch) {
  llvm::LLVMContext& context = module->getContext();
  llvm::Type* global_ptr = llvm::PointerType::get(context, kGlobalAddressSpace);
  const int64_t num_buffers = static_cast<int64_t>(buffer_shapes.size()) + (scratch ? 1 : 0);
  llvm::Function* kernel = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                              std::vector<llvm::Type*>(num_buffers, global_ptr), false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  for (int64_t i = 0; i < num_buffers; ++i) {
    // Outputs never share memory with inputs or each other; inputs are only
    // read, so noalias holds for them even when two name the same buffer.
    // noalias + readonly lets the backend use the read-only data cache
    // (ld.global.nc).
    kernel->addParamAttr(i, llvm::Attribute::NoAlias);
    kernel->addParamAttr(i, llvm::Attribute::NoCapture);
    kernel->addParamAttr(i, llvm::Attribute::NoUndef);
    if (i < num_inputs) {
      kernel->addParamAttr(i, llvm::Attribute::ReadOnly);
    } else if (!outputs_read && i < static_cast<int64_t>(buffer_shapes.size())) {
      kernel->addParamAttr(i, llvm::Attribute::WriteOnly);
    }
    kernel->addParamAttr(i, llvm::Attribute::getWithAlignment(context, llvm::Align(16)));
    if (i >= static_cast<int64_t>(buffer_shapes.size())) {
      kernel->getArg(i)->setName("scratch");
      continue;
    }
    const int64_t bytes = ElementCount(*buffer_shapes[i]) *
                          std::max<int64_t>(1, ByteWidth(buffer_shapes[i]->element_type()));
    if (bytes > 0) {
      kernel->addParamAttr(
          i, llvm::Attribute::getWithDereferenceableBytes(context, static_cast<uint64_t>(bytes)));
    }
    kernel->getArg(i)->setName(i < num_inputs ? absl::StrCat("in", i)
                                              : absl::StrCat("out", i - num_inputs));
  }

  return kernel;
}

absl::StatusOr<EmittedGpuKernel> EmitGpuKernel(const HloComputation& computation,
                                               const std::string& name, llvm::Module* module,
                                               const codegen::MathLowering* math,
                                               const GpuTarget& target,
                                               backend::KernelVariant variant) {
  const bool update_in_place = variant == backend::KernelVariant::kUpdateInPlace;
  llvm::LLVMContext& context = module->getContext();
  if (computation.root() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), " has no root"));
  }
  if (!update_in_place) {
    absl::StatusOr<std::optional<EmittedGpuKernel>> special =
        TryEmitSortKernel(computation, name, module, math, target);
    if (special.ok() && !special->has_value()) {
      special = TryEmitScatterKernel(computation, name, module, math, target);
    }
    if (!special.ok()) return special.status();
    if (special->has_value()) return **special;
    special = TryEmitSplitReductionKernel(computation, name, module, math, target);
    if (!special.ok()) return special.status();
    if (special->has_value()) return **special;
  }
  GpuKernelState state;
  KernelBuffers buffers;
  HLOC_RETURN_IF_ERROR(CollectKernelBuffers(computation, &state.outputs, &buffers));
  const int64_t num_inputs = buffers.num_inputs;
  const int64_t num_buffers = static_cast<int64_t>(buffers.shapes.size());

  llvm::Function* kernel = CreateKernelFunction(module, name, buffers.shapes, num_inputs,
                                                /*outputs_read=*/false, /*scratch=*/false);

  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", kernel));
  codegen::ElementalIrEmitter elemental(&b, module, math);
  codegen::FusedIrEmitter fused(&elemental);
  BindKernelBuffers(kernel, buffers, &fused, &state.outputs);
  state.b = &b;
  state.elemental = &elemental;
  state.fused = &fused;
  state.target = &target;
  state.num_inputs = num_inputs;

  absl::StatusOr<bool> done =
      update_in_place ? false : TryEmitRowNormalizationKernel(computation, state);
  if (!done.ok()) return done.status();
  if (update_in_place) {
    HLOC_RETURN_IF_ERROR(EmitUpdateInPlaceKernel(state, computation));
    done = true;
  }
  if (!*done) {
    done = TryEmitReductionKernel(state);
    if (!done.ok()) return done.status();
  }
  if (!*done) {
    done = TryEmitTransposeKernel(state);
    if (!done.ok()) return done.status();
  }
  if (!*done) {
    absl::Status status = EmitLoopKernel(state);
    if (!status.ok()) return status;
  }
  b.CreateRetVoid();
  AnnotateKernel(kernel, state.result.launch);
  EmittedGpuKernel result = state.result;
  result.num_buffers = num_buffers;
  result.num_inputs = num_inputs;
  return result;
}

}  // namespace gpu
}  // namespace hloc
