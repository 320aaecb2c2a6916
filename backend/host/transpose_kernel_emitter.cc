// Tiled transpose kernels for the host (see kernel_emitter.h).
//
// A loop kernel visits output elements in row-major order. When the output
// is a transpose that moves the input's minor dimension, consecutive output
// elements read input elements a whole input row apart: every element
// touches a new cache line (and, for large arrays, a new page), and with
// power-of-two row pitches those lines fall into a few cache sets and are
// evicted before their neighbours are read. This strategy works on square
// tiles of the two dimensions involved instead:
//
//     a: the output's minor dimension (writes are contiguous along it)
//     q: the output dimension that holds the input's minor dimension
//        (reads are contiguous along it)
//
//     phase 1: for each a in the tile, for each q: tile[q][a] = operand at
//              the input index (T contiguous reads per input row)
//     phase 2: for each q in the tile, for each a: every output at its
//              index, the transpose read from tile[q][a] (T contiguous
//              writes per output row)
//
// The tile (T x T elements, 16 KiB at most) lives on the stack and stays in
// L1 between the phases. Every other output dimension indexes tiles one by
// one. A work item is one tile; the runtime hands ranges of tiles to its
// threads as it hands elements of a loop kernel to them. Full tiles run
// loops of constant trip count (LLVM unrolls them); tiles cut by the
// array's edge run the same loops to their extents.
//
// The transpose's operand is any generator, so elementwise producers are
// computed in phase 1 at the input index; outputs may be elementwise
// consumers of the transpose at their own index (and read other operands
// there), computed in phase 2. Each output element is still computed
// independently, so results do not depend on the visiting order.
//
// Not tiled (left to the loop kernel): transposes that keep the minor
// dimension, those with q or a shorter than kMinTiledDim (the loop then
// reads few input streams at once), and those where q is the dimension just
// before a and a is at most kMaxLoopRow long: consecutive output rows of the
// loop kernel then read neighbouring elements of the same few hundred input
// lines, which stay cached (NCHW -> NHWC with C <= 256 runs as fast as a
// copy that way). Dimensions of size 1 are ignored throughout, so
// [n, m, 1] -> [1, m, n] tiles like the 2-D transpose it is.
#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "backend/host/kernel_emitter_internal.h"
#include "hlo/primitive_type.h"

namespace hloc {
namespace host {
namespace {

using codegen::ElementGenerator;
using codegen::IrIndex;

// Below this many elements along q or a the loop kernel reads few enough
// input streams at once that the hardware prefetchers keep up.
constexpr int64_t kMinTiledDim = 16;
// The longest output row (along a) the loop kernel handles as well as the
// tiles when q is the dimension just before a (see the top of the file).
constexpr int64_t kMaxLoopRow = 256;

// Tile edge in elements: 64 (a tile row of 64 to 256 bytes); 32 for 8- and
// 16-byte types, so the tile stays within 16 KiB. On f32[4096,4096] (one
// thread, host_benchmark --transpose) 64 x 64 tiles ran about 2.5 times as
// fast as 32 x 32.
int64_t TileEdge(PrimitiveType type) { return ByteWidth(type) >= 8 ? 32 : 64; }

// Whether outputs read a candidate transpose only at their own index.
class HeroUses {
 public:
  explicit HeroUses(const HloInstruction* hero) : hero_(hero) {}

  bool ReadsHero(const HloInstruction* hlo) {
    if (hlo == hero_) return true;
    auto it = reads_.find(hlo);
    if (it != reads_.end()) return it->second;
    bool reads = false;
    for (const HloInstruction* operand : hlo->operands()) {
      if (ReadsHero(operand)) {
        reads = true;
        break;
      }
    }
    reads_[hlo] = reads;
    return reads;
  }

  // `hlo` (of dimensions `dims`) reads the hero, if at all, through
  // elementwise ops of the same dimensions only.
  bool ElementwiseOver(const HloInstruction* hlo, const std::vector<int64_t>& dims) {
    if (hlo == hero_ || !ReadsHero(hlo)) return true;
    auto it = elementwise_.find(hlo);
    if (it != elementwise_.end()) return it->second;
    bool elementwise = hlo->IsElementwise() && hlo->shape().IsArray() &&
                       hlo->shape().dimensions() == dims;
    for (const HloInstruction* operand : hlo->operands()) {
      if (!elementwise) break;
      elementwise = ElementwiseOver(operand, dims);
    }
    elementwise_[hlo] = elementwise;
    return elementwise;
  }

 private:
  const HloInstruction* hero_;
  absl::flat_hash_map<const HloInstruction*, bool> reads_;
  absl::flat_hash_map<const HloInstruction*, bool> elementwise_;  // For one `dims`.
};

// The tiled dimensions of a transpose: q (the output dimension holding the
// input's last dimension of size > 1) and a (the output's last dimension of
// size > 1). Nullopt when the loop kernel does as well (see the top).
std::optional<std::pair<int64_t, int64_t>> TiledDimensions(const HloInstruction& transpose) {
  const std::vector<int64_t>& perm = transpose.dimensions();
  const std::vector<int64_t>& out = transpose.shape().dimensions();
  const std::vector<int64_t>& in = transpose.operand(0)->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(out.size());
  if (rank < 2 || static_cast<int64_t>(perm.size()) != rank ||
      static_cast<int64_t>(in.size()) != rank) {
    return std::nullopt;
  }
  int64_t in_minor = rank - 1;
  while (in_minor >= 0 && in[in_minor] <= 1) --in_minor;
  int64_t a = rank - 1;
  while (a >= 0 && out[a] <= 1) --a;
  if (in_minor < 0 || a < 0) return std::nullopt;
  const auto it = std::find(perm.begin(), perm.end(), in_minor);
  if (it == perm.end()) return std::nullopt;
  const int64_t q = it - perm.begin();
  if (q == a || out[q] < kMinTiledDim || out[a] < kMinTiledDim) return std::nullopt;
  int64_t before_a = a - 1;
  while (before_a >= 0 && out[before_a] <= 1) --before_a;
  if (q == before_a && out[a] <= kMaxLoopRow) return std::nullopt;
  return std::make_pair(q, a);
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> TryEmitTransposeKernel(KernelState& state) {
  if (state.outputs.empty()) return std::optional<int64_t>();
  const std::vector<int64_t>& dims = state.outputs[0].shape->dimensions();
  for (const KernelOutput& output : state.outputs) {
    if (output.shape->dimensions() != dims) return std::optional<int64_t>();
  }
  // Candidate heroes: transposes with the outputs' dimensions, in
  // depth-first order from the outputs.
  std::vector<const HloInstruction*> candidates;
  {
    absl::flat_hash_map<const HloInstruction*, bool> seen;
    std::vector<const HloInstruction*> stack;
    for (const KernelOutput& output : state.outputs) stack.push_back(output.producer);
    while (!stack.empty()) {
      const HloInstruction* hlo = stack.back();
      stack.pop_back();
      if (seen[hlo]) continue;
      seen[hlo] = true;
      if (hlo->opcode() == HloOpcode::kTranspose && hlo->shape().IsArray() &&
          hlo->shape().dimensions() == dims) {
        candidates.push_back(hlo);
      }
      for (const HloInstruction* operand : hlo->operands()) stack.push_back(operand);
    }
  }
  const HloInstruction* hero = nullptr;
  int64_t q = -1, a = -1;
  for (const HloInstruction* candidate : candidates) {
    std::optional<std::pair<int64_t, int64_t>> tiled = TiledDimensions(*candidate);
    if (!tiled.has_value()) continue;
    HeroUses uses(candidate);
    bool all = true;
    for (const KernelOutput& output : state.outputs) {
      all = all && uses.ElementwiseOver(output.producer, dims);
    }
    if (all) {
      hero = candidate;
      std::tie(q, a) = *tiled;
      break;
    }
  }
  if (hero == nullptr) return std::optional<int64_t>();

  codegen::ElementalIrEmitter& e = *state.elemental;
  llvm::IRBuilder<>& b = *state.b;
  const int64_t tile = TileEdge(hero->shape().element_type());
  const int64_t rank = static_cast<int64_t>(dims.size());
  const std::vector<int64_t>& perm = hero->dimensions();
  absl::StatusOr<llvm::Type*> type = e.ValueType(hero->shape().element_type());
  if (!type.ok()) return type.status();
  absl::StatusOr<ElementGenerator> operand = state.fused->GetGenerator(*hero->operand(0));
  if (!operand.ok()) return operand.status();
  llvm::AllocaInst* buffer = e.EntryAlloca(*type, "tile", e.Int64(tile * tile));
  llvm::Value* q0 = nullptr;  // The current tile's first q and a.
  llvm::Value* a0 = nullptr;
  // Tile element (i, j): q0 + i along q, a0 + j along a.
  auto slot = [&](llvm::Value* i, llvm::Value* j) {
    llvm::Value* offset =
        b.CreateAdd(b.CreateMul(i, e.Int64(tile), "", true, true), j, "slot", true, true);
    return b.CreateInBoundsGEP(*type, buffer, offset);
  };
  // The outputs read the transpose only at their own index, which lies in
  // the current tile.
  state.fused->OverrideGenerator(*hero, [&](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    llvm::Value* i = b.CreateSub(index.dims[q], q0, "", true, true);
    llvm::Value* j = b.CreateSub(index.dims[a], a0, "", true, true);
    return b.CreateLoad(*type, slot(i, j));
  });
  std::vector<ElementGenerator> generators;
  for (const KernelOutput& output : state.outputs) {
    absl::StatusOr<ElementGenerator> g = OutputGenerator(state, output);
    if (!g.ok()) return g.status();
    generators.push_back(*std::move(g));
  }
  std::vector<int64_t> tile_grid;
  int64_t tiles = 1;
  for (int64_t d = 0; d < rank; ++d) {
    tile_grid.push_back(d == q || d == a ? (dims[d] + tile - 1) / tile : dims[d]);
    tiles *= tile_grid.back();
  }
  if (tiles == 0) return std::make_optional(int64_t{0});

  // Elements [0, n) of the tile along dimension d from `start`.
  auto extent = [&](int64_t d, llvm::Value* start) {
    llvm::Value* left = b.CreateSub(e.Int64(dims[d]), start);
    return b.CreateSelect(b.CreateICmpSLT(left, e.Int64(tile)), left, e.Int64(tile));
  };
  absl::Status status =
      e.EmitLoop("tile", state.begin, state.end, [&](llvm::Value* t) -> absl::Status {
        IrIndex tile_index = e.Delinearize(t, tile_grid);
        q0 = b.CreateMul(tile_index.dims[q], e.Int64(tile), "q0", true, true);
        a0 = b.CreateMul(tile_index.dims[a], e.Int64(tile), "a0", true, true);
        auto phases = [&](llvm::Value* q_count, llvm::Value* a_count) -> absl::Status {
          absl::Status read = e.EmitLoop(
              "read_a", e.Int64(0), a_count, [&](llvm::Value* j) -> absl::Status {
                return e.EmitLoop(
                    "read_q", e.Int64(0), q_count, [&](llvm::Value* i) -> absl::Status {
                      IrIndex in;
                      in.dims.resize(rank);
                      for (int64_t d = 0; d < rank; ++d) in.dims[perm[d]] = tile_index.dims[d];
                      in.dims[perm[q]] = b.CreateAdd(q0, i, "", true, true);
                      in.dims[perm[a]] = b.CreateAdd(a0, j, "", true, true);
                      absl::StatusOr<llvm::Value*> v = (*operand)(in);
                      if (!v.ok()) return v.status();
                      b.CreateStore(*v, slot(i, j));
                      return absl::OkStatus();
                    });
              });
          if (!read.ok()) return read;
          return e.EmitLoop("write_q", e.Int64(0), q_count, [&](llvm::Value* i) -> absl::Status {
            llvm::Value* q_index = b.CreateAdd(q0, i, "q_index", true, true);
            return e.EmitLoop("write_a", e.Int64(0), a_count, [&](llvm::Value* j) -> absl::Status {
              IrIndex index;
              index.dims = tile_index.dims;
              index.dims[q] = q_index;
              index.dims[a] = b.CreateAdd(a0, j, "a_index", true, true);
              for (size_t k = 0; k < generators.size(); ++k) {
                absl::StatusOr<llvm::Value*> value = generators[k](index);
                if (!value.ok()) return value.status();
                absl::Status stored = e.EmitArrayStore(state.outputs[k].buffer,
                                                       *state.outputs[k].shape, index, *value);
                if (!stored.ok()) return stored;
              }
              return absl::OkStatus();
            });
          });
        };
        if (dims[q] % tile == 0 && dims[a] % tile == 0) return phases(e.Int64(tile), e.Int64(tile));
        llvm::Value* q_count = extent(q, q0);
        llvm::Value* a_count = extent(a, a0);
        llvm::Value* full = b.CreateAnd(b.CreateICmpEQ(q_count, e.Int64(tile)),
                                        b.CreateICmpEQ(a_count, e.Int64(tile)));
        absl::Status status =
            e.EmitIf(full, [&] { return phases(e.Int64(tile), e.Int64(tile)); });
        if (!status.ok()) return status;
        return e.EmitIf(b.CreateNot(full), [&] { return phases(q_count, a_count); });
      });
  if (!status.ok()) return status;
  return std::make_optional(tiles);
}

}  // namespace host
}  // namespace hloc
