// Loop kernels (see gpu_kernel_emitter.h): every output element computed by
// its generator, one thread per element or per `vector_width` adjacent
// elements of the innermost dimension. Adjacent elements of one thread use
// adjacent addresses off 16-byte aligned buffers, so LLVM's load/store
// vectorizer turns them into ld.global.v4 / st.global.v4 (or v2, or v8 of
// 16-bit values) wherever an input is read at the output's own index.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"

namespace hloc {
namespace gpu {
namespace {

using codegen::ElementGenerator;
using codegen::IrIndex;

constexpr int64_t kMaxVectorWidth = 8;

struct OutputGroup {
  std::vector<const codegen::KernelOutput*> outputs;
  std::vector<ElementGenerator> generators;
  std::vector<int64_t> dims;
  int64_t count = 0;
};

// Elements per thread: 16 bytes of the narrowest output, halved until every
// output's innermost dimension is a multiple (so a thread's elements share
// one row and their addresses are consecutive).
int64_t ChooseVectorWidth(const std::vector<OutputGroup>& groups,
                          const std::vector<codegen::KernelOutput>& outputs) {
  int64_t narrowest = 8;
  for (const codegen::KernelOutput& output : outputs) {
    narrowest = std::min<int64_t>(narrowest, std::max(1, ByteWidth(output.shape->element_type())));
  }
  int64_t width = std::min<int64_t>(kMaxVectorWidth, 16 / narrowest);
  auto fits = [&](int64_t w) {
    for (const OutputGroup& group : groups) {
      const int64_t inner = group.dims.empty() ? 1 : group.dims.back();
      if (inner % w != 0) return false;
    }
    return true;
  };
  while (width > 1 && !fits(width)) width /= 2;
  return width;
}

}  // namespace

absl::Status EmitLoopKernel(GpuKernelState& state) {
  codegen::ElementalIrEmitter& e = *state.elemental;
  llvm::IRBuilder<>& b = *state.b;
  // Outputs with the same dimensions share one loop (and the values they
  // have in common).
  std::vector<OutputGroup> groups;
  for (const codegen::KernelOutput& output : state.outputs) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const OutputGroup& group) {
      return group.dims == output.shape->dimensions();
    });
    if (it == groups.end()) {
      OutputGroup group;
      group.dims = output.shape->dimensions();
      group.count = ElementCount(*output.shape);
      groups.push_back(std::move(group));
      it = groups.end() - 1;
    }
    it->outputs.push_back(&output);
  }
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [](const OutputGroup& g) { return g.count == 0; }),
               groups.end());
  for (OutputGroup& group : groups) {
    for (const codegen::KernelOutput* output : group.outputs) {
      absl::StatusOr<ElementGenerator> g =
          codegen::KernelOutputGenerator(*state.fused, &b, *output);
      if (!g.ok()) return g.status();
      group.generators.push_back(*std::move(g));
    }
  }
  int64_t primary = 0;
  for (const OutputGroup& group : groups) primary = std::max(primary, group.count);
  EmittedGpuKernel& result = state.result;
  result.strategy = "loop";
  if (primary == 0) {
    result.launch.grid[0] = 0;  // Nothing to compute: no launch.
    return absl::OkStatus();
  }
  const int64_t width = ChooseVectorWidth(groups, state.outputs);
  result.vector_width = width;
  if (width > 1) result.strategy = "loop-vectorized";
  const int64_t items = primary / width;
  const int64_t threads = std::min<int64_t>(256, (items + 31) / 32 * 32);
  const int64_t blocks = GridBlocks(*state.target, items, threads);
  result.launch.block[0] = threads;
  result.launch.grid[0] = blocks;
  const int64_t total = threads * blocks;
  const bool grid_stride = total < items;
  // 32-bit index arithmetic when no index (nor index + stride) can overflow.
  const bool narrow = primary + total * width < (int64_t{1} << 31);
  llvm::Type* index_type = narrow ? b.getInt32Ty() : b.getInt64Ty();
  auto constant = [&](int64_t v) { return llvm::ConstantInt::get(index_type, v); };
  auto widen = [&](llvm::Value* v) { return narrow ? v : ToIndex(b, v); };
  llvm::Value* block_id = widen(ReadSpecialRegister(b, SpecialRegister::kBlockIdX));
  llvm::Value* thread_id = widen(ReadSpecialRegister(b, SpecialRegister::kThreadIdX));
  llvm::Value* item = b.CreateAdd(b.CreateMul(block_id, constant(threads), "", true, true),
                                  thread_id, "item", true, true);

  for (const OutputGroup& group : groups) {
    const int64_t group_items = group.count / width;
    auto body = [&](llvm::Value* item_iv) -> absl::Status {
      llvm::Value* base = b.CreateMul(item_iv, constant(width), "base", true, true);
      llvm::Value* base64 = ToIndex(b, base);
      IrIndex first = e.Delinearize(base64, group.dims);
      std::vector<std::vector<llvm::Value*>> values(width);
      for (int64_t k = 0; k < width; ++k) {
        IrIndex index = first;
        if (k > 0) {
          index.dims.back() = b.CreateAdd(first.dims.back(), e.Int64(k), "", true, true);
          index.linear = b.CreateAdd(base64, e.Int64(k), "", true, true);
        }
        for (size_t i = 0; i < group.outputs.size(); ++i) {
          absl::StatusOr<llvm::Value*> value = group.generators[i](index);
          if (!value.ok()) return value.status();
          values[k].push_back(*value);
        }
      }
      // Stores last, grouped per output, so each output's are adjacent.
      for (size_t i = 0; i < group.outputs.size(); ++i) {
        for (int64_t k = 0; k < width; ++k) {
          IrIndex index{{}, b.CreateAdd(base64, e.Int64(k), "", true, true)};
          absl::Status stored = e.EmitArrayStore(group.outputs[i]->buffer, *group.outputs[i]->shape,
                                                 index, values[k][i]);
          if (!stored.ok()) return stored;
        }
      }
      return absl::OkStatus();
    };
    absl::Status status;
    if (grid_stride) {
      status = EmitStridedLoop(e, "grid", item, constant(group_items), constant(total), body);
    } else if (group_items == total) {
      e.PushCacheScope();
      status = body(item);
      e.PopCacheScope();
    } else {
      status = e.EmitIf(b.CreateICmpSLT(item, constant(group_items)), [&] { return body(item); });
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace gpu
}  // namespace hloc
