// Kernel outputs (see kernel_outputs.h).
#include "backend/llvm/kernel_outputs.h"

#include "absl/strings/str_cat.h"

namespace hloc {
namespace codegen {

absl::Status CollectKernelOutputs(const HloInstruction& hlo, std::vector<KernelOutput>* outputs) {
  if (hlo.opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : hlo.operands()) {
      absl::Status status = CollectKernelOutputs(*operand, outputs);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  if (hlo.shape().IsArray()) {
    outputs->push_back({&hlo, std::nullopt, &hlo.shape(), nullptr});
    return absl::OkStatus();
  }
  if (hlo.shape().IsTuple()) {
    for (int64_t i = 0; i < hlo.shape().tuple_shapes_size(); ++i) {
      const Shape& element = hlo.shape().tuple_shapes(i);
      if (!element.IsArray()) {
        return absl::UnimplementedError(
            absl::StrCat("kernel output %", hlo.name(), " has nested tuples"));
      }
      outputs->push_back({&hlo, static_cast<unsigned>(i), &element, nullptr});
    }
    return absl::OkStatus();
  }
  return absl::OkStatus();  // Tokens produce no buffer.
}

absl::StatusOr<ElementGenerator> KernelOutputGenerator(FusedIrEmitter& fused, llvm::IRBuilder<>* b,
                                                       const KernelOutput& output) {
  absl::StatusOr<ElementGenerator> g = fused.GetGenerator(*output.producer);
  if (!g.ok() || !output.struct_field.has_value()) return g;
  const unsigned field = *output.struct_field;
  ElementGenerator whole = *std::move(g);
  return ElementGenerator([b, field, whole](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    absl::StatusOr<llvm::Value*> v = whole(index);
    if (!v.ok()) return v.status();
    return b->CreateExtractValue(*v, {field});
  });
}

}  // namespace codegen
}  // namespace hloc
