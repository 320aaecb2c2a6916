// Transpose kernels (see gpu_kernel_emitter.h).
//
// A transpose that moves the minor dimension reads memory along one
// dimension and writes along another; one thread per output element would
// read with a stride. Here the output is cut into 32 x 32 tiles of the two
// dimensions involved, the output's minor dimension `a` and the dimension
// `q` that is the input's minor one:
//
//     phase 1: lane x reads input minor index q0 + x (coalesced) for rows
//              a0 + y, a0 + y + 8, ...; tile[a][q] in shared memory
//     bar.sync
//     phase 2: lane x writes output minor index a0 + x (coalesced) for rows
//              q0 + y, ...; reads tile[x][q] (one padding column keeps the
//              column read free of bank conflicts)
//
// The transpose's operand is any generator (elementwise producers fused in
// are computed in phase 1); outputs may be elementwise consumers of the
// transpose at the same index (computed in phase 2).
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"

namespace hloc {
namespace gpu {
namespace {

using codegen::ElementGenerator;
using codegen::IrIndex;

constexpr int64_t kTile = 32;
constexpr int64_t kBlockRows = 8;
constexpr int64_t kMinTiledDim = 16;

class Uses {
 public:
  explicit Uses(const HloInstruction* hero) : hero_(hero) {}
  bool Depends(const HloInstruction* hlo) {
    if (hlo == hero_) return true;
    auto it = depends_.find(hlo);
    if (it != depends_.end()) return it->second;
    bool found = false;
    for (const HloInstruction* operand : hlo->operands()) {
      if (Depends(operand)) {
        found = true;
        break;
      }
    }
    depends_[hlo] = found;
    return found;
  }
  // `hlo` reads the hero only at its own index through elementwise ops.
  bool ElementwiseOver(const HloInstruction* hlo, const std::vector<int64_t>& dims) {
    if (hlo == hero_ || !Depends(hlo)) return true;
    if (!hlo->IsElementwise() || !hlo->shape().IsArray() ||
        hlo->shape().dimensions() != dims) {
      return false;
    }
    for (const HloInstruction* operand : hlo->operands()) {
      if (!operand->shape().IsArray() || operand->shape().dimensions() != dims) {
        if (Depends(operand)) return false;  // A broadcast of the transpose.
        continue;
      }
      if (!ElementwiseOver(operand, dims)) return false;
    }
    return true;
  }

 private:
  const HloInstruction* hero_;
  absl::flat_hash_map<const HloInstruction*, bool> depends_;
};

// The output dimension holding the input's minor dimension, or -1 when the
// transpose keeps the minor dimension in place (no tiling needed).
int64_t InputMinorInOutput(const HloInstruction& transpose) {
  const std::vector<int64_t>& perm = transpose.dimensions();
  const int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2 || perm.back() == rank - 1) return -1;
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] == rank - 1) return i;
  }
  return -1;
}

}  // namespace

absl::StatusOr<bool> TryEmitTransposeKernel(GpuKernelState& state) {
  if (state.outputs.empty()) return false;
  const std::vector<int64_t>& dims = state.outputs[0].shape->dimensions();
  for (const codegen::KernelOutput& output : state.outputs) {
    if (output.shape->dimensions() != dims || output.struct_field.has_value()) return false;
  }
  // The hero: a transpose of the outputs' dimensions every output is
  // elementwise over.
  const HloInstruction* hero = nullptr;
  int64_t q = -1;
  std::vector<const HloInstruction*> stack;
  absl::flat_hash_map<const HloInstruction*, bool> seen;
  for (const codegen::KernelOutput& output : state.outputs) stack.push_back(output.producer);
  std::vector<const HloInstruction*> candidates;
  while (!stack.empty()) {
    const HloInstruction* hlo = stack.back();
    stack.pop_back();
    if (seen[hlo]) continue;
    seen[hlo] = true;
    if (hlo->opcode() == HloOpcode::kTranspose && hlo->shape().dimensions() == dims) {
      candidates.push_back(hlo);
    }
    for (const HloInstruction* operand : hlo->operands()) stack.push_back(operand);
  }
  for (const HloInstruction* candidate : candidates) {
    const int64_t minor = InputMinorInOutput(*candidate);
    if (minor < 0 || dims[minor] < kMinTiledDim || dims.back() < kMinTiledDim) continue;
    Uses uses(candidate);
    bool all = true;
    for (const codegen::KernelOutput& output : state.outputs) {
      all = all && uses.ElementwiseOver(output.producer, dims);
    }
    if (all) {
      hero = candidate;
      q = minor;
      break;
    }
  }
  if (hero == nullptr) return false;

  codegen::ElementalIrEmitter& e = *state.elemental;
  llvm::IRBuilder<>& b = *state.b;
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t a = rank - 1;
  const std::vector<int64_t>& perm = hero->dimensions();
  absl::StatusOr<llvm::Type*> type = e.ValueType(hero->shape().element_type());
  if (!type.ok()) return type.status();
  absl::StatusOr<ElementGenerator> operand = state.fused->GetGenerator(*hero->operand(0));
  if (!operand.ok()) return operand.status();
  llvm::AllocaInst* transposed = e.EntryAlloca(*type, "transposed");
  state.fused->OverrideGenerator(*hero, [&b, type = *type, transposed](const IrIndex&) {
    return absl::StatusOr<llvm::Value*>(b.CreateLoad(type, transposed));
  });
  std::vector<ElementGenerator> generators;
  for (const codegen::KernelOutput& output : state.outputs) {
    absl::StatusOr<ElementGenerator> g = codegen::KernelOutputGenerator(*state.fused, &b, output);
    if (!g.ok()) return g.status();
    generators.push_back(*std::move(g));
  }

  // Tiles: every output dimension except q and a, then q's and a's tiles.
  std::vector<int64_t> tile_grid;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == q || d == a) {
      tile_grid.push_back((dims[d] + kTile - 1) / kTile);
    } else {
      tile_grid.push_back(dims[d]);
    }
  }
  int64_t tiles = 1;
  for (int64_t t : tile_grid) tiles *= t;
  const int64_t blocks = GridBlocks(*state.target, tiles, 1);
  EmittedGpuKernel& result = state.result;
  result.strategy = "transpose";
  result.launch.block[0] = kTile;
  result.launch.block[1] = kBlockRows;
  result.launch.grid[0] = blocks;
  llvm::GlobalVariable* tile_array =
      AddSharedArray(e.module(), llvm::ArrayType::get(*type, kTile + 1), kTile,
                     absl::StrCat("tile.", hero->name()));

  llvm::Value* x32 = ReadSpecialRegister(b, SpecialRegister::kThreadIdX);
  llvm::Value* y32 = ReadSpecialRegister(b, SpecialRegister::kThreadIdY);
  llvm::Value* x = ToIndex(b, x32);
  llvm::Value* y = ToIndex(b, y32);
  llvm::Value* block = ToIndex(b, ReadSpecialRegister(b, SpecialRegister::kBlockIdX));
  auto tile_slot = [&](llvm::Value* row, llvm::Value* column) {
    return b.CreateInBoundsGEP(tile_array->getValueType(), tile_array, {e.Int64(0), row, column});
  };

  absl::Status status = EmitStridedLoop(
      e, "tile", block, e.Int64(tiles), e.Int64(blocks), [&](llvm::Value* tile) -> absl::Status {
        IrIndex tile_index = e.Delinearize(tile, tile_grid);
        llvm::Value* q0 = b.CreateMul(tile_index.dims[q], e.Int64(kTile));
        llvm::Value* a0 = b.CreateMul(tile_index.dims[a], e.Int64(kTile));
        // The output index with q and a set.
        auto output_index = [&](llvm::Value* q_index, llvm::Value* a_index) {
          IrIndex index;
          index.dims = tile_index.dims;
          index.dims[q] = q_index;
          index.dims[a] = a_index;
          return index;
        };
        auto in_bounds = [&](llvm::Value* q_index, llvm::Value* a_index) {
          return b.CreateAnd(b.CreateICmpSLT(q_index, e.Int64(dims[q])),
                             b.CreateICmpSLT(a_index, e.Int64(dims[a])));
        };
        // Phase 1: read along q (the input's minor dimension).
        for (int64_t j = 0; j < kTile; j += kBlockRows) {
          llvm::Value* a_local = b.CreateAdd(y, e.Int64(j));
          llvm::Value* q_index = b.CreateAdd(q0, x);
          llvm::Value* a_index = b.CreateAdd(a0, a_local);
          absl::Status status = e.EmitIf(in_bounds(q_index, a_index), [&]() -> absl::Status {
            IrIndex out = output_index(q_index, a_index);
            IrIndex in;
            in.dims.resize(rank);
            for (int64_t i = 0; i < rank; ++i) in.dims[perm[i]] = out.dims[i];
            absl::StatusOr<llvm::Value*> value = (*operand)(in);
            if (!value.ok()) return value.status();
            b.CreateStore(*value, tile_slot(a_local, x));
            return absl::OkStatus();
          });
          if (!status.ok()) return status;
        }
        EmitBarrier(b);
        // Phase 2: write along a (the output's minor dimension).
        for (int64_t j = 0; j < kTile; j += kBlockRows) {
          llvm::Value* q_local = b.CreateAdd(y, e.Int64(j));
          llvm::Value* q_index = b.CreateAdd(q0, q_local);
          llvm::Value* a_index = b.CreateAdd(a0, x);
          absl::Status status = e.EmitIf(in_bounds(q_index, a_index), [&]() -> absl::Status {
            b.CreateStore(b.CreateLoad(*type, tile_slot(x, q_local)), transposed);
            IrIndex out = output_index(q_index, a_index);
            for (size_t k = 0; k < state.outputs.size(); ++k) {
              absl::StatusOr<llvm::Value*> value = generators[k](out);
              if (!value.ok()) return value.status();
              absl::Status stored =
                  e.EmitArrayStore(state.outputs[k].buffer, *state.outputs[k].shape, out, *value);
              if (!stored.ok()) return stored;
            }
            return absl::OkStatus();
          });
          if (!status.ok()) return status;
        }
        // The tile is rewritten by the next iteration.
        EmitBarrier(b);
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return true;
}

}  // namespace gpu
}  // namespace hloc
