// SpmdBuilder (see spmd_builder.h).
#include "passes/sharding/spmd_builder.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

// `from` splits one dimension a, `to` another dimension b into as many
// blocks on the same devices (replicas alike): {a, b}, for one all-to-all.
std::optional<std::pair<int64_t, int64_t>> AllToAllDims(const TileSharding& from,
                                                        const TileSharding& to) {
  if (from.rank() != to.rank() || from.array().devices != to.array().devices ||
      from.replicas() != to.replicas()) {
    return std::nullopt;
  }
  std::vector<int64_t> a, b;
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.tiles(d) > 1) a.push_back(d);
    if (to.tiles(d) > 1) b.push_back(d);
  }
  if (a.size() != 1 || b.size() != 1 || a[0] == b[0] || from.tiles(a[0]) != to.tiles(b[0])) {
    return std::nullopt;
  }
  return std::make_pair(a[0], b[0]);
}

}  // namespace

// The dimension d where `target` is `summed` split once more, across each
// of the all-reduce `groups` in their order (member i holds block i along
// d): then sum-and-split is one reduce-scatter along d. nullopt otherwise.
std::optional<int64_t> ScatterDim(const std::vector<std::vector<int64_t>>& groups,
                                  const TileSharding& summed, const TileSharding& target) {
  std::optional<int64_t> dim;
  for (int64_t d = 0; d < target.rank(); ++d) {
    if (target.tiles(d) == summed.tiles(d)) continue;
    if (dim || summed.tiles(d) != 1) return std::nullopt;
    dim = d;
  }
  if (!dim || target.tiles(*dim) != static_cast<int64_t>(groups[0].size()) ||
      target.Untile({*dim}) != summed) {
    return std::nullopt;
  }
  const std::vector<int64_t> offsets = target.OffsetsAlong(*dim, 1);
  for (const auto& group : groups) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (offsets[group[i]] != static_cast<int64_t>(i)) return std::nullopt;
    }
  }
  return dim;
}

// `x` (a block of `from`, of global shape `global`) as a block of `to`.
absl::StatusOr<HloInstruction*> SpmdBuilder::Reshard(HloInstruction* x, const Shape& global,
                                                     const TileSharding& from,
                                                     const TileSharding& to,
                                                     const std::string& what) {
  if (from == to) return x;
  if (std::optional<std::pair<int64_t, int64_t>> dims = AllToAllDims(from, to)) {
    return AllToAll(x, global, from, dims->first, dims->second);
  }
  // Gather the dimensions `to` does not split (kept splits stay when they
  // are `to`'s), then slice the ones only `to` splits; anything else goes
  // through replication.
  std::vector<int64_t> gather, slice;
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.tiles(d) > 1 && to.tiles(d) == 1) gather.push_back(d);
    if (to.tiles(d) > 1 && from.tiles(d) == 1) slice.push_back(d);
  }
  if (from.Untile(gather) != to.Untile(slice)) {
    gather.clear();
    slice.clear();
    for (int64_t d = 0; d < from.rank(); ++d) {
      if (from.tiles(d) > 1) gather.push_back(d);
      if (to.tiles(d) > 1) slice.push_back(d);
    }
  }
  for (int64_t d : gather) {
    Shape shape = x->shape();
    shape.set_dimension(d, global.dimensions(d));
    HloInstruction* g = Add(HloInstruction::Create(HloOpcode::kAllGather, shape, {x}));
    HloAttributes* a = g->mutable_attrs();
    a->dimensions = {d};
    SetGroups(a, from.array().GroupsAlong({d}));
    ++report_->all_gathers;
    x = g;
  }
  if (slice.empty()) return x;
  // Each device slices its block of the dimensions it now holds whole, at
  // offsets read by partition-id.
  HLOC_ASSIGN_OR_RETURN(Shape local, to.LocalShape(global, what));
  std::vector<HloInstruction*> operands = {x};
  for (int64_t d = 0; d < to.rank(); ++d) {
    const bool sliced = std::find(slice.begin(), slice.end(), d) != slice.end();
    operands.push_back(sliced ? Offset(to.OffsetsAlong(d, local.dimensions(d))) : Zero());
  }
  HloInstruction* s = Add(HloInstruction::Create(HloOpcode::kDynamicSlice, local, operands));
  s->mutable_attrs()->dynamic_slice_sizes = local.dimensions();
  ++report_->dynamic_slices;
  return s;
}

// Rows to columns without gathering: each device cuts its block along b
// into t pieces, sends piece i to the group's i-th device, and stacks what
// it receives along a:
//   [A/t, B] -> reshape [A/t, t, B/t] -> transpose [t, A/t, B/t]
//   -> all-to-all(dim 0) -> transpose/reshape [A, B/t]
absl::StatusOr<HloInstruction*> SpmdBuilder::AllToAll(HloInstruction* x, const Shape& global,
                                                      const TileSharding& from, int64_t a,
                                                      int64_t b) {
  const int64_t t = from.tiles(a);
  const PrimitiveType type = x->shape().element_type();
  const std::vector<int64_t> local = x->shape().dimensions();
  if (local[b] % t != 0) {
    return absl::UnimplementedError(absl::StrCat("spmd-partition: all-to-all of ",
                                                 x->shape().ToString(false), " in ", t,
                                                 " pieces along dimension ", b, " is uneven"));
  }
  auto shape = [&](std::vector<int64_t> dims) {
    Shape s(type, dims);
    s.set_layout(Layout::RowMajor(static_cast<int64_t>(dims.size())));
    return s;
  };
  std::vector<int64_t> split = local;
  split[b] = local[b] / t;
  split.insert(split.begin() + b, t);
  HloInstruction* r = Add(HloInstruction::Create(HloOpcode::kReshape, shape(split), {x}));
  // The t axis (at b) first.
  std::vector<int64_t> perm = {b};
  for (int64_t k = 0; k < static_cast<int64_t>(split.size()); ++k) {
    if (k != b) perm.push_back(k);
  }
  std::vector<int64_t> front;
  for (int64_t k : perm) front.push_back(split[k]);
  HloInstruction* tr = Add(HloInstruction::Create(HloOpcode::kTranspose, shape(front), {r}));
  tr->mutable_attrs()->dimensions = perm;
  HloInstruction* sent = Add(HloInstruction::Create(HloOpcode::kAllToAll, shape(front), {tr}));
  HloAttributes* attrs = sent->mutable_attrs();
  attrs->dimensions = {0};
  attrs->replica_groups = from.array().GroupsAlong({a});
  attrs->channel_id = next_channel_++;  // Ids are partitions (no global ids on all-to-all).
  ++report_->all_to_alls;
  // Received pieces are indexed by the sender's block along a: move that
  // axis to just before a, then merge.
  std::vector<int64_t> back;
  for (int64_t k = 1; k <= a; ++k) back.push_back(k);
  back.push_back(0);
  for (int64_t k = a + 1; k < static_cast<int64_t>(front.size()); ++k) back.push_back(k);
  std::vector<int64_t> placed;
  for (int64_t k : back) placed.push_back(front[k]);
  HloInstruction* tb = Add(HloInstruction::Create(HloOpcode::kTranspose, shape(placed), {sent}));
  tb->mutable_attrs()->dimensions = back;
  Shape out = x->shape();
  out.set_dimension(a, global.dimensions(a));
  out.set_dimension(b, local[b] / t);
  return Add(HloInstruction::Create(HloOpcode::kReshape, out, {tb}));
}

HloInstruction* SpmdBuilder::ReduceScatter(HloInstruction* x, const Shape& scattered, int64_t dim,
                                           std::vector<std::vector<int64_t>> groups,
                                           HloComputation* reducer) {
  HloInstruction* r = Add(HloInstruction::Create(HloOpcode::kReduceScatter, scattered, {x}));
  r->AppendCalledComputation(reducer != nullptr ? reducer
                                                : AddComputation(x->shape().element_type()));
  r->mutable_attrs()->dimensions = {dim};
  SetGroups(r->mutable_attrs(), std::move(groups));
  ++report_->reduce_scatters;
  return r;
}

HloInstruction* SpmdBuilder::AllReduce(HloInstruction* x, std::vector<std::vector<int64_t>> groups,
                                       HloComputation* reducer) {
  HloInstruction* r = Add(HloInstruction::Create(HloOpcode::kAllReduce, x->shape(), {x}));
  r->AppendCalledComputation(reducer != nullptr ? reducer
                                                : AddComputation(x->shape().element_type()));
  SetGroups(r->mutable_attrs(), std::move(groups));
  ++report_->all_reduces;
  return r;
}

void SpmdBuilder::SetGroups(HloAttributes* a, std::vector<std::vector<int64_t>> groups) {
  a->replica_groups = std::move(groups);
  a->channel_id = next_channel_++;
  a->use_global_device_ids = true;
}

HloInstruction* SpmdBuilder::Zero() {
  if (zero_ == nullptr) {
    zero_ = Add(HloInstruction::CreateConstant(Literal::Scalar<int32_t>(xla::S32, 0)));
  }
  return zero_;
}

// table[partition-id] as an s32 scalar.
HloInstruction* SpmdBuilder::Offset(const std::vector<int64_t>& table) {
  auto it = offsets_.find(table);
  if (it != offsets_.end()) return it->second;
  if (partition_ == nullptr) {
    HloInstruction* pid =
        Add(HloInstruction::Create(HloOpcode::kPartitionId, Shape::Scalar(xla::U32)));
    partition_ = Add(HloInstruction::Create(HloOpcode::kConvert, Shape::Scalar(xla::S32), {pid}));
  }
  Literal values(Shape(xla::S32, {static_cast<int64_t>(table.size())}));
  for (size_t i = 0; i < table.size(); ++i) values.SetFromInt64(i, table[i]);
  HloInstruction* t = Add(HloInstruction::CreateConstant(std::move(values)));
  HloInstruction* one =
      Add(HloInstruction::Create(HloOpcode::kDynamicSlice, Shape(xla::S32, {1}), {t, partition_}));
  one->mutable_attrs()->dynamic_slice_sizes = {1};
  HloInstruction* scalar =
      Add(HloInstruction::Create(HloOpcode::kReshape, Shape::Scalar(xla::S32), {one}));
  offsets_[table] = scalar;
  return scalar;
}

HloComputation* SpmdBuilder::AddComputation(PrimitiveType type) {
  auto it = adds_.find(type);
  if (it != adds_.end()) return it->second;
  HloComputation* c = module_.AddComputation(std::make_unique<HloComputation>(
      module_.UniquifyComputationName(absl::StrCat("spmd_add_", PrimitiveTypeName(type)))));
  HloInstruction* a =
      c->AddInstruction(HloInstruction::CreateParameter(0, Shape::Scalar(type), "a"));
  HloInstruction* b =
      c->AddInstruction(HloInstruction::CreateParameter(1, Shape::Scalar(type), "b"));
  c->set_root(
      c->AddInstruction(HloInstruction::Create(HloOpcode::kAdd, Shape::Scalar(type), {a, b})));
  adds_[type] = c;
  return c;
}

}  // namespace hloc
