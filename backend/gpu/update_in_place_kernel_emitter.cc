// Update-in-place kernels (backend/common/kernel_variant.h): one thread per
// element of a dynamic-update-slice's update, storing it at its clamped
// place in the output, which already holds the updated operand
// (codegen::UpdateInPlaceStore). The rest of the output is not touched, so
// a scan's carried array costs one row per iteration instead of the array.
#include <algorithm>

#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/llvm/update_in_place.h"

namespace hloc {
namespace gpu {

absl::Status EmitUpdateInPlaceKernel(GpuKernelState& state, const HloComputation& computation) {
  if (state.outputs.size() != 1) {
    return absl::UnimplementedError("an update in place writes one output");
  }
  absl::StatusOr<codegen::UpdateInPlaceStore> store =
      codegen::UpdateInPlaceStore::Prepare(computation, *state.fused, *state.elemental);
  if (!store.ok()) return store.status();
  codegen::ElementalIrEmitter& e = *state.elemental;
  llvm::IRBuilder<>& b = *state.b;
  EmittedGpuKernel& result = state.result;
  result.strategy = "update-in-place";
  const int64_t items = store->items();
  if (items == 0) {
    result.launch.grid[0] = 0;  // Nothing to write: no launch.
    return absl::OkStatus();
  }
  const int64_t threads = std::min<int64_t>(256, (items + 31) / 32 * 32);
  const int64_t blocks = GridBlocks(*state.target, items, threads);
  result.launch.block[0] = threads;
  result.launch.grid[0] = blocks;
  const int64_t total = threads * blocks;
  llvm::Value* item = b.CreateAdd(
      b.CreateMul(ToIndex(b, ReadSpecialRegister(b, SpecialRegister::kBlockIdX)), e.Int64(threads),
                  "", true, true),
      ToIndex(b, ReadSpecialRegister(b, SpecialRegister::kThreadIdX)), "item", true, true);
  llvm::Value* out = state.outputs[0].buffer;
  auto body = [&](llvm::Value* linear) -> absl::Status {
    codegen::IrIndex index = e.Delinearize(linear, store->update_dims());
    return store->Store(index, out);
  };
  if (total < items) {
    return EmitStridedLoop(e, "grid", item, e.Int64(items), e.Int64(total), body);
  }
  return e.EmitIf(b.CreateICmpSLT(item, e.Int64(items)), [&] { return body(item); });
}

}  // namespace gpu
}  // namespace hloc
