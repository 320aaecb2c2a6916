// The SPMD partitioner's per-op rules (see spmd_rules.h and the table in
// spmd_partitioner.h).
#include "passes/sharding/spmd_rules.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "hlo/computation.h"

namespace hloc {
namespace {

bool IsElementwise(const HloInstruction& hlo) {
  if (!hlo.IsElementwise()) return false;
  if (!hlo.shape().IsArray()) return false;
  for (const HloInstruction* operand : hlo.operands()) {
    if (!operand->shape().IsArray() || !operand->shape().SameDimensions(hlo.shape())) return false;
  }
  return true;
}

std::vector<int64_t> Iota(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

bool Increasing(const std::vector<int64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] <= v[i - 1]) return false;
  }
  return true;
}

// Reshape: per operand dimension, the result dimension that carries its
// split, or -1. Dimensions correspond when the products of the dimensions
// before them are equal and they are the same size, or the operand dimension
// splits into result dimensions whose major-most is the result's, or the
// result dimension merges it with more minor ones. A split of the major-most
// dimension of such a group stays a block split (f32[16] in 2 blocks ->
// f32[4,4] in 2 row blocks: elements 0-7 are rows 0-1) as long as the tile
// count divides it.
std::vector<int64_t> ReshapeDimMap(const Shape& from, const Shape& to) {
  std::vector<int64_t> map(from.rank(), -1);
  // Products of the dimensions before each (prefix[rank] is the total).
  auto prefix = [](const Shape& s) {
    std::vector<int64_t> p(s.rank() + 1, 1);
    for (int64_t d = 0; d < s.rank(); ++d) p[d + 1] = p[d] * s.dimensions(d);
    return p;
  };
  const std::vector<int64_t> pf = prefix(from), pt = prefix(to);
  for (int64_t i = 0; i < from.rank(); ++i) {
    int64_t group = -1;
    for (int64_t j = 0; j < to.rank(); ++j) {
      if (pt[j] != pf[i]) continue;
      if (to.dimensions(j) == from.dimensions(i)) {
        map[i] = j;
        break;
      }
      if (group >= 0 || to.dimensions(j) == 1) continue;
      // Split: from[i] is to[j..k]; merge: to[j] is from[i..k].
      for (int64_t k = j + 1; k <= to.rank() && group < 0; ++k) {
        if (pt[k] == pf[i + 1]) group = j;
      }
      for (int64_t k = i + 1; k <= from.rank() && group < 0; ++k) {
        if (pf[k] == pt[j + 1]) group = j;
      }
    }
    if (map[i] < 0) map[i] = group;
  }
  return map;
}

// A sharding of rank `rank` whose dimension k is `src`'s dimension
// `axis_of[k]` (-1: untiled); nullopt where a tiled dimension of `src` has
// no place. Tiled dimensions must keep their order (reshape maps do).
std::optional<TileSharding> Remap(const TileSharding& src, const std::vector<int64_t>& axis_of,
                                  int64_t rank) {
  TileArray array;
  int64_t placed = 1;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t t = axis_of[k] < 0 ? 1 : src.tiles(axis_of[k]);
    array.dims.push_back(t);
    placed *= t;
  }
  if (placed != src.TileCount()) return std::nullopt;
  array.dims.push_back(src.replicas());
  array.devices = src.array().devices;
  return TileSharding::Of(std::move(array));
}

std::optional<TileSharding> ReshapeForward(const HloInstruction& hlo, const TileSharding& in) {
  const Shape& from = hlo.operand(0)->shape();
  const std::vector<int64_t> map = ReshapeDimMap(from, hlo.shape());
  std::vector<int64_t> axis_of(hlo.shape().rank(), -1);
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (map[i] < 0 || in.tiles(i) == 1) continue;
    if (hlo.shape().dimensions(map[i]) % in.tiles(i) != 0) return std::nullopt;
    axis_of[map[i]] = i;
  }
  return Remap(in, axis_of, hlo.shape().rank());
}

std::optional<TileSharding> ReshapeBackward(const HloInstruction& hlo, const TileSharding& out) {
  const Shape& from = hlo.operand(0)->shape();
  const std::vector<int64_t> map = ReshapeDimMap(from, hlo.shape());
  std::vector<int64_t> axis_of(map.size(), -1);
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0 || out.tiles(map[i]) == 1) continue;
    if (from.dimensions(i) % out.tiles(map[i]) != 0) return std::nullopt;
    axis_of[i] = map[i];
  }
  return Remap(out, axis_of, static_cast<int64_t>(map.size()));
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) inv[perm[j]] = static_cast<int64_t>(j);
  return inv;
}

// The reducer's combiner when `init` is its identity: add 0, multiply 1,
// maximum -inf (or the type's lowest), minimum +inf (or highest), and true
// or false for and / or.
bool ReducerWithIdentity(const HloInstruction& reduce) {
  const HloComputation* reducer = reduce.to_apply();
  const HloInstruction* root = reducer->root();
  const HloInstruction* init = reduce.operand(1);
  if (reducer->num_parameters() != 2 || root->operand_count() != 2 ||
      init->opcode() != HloOpcode::kConstant) {
    return false;
  }
  const bool params = root->operand(0)->opcode() == HloOpcode::kParameter &&
                      root->operand(1)->opcode() == HloOpcode::kParameter &&
                      root->operand(0) != root->operand(1);
  if (!params) return false;
  const double v = init->literal().GetAsDouble(0);
  const PrimitiveType type = init->shape().element_type();
  const bool is_pred = type == xla::PRED;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return v == 0;
    case HloOpcode::kMultiply:
      return v == 1;
    case HloOpcode::kMaximum:
      return v == -std::numeric_limits<double>::infinity() ||
             (type == xla::S32 && v == std::numeric_limits<int32_t>::min());
    case HloOpcode::kMinimum:
      return v == std::numeric_limits<double>::infinity() ||
             (type == xla::S32 && v == std::numeric_limits<int32_t>::max());
    case HloOpcode::kAnd:
      return is_pred && v == 1;
    case HloOpcode::kOr:
      return is_pred && v == 0;
    default:
      return false;
  }
}

std::optional<SpmdPlan> PlanReduce(const HloInstruction& hlo, const TileSharding& in) {
  if (hlo.operand_count() != 2 || !hlo.shape().IsArray()) return std::nullopt;
  const std::vector<int64_t>& reduced = hlo.dimensions();
  std::vector<int64_t> kept, tiled_reduced;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const bool r = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (!r) kept.push_back(d);
    if (r && in.tiles(d) > 1) tiled_reduced.push_back(d);
  }
  SpmdPlan plan;
  plan.partitioned = true;
  if (!tiled_reduced.empty()) {
    if (!ReducerWithIdentity(hlo)) return std::nullopt;
    plan.all_reduce_groups = in.array().GroupsAlong(tiled_reduced);
    plan.reducer = hlo.to_apply();
  }
  plan.operands = {in, TileSharding::Replicated(0, in.device_count())};
  plan.result = TileSharding::Project(in.array(), kept);
  return plan;
}

// Dot: the loop space has axes [output dims (batch, lhs free, rhs free),
// contracting dims, replicas]; each operand is the loop array read along its
// own dimensions.
struct DotSpace {
  std::vector<int64_t> lhs_axis, rhs_axis;  // Per operand dimension, its loop axis.
  int64_t out_rank = 0, contracting = 0;
};

DotSpace DotSpaceOf(const HloInstruction& hlo) {
  const xla::DotDimensionNumbers& dn = *hlo.attrs().dot_dimension_numbers;
  const Shape& l = hlo.operand(0)->shape();
  const Shape& r = hlo.operand(1)->shape();
  DotSpace s;
  s.lhs_axis.assign(l.rank(), -1);
  s.rhs_axis.assign(r.rank(), -1);
  const int64_t batch = dn.lhs_batch_dimensions_size();
  for (int64_t k = 0; k < batch; ++k) {
    s.lhs_axis[dn.lhs_batch_dimensions(k)] = k;
    s.rhs_axis[dn.rhs_batch_dimensions(k)] = k;
  }
  const int64_t lhs_free = l.rank() - batch - dn.lhs_contracting_dimensions_size();
  const int64_t rhs_free = r.rank() - batch - dn.rhs_contracting_dimensions_size();
  s.out_rank = batch + lhs_free + rhs_free;
  s.contracting = dn.lhs_contracting_dimensions_size();
  for (int64_t k = 0; k < s.contracting; ++k) {
    s.lhs_axis[dn.lhs_contracting_dimensions(k)] = s.out_rank + k;
    s.rhs_axis[dn.rhs_contracting_dimensions(k)] = s.out_rank + k;
  }
  int64_t next = batch;
  for (auto& a : s.lhs_axis) {
    if (a < 0) a = next++;
  }
  for (auto& a : s.rhs_axis) {
    if (a < 0) a = next++;
  }
  return s;
}

// The loop array an operand's sharding gives (axes it lacks get one tile).
TileArray LoopFromOperand(const DotSpace& s, const std::vector<int64_t>& operand_axis,
                          const TileSharding& sharding) {
  const int64_t loop_rank = s.out_rank + s.contracting;
  // Order the operand's axes by their loop axis; then insert unit axes.
  std::vector<int64_t> order = Iota(sharding.rank());
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return operand_axis[a] < operand_axis[b]; });
  order.push_back(sharding.rank());  // Replicas last.
  const TileArray moved = sharding.array().Transpose(order);
  TileArray loop;
  loop.dims.assign(loop_rank + 1, 1);
  for (int64_t d = 0; d < sharding.rank(); ++d) loop.dims[operand_axis[d]] = sharding.tiles(d);
  loop.dims[loop_rank] = sharding.replicas();
  loop.devices = moved.devices;
  return loop;
}

TileArray LoopFromResult(const DotSpace& s, const TileSharding& result) {
  TileArray loop;
  loop.dims.assign(result.array().dims.begin(), result.array().dims.end() - 1);
  loop.dims.resize(s.out_rank + s.contracting, 1);
  loop.dims.push_back(result.replicas());
  loop.devices = result.array().devices;
  return loop;
}

SpmdPlan PlanDotWithLoop(const DotSpace& s, const TileArray& loop) {
  SpmdPlan plan;
  plan.partitioned = true;
  plan.operands = {TileSharding::Project(loop, s.lhs_axis),
                   TileSharding::Project(loop, s.rhs_axis)};
  plan.result = TileSharding::Project(loop, Iota(s.out_rank));
  std::vector<int64_t> tiled_contracting;
  for (int64_t k = 0; k < s.contracting; ++k) {
    if (loop.dims[s.out_rank + k] > 1) tiled_contracting.push_back(s.out_rank + k);
  }
  if (!tiled_contracting.empty()) plan.all_reduce_groups = loop.GroupsAlong(tiled_contracting);
  return plan;
}

// Two loop arrays over the same axes, each splitting axes the other leaves
// whole (x split by mesh axis "a" on its rows, w by "b" on its columns): one
// array splitting both, where every device lies in the block of each that
// its own blocks say. nullopt where they do not fit together.
std::optional<TileArray> MergeLoops(const TileArray& l, const TileArray& r) {
  const size_t axes = l.dims.size() - 1;  // Without the replicas.
  const int64_t n = static_cast<int64_t>(l.devices.size());
  std::vector<int64_t> dims(axes);
  int64_t tiles = 1;
  for (size_t k = 0; k < axes; ++k) {
    if (l.dims[k] > 1 && r.dims[k] > 1 && l.dims[k] != r.dims[k]) return std::nullopt;
    dims[k] = std::max(l.dims[k], r.dims[k]);
    tiles *= dims[k];
  }
  if (n % tiles != 0) return std::nullopt;
  const auto lc = l.CoordinatesByDevice(), rc = r.CoordinatesByDevice();
  // Devices per block of the merged array, in device order.
  std::vector<std::vector<int64_t>> blocks(tiles);
  for (int64_t d = 0; d < n; ++d) {
    int64_t block = 0;
    for (size_t k = 0; k < axes; ++k) {
      if (l.dims[k] > 1 && r.dims[k] > 1 && lc[d][k] != rc[d][k]) return std::nullopt;
      block = block * dims[k] + (l.dims[k] > 1 ? lc[d][k] : rc[d][k]);
    }
    blocks[block].push_back(d);
  }
  TileArray merged;
  merged.dims = dims;
  merged.dims.push_back(n / tiles);
  for (const auto& devices : blocks) {
    if (static_cast<int64_t>(devices.size()) != n / tiles) return std::nullopt;
    merged.devices.insert(merged.devices.end(), devices.begin(), devices.end());
  }
  return merged;
}

std::optional<SpmdPlan> PlanDot(const HloInstruction& hlo,
                                const std::vector<std::optional<TileSharding>>& operands,
                                const std::optional<TileSharding>& preferred) {
  const DotSpace s = DotSpaceOf(hlo);
  std::vector<SpmdPlan> candidates;
  if (operands[0])
    candidates.push_back(PlanDotWithLoop(s, LoopFromOperand(s, s.lhs_axis, *operands[0])));
  if (operands[1])
    candidates.push_back(PlanDotWithLoop(s, LoopFromOperand(s, s.rhs_axis, *operands[1])));
  if (preferred) candidates.push_back(PlanDotWithLoop(s, LoopFromResult(s, *preferred)));
  if (operands[0] && operands[1]) {
    // Both operands as they are, where their splits fit together (2-D meshes).
    std::optional<TileArray> both = MergeLoops(LoopFromOperand(s, s.lhs_axis, *operands[0]),
                                               LoopFromOperand(s, s.rhs_axis, *operands[1]));
    if (both) candidates.push_back(PlanDotWithLoop(s, *both));
  }
  if (candidates.empty()) return std::nullopt;
  // Cheapest: the fewest elements resharded (operands, then the result).
  auto cost = [&](const SpmdPlan& p) {
    int64_t c = 0;
    for (int i = 0; i < 2; ++i) {
      if (operands[i] && *operands[i] != p.operands[i])
        c += hlo.operand(i)->shape().element_count();
    }
    if (preferred && *preferred != p.result) c += hlo.shape().element_count();
    return c;
  };
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (cost(candidates[i]) < cost(candidates[best])) best = i;
  }
  return candidates[best];
}

// Ops whose result dimension d is operand dimension d, changed only along
// some dimensions (slice, pad, reverse, concatenate, sort, reduce-window,
// dynamic-slice, dynamic-update-slice): the dimensions they change, where
// every same-rank operand must be whole; nullopt for other ops. Scalar
// operands (pad values, init values, start indices) are replicated.
std::optional<std::vector<int64_t>> ChangedDims(const HloInstruction& hlo) {
  if (hlo.operand_count() == 0) return std::nullopt;
  const Shape& in = hlo.operand(0)->shape();
  const Shape& out = hlo.shape();
  if (!out.IsArray() || !in.IsArray() || in.rank() != out.rank()) return std::nullopt;
  std::vector<int64_t> changed;
  const HloAttributes& a = hlo.attrs();
  switch (hlo.opcode()) {
    case HloOpcode::kSlice:
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (a.slice_starts[d] != 0 || a.slice_limits[d] != in.dimensions(d) ||
            a.slice_strides[d] != 1) {
          changed.push_back(d);
        }
      }
      return changed;
    case HloOpcode::kPad:
      for (int64_t d = 0; d < in.rank(); ++d) {
        const auto& p = a.padding_config->dimensions(d);
        if (p.edge_padding_low() != 0 || p.edge_padding_high() != 0 || p.interior_padding() != 0) {
          changed.push_back(d);
        }
      }
      return changed;
    case HloOpcode::kReverse:
      return hlo.dimensions();
    case HloOpcode::kConcatenate:
      return hlo.dimensions();
    case HloOpcode::kSort:
      if (hlo.operand_count() != 1) return std::nullopt;
      return hlo.dimensions();
    case HloOpcode::kReduceWindow:
      if (hlo.operand_count() != 2) return std::nullopt;
      for (int64_t d = 0; d < in.rank(); ++d) {
        const auto& w = a.window->dimensions(d);
        if (w.size() != 1 || w.stride() != 1 || w.padding_low() != 0 || w.padding_high() != 0 ||
            w.window_dilation() > 1 || w.base_dilation() > 1 || w.window_reversal()) {
          changed.push_back(d);
        }
      }
      return changed;
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice: {
      const Shape& piece = hlo.opcode() == HloOpcode::kDynamicSlice ? out : hlo.operand(1)->shape();
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (piece.dimensions(d) != in.dimensions(d)) changed.push_back(d);
      }
      return changed;
    }
    default:
      return std::nullopt;
  }
}

std::optional<SpmdPlan> PlanDimensionWise(const HloInstruction& hlo,
                                          const std::vector<int64_t>& changed,
                                          const std::vector<std::optional<TileSharding>>& operands,
                                          const std::optional<TileSharding>& preferred) {
  const int64_t rank = hlo.shape().rank();
  std::optional<TileSharding> base = preferred;
  for (int64_t i = 0; i < hlo.operand_count() && !base; ++i) {
    if (operands[i] && operands[i]->rank() == rank) base = operands[i];
  }
  if (!base) return std::nullopt;
  SpmdPlan plan;
  plan.partitioned = true;
  plan.result = base->Untile(changed);
  for (const HloInstruction* o : hlo.operands()) {
    plan.operands.push_back(
        o->shape().rank() == rank
            ? plan.result
            : TileSharding::Replicated(o->shape().rank(), base->device_count()));
  }
  return plan;
}

// Convolution with the batch dimension split (feature and spatial
// dimensions whole, the kernel replicated): a local convolution per batch
// block.
std::optional<SpmdPlan> PlanConvolution(const HloInstruction& hlo,
                                        const std::optional<TileSharding>& lhs) {
  const HloAttributes& a = hlo.attrs();
  if (!lhs || a.feature_group_count != 1 || a.batch_group_count != 1) return std::nullopt;
  const xla::ConvolutionDimensionNumbers& dn = *a.convolution_dimension_numbers;
  const int64_t batch = dn.input_batch_dimension();
  std::vector<int64_t> others;
  for (int64_t d = 0; d < lhs->rank(); ++d) {
    if (d != batch) others.push_back(d);
  }
  SpmdPlan plan;
  plan.partitioned = true;
  const TileSharding in = lhs->Untile(others);
  std::vector<int64_t> axis_of(hlo.shape().rank(), -1);
  axis_of[dn.output_batch_dimension()] = batch;
  std::optional<TileSharding> out = Remap(in, axis_of, hlo.shape().rank());
  if (!out) return std::nullopt;
  plan.operands = {in, TileSharding::Replicated(hlo.operand(1)->shape().rank(), in.device_count())};
  plan.result = *out;
  return plan;
}

// Gather from a replicated operand (an embedding table) with split
// indices: each device gathers the rows of its own indices; the result's
// batch dimensions (those not in offset_dims) follow the indices' dimensions
// other than index_vector_dim, in order.
std::optional<SpmdPlan> PlanGather(const HloInstruction& hlo,
                                   const std::optional<TileSharding>& indices) {
  const xla::GatherDimensionNumbers& dn = *hlo.attrs().gather_dimension_numbers;
  if (!indices || dn.operand_batching_dims_size() > 0 || !hlo.shape().IsArray()) {
    return std::nullopt;
  }
  const int64_t vector_dim = dn.index_vector_dim();
  const TileSharding idx = vector_dim < indices->rank() ? indices->Untile({vector_dim}) : *indices;
  std::vector<int64_t> axis_of(hlo.shape().rank(), -1);
  int64_t next = 0;
  for (int64_t k = 0; k < hlo.shape().rank(); ++k) {
    if (std::find(dn.offset_dims().begin(), dn.offset_dims().end(), k) != dn.offset_dims().end()) {
      continue;
    }
    if (next == vector_dim) ++next;
    if (next >= idx.rank()) return std::nullopt;
    axis_of[k] = next++;
  }
  std::optional<TileSharding> result = Remap(idx, axis_of, hlo.shape().rank());
  if (!result) return std::nullopt;
  SpmdPlan plan;
  plan.partitioned = true;
  plan.operands = {TileSharding::Replicated(hlo.operand(0)->shape().rank(), idx.device_count()),
                   idx};
  plan.result = *result;
  return plan;
}

}  // namespace

std::optional<SpmdPlan> PlanSpmdOp(const HloInstruction& hlo,
                                   const std::vector<std::optional<TileSharding>>& operands,
                                   const std::optional<TileSharding>& preferred, int64_t devices) {
  SpmdPlan plan;
  plan.partitioned = true;
  if (IsElementwise(hlo)) {
    // The wanted result, else the most tiled known operand (the first on ties).
    std::optional<TileSharding> target = preferred;
    if (!target) {
      for (const auto& s : operands) {
        if (s && (!target || s->TileCount() > target->TileCount())) target = s;
      }
    }
    if (!target) return std::nullopt;
    plan.operands.assign(hlo.operand_count(), *target);
    plan.result = *target;
    return plan;
  }
  switch (hlo.opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
      if (!hlo.shape().IsArray()) return std::nullopt;
      plan.result = TileSharding::Replicated(hlo.shape().rank(), devices);
      return plan;
    case HloOpcode::kBroadcast: {
      if (!Increasing(hlo.dimensions())) return std::nullopt;
      if (preferred) {
        plan.result = *preferred;
      } else if (operands[0]) {
        std::vector<int64_t> axis_of(hlo.shape().rank(), -1);
        for (size_t i = 0; i < hlo.dimensions().size(); ++i) axis_of[hlo.dimensions(i)] = i;
        std::optional<TileSharding> r = Remap(*operands[0], axis_of, hlo.shape().rank());
        if (!r) return std::nullopt;
        plan.result = *r;
      } else {
        return std::nullopt;
      }
      plan.operands = {TileSharding::Project(plan.result.array(), hlo.dimensions())};
      return plan;
    }
    case HloOpcode::kTranspose: {
      if (preferred) {
        plan.result = *preferred;
      } else if (operands[0]) {
        std::vector<int64_t> perm = hlo.dimensions();
        plan.result = TileSharding::Project(operands[0]->array(), perm);
      } else {
        return std::nullopt;
      }
      plan.operands = {
          TileSharding::Project(plan.result.array(), InversePermutation(hlo.dimensions()))};
      return plan;
    }
    case HloOpcode::kReshape: {
      if (!hlo.shape().IsArray()) return std::nullopt;
      std::optional<TileSharding> result =
          preferred ? preferred : (operands[0] ? ReshapeForward(hlo, *operands[0]) : std::nullopt);
      if (!result) return std::nullopt;
      std::optional<TileSharding> in = ReshapeBackward(hlo, *result);
      if (!in) return std::nullopt;
      // Every tiled result dimension must come from the operand.
      if (std::optional<TileSharding> back = ReshapeForward(hlo, *in); !back || *back != *result) {
        return std::nullopt;
      }
      plan.result = *result;
      plan.operands = {*in};
      return plan;
    }
    case HloOpcode::kDot:
      return PlanDot(hlo, operands, preferred);
    case HloOpcode::kReduce:
      if (!operands[0]) return std::nullopt;
      return PlanReduce(hlo, *operands[0]);
    case HloOpcode::kConvolution:
      return PlanConvolution(hlo, operands[0]);
    case HloOpcode::kGather:
      return PlanGather(hlo, operands[1]);
    default:
      if (std::optional<std::vector<int64_t>> changed = ChangedDims(hlo)) {
        return PlanDimensionWise(hlo, *changed, operands, preferred);
      }
      return std::nullopt;
  }
}

std::optional<TileSharding> SpmdOperandWant(const HloInstruction& user,
                                            const TileSharding& user_sharding, int64_t index) {
  if (IsElementwise(user)) return user_sharding;
  if (std::optional<std::vector<int64_t>> changed = ChangedDims(user)) {
    if (user.operand(index)->shape().rank() != user_sharding.rank()) return std::nullopt;
    return user_sharding.Untile(*changed);
  }
  switch (user.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReshape: {
      std::vector<std::optional<TileSharding>> unknown(user.operand_count());
      std::optional<SpmdPlan> plan =
          PlanSpmdOp(user, unknown, user_sharding, user_sharding.device_count());
      if (!plan || plan->operands.empty()) return std::nullopt;
      return plan->operands[index];
    }
    default:
      return std::nullopt;
  }
}

}  // namespace hloc
