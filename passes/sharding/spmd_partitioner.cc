// SpmdPartition (see spmd_partitioner.h): propagation, then the rewrite into
// a new entry computation with resharding collectives.
#include "passes/sharding/spmd_partitioner.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "hlo/computation.h"
#include "hlo/status_macros.h"
#include "passes/call_inliner.h"
#include "passes/sharding/shard_map_to_per_device.h"
#include "passes/sharding/spmd_rules.h"
#include "passes/sharding/spmd_sharding.h"

namespace hloc {
namespace {

constexpr char kShardingTarget[] = "Sharding";
constexpr char kFuncResultSharding[] = "xla.sdy.FuncResultSharding";

bool IsCustomCall(const HloInstruction* hlo, absl::string_view target) {
  return hlo->opcode() == HloOpcode::kCustomCall && hlo->attrs().custom_call_target == target;
}

template <typename... Args>
absl::Status Unsupported(const HloInstruction& hlo, const Args&... args) {
  return absl::UnimplementedError(absl::StrCat("spmd-partition: %", hlo.name(), ": ", args...));
}

bool IsTiled(const xla::OpSharding& s) {
  if (s.type() == xla::OpSharding::TUPLE) {
    for (const auto& e : s.tuple_shardings()) {
      if (IsTiled(e)) return true;
    }
    return false;
  }
  return s.type() == xla::OpSharding::OTHER;
}

int64_t TileAssignmentSize(const xla::OpSharding& s) {
  if (s.type() == xla::OpSharding::TUPLE) {
    for (const auto& e : s.tuple_shardings()) {
      if (int64_t n = TileAssignmentSize(e)) return n;
    }
    return 0;
  }
  if (s.type() != xla::OpSharding::OTHER) return 0;
  int64_t n = 1;
  for (int64_t t : s.tile_assignment_dimensions()) n *= t;
  return n;
}

// Checks what the partitioner refuses anywhere in the module.
absl::Status CheckPartitionable(const HloModule& module) {
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* hlo : c->instructions()) {
      const HloOpcode op = hlo->opcode();
      if (IsCollective(op) || op == HloOpcode::kPartitionId || op == HloOpcode::kReplicaId) {
        return Unsupported(*hlo, HloOpcodeName(op),
                           " in a module to partition (it is partitioned already)");
      }
      if (op == HloOpcode::kCustomCall &&
          absl::StartsWith(hlo->attrs().custom_call_target, "xla.sdy.") &&
          !IsCustomCall(hlo, kFuncResultSharding)) {
        return Unsupported(*hlo, "custom call ", hlo->attrs().custom_call_target,
                           " (shard_map modules go through ShardMapToPerDevice)");
      }
      if (IsCustomCall(hlo, kShardingTarget) && c != module.entry()) {
        return Unsupported(*hlo, "sharding constraint inside ", c->name(), " (only in the entry)");
      }
    }
  }
  for (const HloInstruction* p : module.entry()->parameters()) {
    if (!p->shape().IsArray()) return Unsupported(*p, "parameter of shape ", p->shape().ToString());
  }
  return absl::OkStatus();
}

// Builds the per-device entry: resharding, collectives, partition-id offsets.
class Builder {
 public:
  Builder(HloModule& module, HloComputation* comp, int64_t devices, SpmdReport* report)
      : module_(module), comp_(comp), devices_(devices), report_(report) {}

  HloInstruction* Add(std::unique_ptr<HloInstruction> hlo) {
    return comp_->AddInstruction(std::move(hlo));
  }

  // `x` (a block of `from`, of global shape `global`) as a block of `to`.
  absl::StatusOr<HloInstruction*> Reshard(HloInstruction* x, const Shape& global,
                                          const TileSharding& from, const TileSharding& to,
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

  // `from` splits one dimension a, `to` another dimension b into as many
  // blocks on the same devices (replicas alike): {a, b}, for one all-to-all.
  static std::optional<std::pair<int64_t, int64_t>> AllToAllDims(const TileSharding& from,
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

  // Rows to columns without gathering: each device cuts its block along b
  // into t pieces, sends piece i to the group's i-th device, and stacks what
  // it receives along a:
  //   [A/t, B] -> reshape [A/t, t, B/t] -> transpose [t, A/t, B/t]
  //   -> all-to-all(dim 0) -> transpose/reshape [A, B/t]
  absl::StatusOr<HloInstruction*> AllToAll(HloInstruction* x, const Shape& global,
                                           const TileSharding& from, int64_t a, int64_t b) {
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

  HloInstruction* ReduceScatter(HloInstruction* x, const Shape& scattered, int64_t dim,
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

  HloInstruction* AllReduce(HloInstruction* x, std::vector<std::vector<int64_t>> groups,
                            HloComputation* reducer) {
    HloInstruction* r = Add(HloInstruction::Create(HloOpcode::kAllReduce, x->shape(), {x}));
    r->AppendCalledComputation(reducer != nullptr ? reducer : AddComputation(x->shape().element_type()));
    SetGroups(r->mutable_attrs(), std::move(groups));
    ++report_->all_reduces;
    return r;
  }

 private:
  void SetGroups(HloAttributes* a, std::vector<std::vector<int64_t>> groups) {
    a->replica_groups = std::move(groups);
    a->channel_id = next_channel_++;
    a->use_global_device_ids = true;
  }

  HloInstruction* Zero() {
    if (zero_ == nullptr) {
      zero_ = Add(HloInstruction::CreateConstant(Literal::Scalar<int32_t>(xla::S32, 0)));
    }
    return zero_;
  }

  // table[partition-id] as an s32 scalar.
  HloInstruction* Offset(const std::vector<int64_t>& table) {
    auto it = offsets_.find(table);
    if (it != offsets_.end()) return it->second;
    if (partition_ == nullptr) {
      HloInstruction* pid = Add(HloInstruction::Create(HloOpcode::kPartitionId, Shape::Scalar(xla::U32)));
      partition_ = Add(HloInstruction::Create(HloOpcode::kConvert, Shape::Scalar(xla::S32), {pid}));
    }
    Literal values(Shape(xla::S32, {static_cast<int64_t>(table.size())}));
    for (size_t i = 0; i < table.size(); ++i) values.SetFromInt64(i, table[i]);
    HloInstruction* t = Add(HloInstruction::CreateConstant(std::move(values)));
    HloInstruction* one = Add(HloInstruction::Create(HloOpcode::kDynamicSlice, Shape(xla::S32, {1}),
                                                     {t, partition_}));
    one->mutable_attrs()->dynamic_slice_sizes = {1};
    HloInstruction* scalar = Add(HloInstruction::Create(HloOpcode::kReshape, Shape::Scalar(xla::S32), {one}));
    offsets_[table] = scalar;
    return scalar;
  }

  HloComputation* AddComputation(PrimitiveType type) {
    auto it = adds_.find(type);
    if (it != adds_.end()) return it->second;
    HloComputation* c = module_.AddComputation(std::make_unique<HloComputation>(
        module_.UniquifyComputationName(absl::StrCat("spmd_add_", PrimitiveTypeName(type)))));
    HloInstruction* a = c->AddInstruction(HloInstruction::CreateParameter(0, Shape::Scalar(type), "a"));
    HloInstruction* b = c->AddInstruction(HloInstruction::CreateParameter(1, Shape::Scalar(type), "b"));
    c->set_root(c->AddInstruction(HloInstruction::Create(HloOpcode::kAdd, Shape::Scalar(type), {a, b})));
    adds_[type] = c;
    return c;
  }

  HloModule& module_;
  HloComputation* comp_;
  int64_t devices_;
  SpmdReport* report_;
  int64_t next_channel_ = 1;
  HloInstruction* zero_ = nullptr;
  HloInstruction* partition_ = nullptr;
  std::map<std::vector<int64_t>, HloInstruction*> offsets_;
  std::map<PrimitiveType, HloComputation*> adds_;
};

struct Results {
  std::vector<HloInstruction*> elements;
  std::vector<std::optional<TileSharding>> shardings;  // Requested, per element.
  bool tuple = false;
};

absl::StatusOr<Results> ResultsOf(HloComputation* entry, int64_t devices) {
  Results r;
  HloInstruction* root = entry->root();
  std::vector<std::optional<xla::OpSharding>> requested;
  if (root->opcode() == HloOpcode::kGetTupleElement &&
      root->operand(0)->opcode() == HloOpcode::kTuple) {
    // JAX's `ROOT gte(tuple(x)), sharding=...` for out_shardings.
    r.elements = {root->operand(0)->operand(root->tuple_index())};
    requested.emplace_back(root->has_sharding() ? std::optional(root->sharding()) : std::nullopt);
  } else if (root->opcode() == HloOpcode::kTuple) {
    r.tuple = true;
    r.elements = root->operands();
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      if (!root->has_sharding()) {
        requested.emplace_back();
      } else if (root->sharding().type() == xla::OpSharding::TUPLE) {
        if (i >= root->sharding().tuple_shardings_size()) return Unsupported(*root, "short tuple sharding");
        requested.emplace_back(root->sharding().tuple_shardings(i));
      } else {
        requested.emplace_back(root->sharding());
      }
    }
  } else {
    r.elements = {root};
    requested.emplace_back(root->has_sharding() ? std::optional(root->sharding()) : std::nullopt);
  }
  for (size_t i = 0; i < r.elements.size(); ++i) {
    const Shape& shape = r.elements[i]->shape();
    if (!shape.IsArray()) return Unsupported(*r.elements[i], "result of shape ", shape.ToString());
    if (!requested[i]) {
      r.shardings.emplace_back();
      continue;
    }
    HLOC_ASSIGN_OR_RETURN(TileSharding s, TileSharding::FromOpSharding(
        *requested[i], shape.rank(), devices, absl::StrCat("result ", i)));
    r.shardings.push_back(std::move(s));
  }
  return r;
}

using ShardingMap = absl::flat_hash_map<const HloInstruction*, TileSharding>;

// Step 1: a sharding for every array value of the entry.
absl::StatusOr<ShardingMap> Propagate(const HloComputation& entry, const Results& results,
                                      int64_t devices) {
  ShardingMap known;
  const std::vector<HloInstruction*> post = entry.MakeInstructionPostOrder();
  auto fixed = [&](const HloInstruction* hlo) -> absl::StatusOr<std::optional<TileSharding>> {
    if (hlo->opcode() == HloOpcode::kParameter) {
      if (!hlo->has_sharding()) return TileSharding::Replicated(hlo->shape().rank(), devices);
      return TileSharding::FromOpSharding(hlo->sharding(), hlo->shape().rank(), devices,
                                          absl::StrCat("%", hlo->name()));
    }
    if (IsCustomCall(hlo, kShardingTarget)) {
      if (!hlo->has_sharding() || !hlo->shape().IsArray()) {
        return Unsupported(*hlo, "sharding constraint without an array sharding");
      }
      return TileSharding::FromOpSharding(hlo->sharding(), hlo->shape().rank(), devices,
                                          absl::StrCat("%", hlo->name()));
    }
    // A sharding written on any other array op is kept too (as GSPMD does).
    if (hlo->has_sharding() && hlo->shape().IsArray() &&
        hlo->sharding().type() != xla::OpSharding::TUPLE) {
      return TileSharding::FromOpSharding(hlo->sharding(), hlo->shape().rank(), devices,
                                          absl::StrCat("%", hlo->name()));
    }
    return std::nullopt;
  };
  for (const HloInstruction* hlo : post) {
    HLOC_ASSIGN_OR_RETURN(std::optional<TileSharding> f, fixed(hlo));
    if (f) {
      known.emplace(hlo, *f);
      continue;
    }
    if (!hlo->shape().IsArray()) continue;
    std::vector<std::optional<TileSharding>> operands;
    bool any = false;
    for (const HloInstruction* o : hlo->operands()) {
      auto it = known.find(o);
      operands.push_back(it == known.end() ? std::nullopt : std::optional(it->second));
      any |= it != known.end();
    }
    if (!any) continue;  // Open: its users decide.
    std::optional<SpmdPlan> plan = PlanSpmdOp(*hlo, operands, std::nullopt, devices);
    // A replicated result says nothing: its users decide (a broadcast of a
    // replicated bias is made at the block size its add needs).
    if (plan && !plan->result.IsReplicated()) known.emplace(hlo, plan->result);
  }
  // Backward: open values take what their first user with an opinion wants.
  for (auto it = post.rbegin(); it != post.rend(); ++it) {
    const HloInstruction* hlo = *it;
    if (!hlo->shape().IsArray() || known.contains(hlo)) continue;
    std::optional<TileSharding> want;
    for (size_t i = 0; i < results.elements.size() && !want; ++i) {
      if (results.elements[i] == hlo) want = results.shardings[i];
    }
    for (const HloInstruction* user : hlo->users()) {
      if (want) break;
      auto u = known.find(user);
      if (u == known.end()) continue;
      want = IsCustomCall(user, kShardingTarget)
                 ? std::optional(u->second)
                 : SpmdOperandWant(*user, u->second, user->OperandIndex(hlo));
    }
    known.emplace(hlo, want ? *want : TileSharding::Replicated(hlo->shape().rank(), devices));
  }
  return known;
}

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

// Attributes that name sizes of split dimensions, made per-device: a slice
// that keeps a split dimension whole ends at its block, a dynamic-slice
// takes its block's size (the rules split only dimensions these ops keep whole).
void LocalizeAttributes(HloInstruction* local) {
  if (local->opcode() == HloOpcode::kSlice) {
    HloAttributes* a = local->mutable_attrs();
    const Shape& in = local->operand(0)->shape();
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (a->slice_limits[d] > in.dimensions(d)) a->slice_limits[d] = in.dimensions(d);
    }
  } else if (local->opcode() == HloOpcode::kDynamicSlice) {
    local->mutable_attrs()->dynamic_slice_sizes = local->shape().dimensions();
  }
}

// `{mesh = #sdy.mesh<["a"=2, "b"=2]>, empty_mesh = #sdy.mesh<[]>}`: the one
// mesh with axes, in iota order; false where there is not exactly one.
bool ParseShardyMesh(absl::string_view text, SpmdMeshShardings* mesh) {
  int meshes = 0;
  for (size_t at = text.find("#sdy.mesh<["); at != absl::string_view::npos;
       at = text.find("#sdy.mesh<[", at + 1)) {
    const size_t close = text.find(']', at);
    if (close == absl::string_view::npos) return false;
    absl::string_view axes = text.substr(at + 11, close - at - 11);
    if (axes.empty()) continue;
    if (++meshes > 1) return false;
    if (text.substr(close, 20).find("device_ids") != absl::string_view::npos) return false;
    for (absl::string_view axis : absl::StrSplit(axes, ',')) {
      axis = absl::StripAsciiWhitespace(axis);
      const size_t eq = axis.rfind('=');
      int64_t size = 0;
      if (eq == absl::string_view::npos || axis.size() < 2 || axis[0] != '"' ||
          axis[eq - 1] != '"' || !absl::SimpleAtoi(axis.substr(eq + 1), &size) || size < 1) {
        return false;
      }
      mesh->axis_names.emplace_back(axis.substr(1, eq - 2));
      mesh->axis_sizes.push_back(size);
    }
  }
  return meshes == 1;
}

// Fills `mesh` where every sharding is an assignment of the mesh's axes.
void DescribeOnMesh(const HloModule& module, const std::vector<TileSharding>& parameters,
                    const std::vector<TileSharding>& results, SpmdMeshShardings* mesh) {
  *mesh = SpmdMeshShardings();
  const auto& attrs = module.config().frontend_attributes.map();
  auto it = attrs.find("xla.sdy.meshes");
  SpmdMeshShardings out;
  if (it == attrs.end() || !ParseShardyMesh(it->second, &out)) return;
  for (const auto* list : {&parameters, &results}) {
    for (const TileSharding& s : *list) {
      std::optional<std::vector<std::vector<int64_t>>> axes = MeshAxesOf(s, out.axis_sizes);
      if (!axes) return;
      (list == &parameters ? out.parameters : out.results).push_back(std::move(*axes));
    }
  }
  *mesh = std::move(out);
}

}  // namespace

std::string SpmdReport::ToString() const {
  return absl::StrCat("spmd-partition on ", devices, " devices: ", all_gathers, " all-gather, ",
                      all_reduces, " all-reduce, ", reduce_scatters, " reduce-scatter, ", all_to_alls,
                      " all-to-all, ", dynamic_slices,
                      " dynamic-slice; ",
                      replicated_ops.size(), " replicated op(s)",
                      replicated_ops.empty() ? "" : ": ", absl::StrJoin(replicated_ops, ", "));
}

bool NeedsSpmdPartitioning(const HloModule& module) {
  if (HasShardMap(module) || !CheckPartitionable(module).ok()) return false;
  // A module with tiled shardings and num_partitions > 1 may be partitioned
  // already (XLA's dumps after partitioning, with no collective where none
  // was needed); JAX's lowerings say they are not by their Shardy mesh.
  const bool global = module.config().num_partitions * module.config().replica_count == 1 ||
                      module.config().frontend_attributes.map().contains("xla.sdy.meshes");
  if (!global) return false;
  for (const HloInstruction* hlo : module.entry()->instructions()) {
    if (IsCustomCall(hlo, kShardingTarget)) return true;
    if (hlo->has_sharding() && IsTiled(hlo->sharding())) return true;
  }
  return false;
}

absl::StatusOr<bool> SpmdPartition::Run(HloModule& module) {
  if (!NeedsSpmdPartitioning(module)) return false;
  HLOC_RETURN_IF_ERROR(CheckPartitionable(module));
  // JAX wraps jax.nn functions in calls: partition their bodies too.
  HLOC_RETURN_IF_ERROR(CallInliner().Run(module).status());
  HloComputation* entry = module.entry();
  // Inlined calls that returned tuples leave gte(tuple(...)): read the
  // element, so that no value passes through a (replicated) tuple.
  for (HloInstruction* hlo : entry->MakeInstructionPostOrder()) {
    if (hlo->opcode() != HloOpcode::kGetTupleElement || hlo == entry->root() ||
        hlo->operand(0)->opcode() != HloOpcode::kTuple) {
      continue;
    }
    HLOC_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(hlo->operand(0)->operand(hlo->tuple_index())));
  }
  int64_t devices = options_.devices;
  if (devices < 1 && module.config().num_partitions > 1) {
    devices = module.config().num_partitions;
  }
  for (const HloInstruction* hlo : entry->instructions()) {
    if (devices > 0) break;
    if (hlo->has_sharding()) devices = TileAssignmentSize(hlo->sharding());
  }
  if (devices < 1) {
    return absl::InvalidArgumentError("spmd-partition: no device count (options or shardings)");
  }
  SpmdReport local_report;
  SpmdReport* report = options_.report != nullptr ? options_.report : &local_report;
  *report = SpmdReport();
  report->devices = devices;
  // FuncResultSharding is an identity (the root's sharding says the same).
  for (HloInstruction* hlo : entry->MakeInstructionPostOrder()) {
    if (!IsCustomCall(hlo, kFuncResultSharding)) continue;
    HLOC_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(hlo->operands()[0]));
    HLOC_RETURN_IF_ERROR(entry->RemoveInstruction(hlo));
  }
  HLOC_ASSIGN_OR_RETURN(Results results, ResultsOf(entry, devices));
  HLOC_ASSIGN_OR_RETURN(ShardingMap sharding, Propagate(*entry, results, devices));

  HloComputation* comp = module.AddComputation(
      std::make_unique<HloComputation>(module.UniquifyComputationName(entry->name() + ".spmd")));
  Builder b(module, comp, devices, report);
  // Per old instruction: its new value and that value's sharding.
  absl::flat_hash_map<const HloInstruction*, std::pair<HloInstruction*, TileSharding>> value;
  // Broadcasts made again in the sharding a user wants (from their smaller
  // operand, resharded if need be), rather than moved between devices.
  std::map<std::pair<const HloInstruction*, std::string>, HloInstruction*> rebroadcast;
  std::function<absl::StatusOr<HloInstruction*>(const HloInstruction*, const TileSharding&)>
      operand_as = [&](const HloInstruction* o,
                       const TileSharding& want) -> absl::StatusOr<HloInstruction*> {
    const auto& [x, have] = value.at(o);
    if (!o->shape().IsArray() || have == want) return x;
    if (o->opcode() == HloOpcode::kBroadcast &&
        o->operand(0)->shape().element_count() < o->shape().element_count()) {
      std::optional<SpmdPlan> plan =
          PlanSpmdOp(*o, {value.at(o->operand(0)).second}, want, devices);
      if (plan && plan->result == want) {
        HloInstruction*& again = rebroadcast[{o, want.ToString()}];
        if (again == nullptr) {
          HLOC_ASSIGN_OR_RETURN(HloInstruction * in, operand_as(o->operand(0), plan->operands[0]));
          HLOC_ASSIGN_OR_RETURN(Shape local, want.LocalShape(o->shape(), o->name()));
          again = b.Add(o->CloneWithNewOperands(local, {in}));
          again->clear_sharding();
        }
        return again;
      }
    }
    return b.Reshard(x, o->shape(), have, want, absl::StrCat("%", o->name()));
  };
  // Only what the results need (and side effects): the old root tuple is
  // rebuilt below, not gathered.
  absl::flat_hash_set<const HloInstruction*> live;
  {
    std::vector<const HloInstruction*> stack(results.elements.begin(), results.elements.end());
    for (const HloInstruction* hlo : entry->instructions()) {
      if (hlo->HasSideEffect()) stack.push_back(hlo);
    }
    while (!stack.empty()) {
      const HloInstruction* hlo = stack.back();
      stack.pop_back();
      if (!live.insert(hlo).second) continue;
      for (const HloInstruction* o : hlo->operands()) stack.push_back(o);
    }
  }
  for (const HloInstruction* hlo : entry->MakeInstructionPostOrder()) {
    if (!live.contains(hlo) && hlo->opcode() != HloOpcode::kParameter) continue;
    const std::string what = absl::StrCat("%", hlo->name());
    const bool array = hlo->shape().IsArray();
    const TileSharding target = array ? sharding.at(hlo) : TileSharding::Replicated(0, devices);
    if (hlo->opcode() == HloOpcode::kParameter) {
      HLOC_ASSIGN_OR_RETURN(Shape local, target.LocalShape(hlo->shape(), what));
      HloInstruction* p = b.Add(HloInstruction::CreateParameter(hlo->parameter_number(), local,
                                                                hlo->name()));
      p->set_sharding(target.ToOpSharding());
      value.emplace(hlo, std::make_pair(p, target));
      continue;
    }
    if (IsCustomCall(hlo, kShardingTarget)) {
      HLOC_ASSIGN_OR_RETURN(HloInstruction * x, operand_as(hlo->operand(0), target));
      value.emplace(hlo, std::make_pair(x, target));
      continue;
    }
    std::vector<std::optional<TileSharding>> have;
    for (const HloInstruction* o : hlo->operands()) {
      const auto& v = value.at(o);
      have.push_back(o->shape().IsArray() ? std::optional(v.second) : std::nullopt);
    }
    std::optional<SpmdPlan> plan;
    if (array) plan = PlanSpmdOp(*hlo, have, target, devices);
    std::vector<HloInstruction*> operands;
    if (plan) {
      for (int64_t i = 0; i < hlo->operand_count(); ++i) {
        HLOC_ASSIGN_OR_RETURN(HloInstruction * x, operand_as(hlo->operand(i), plan->operands[i]));
        operands.push_back(x);
      }
      HLOC_ASSIGN_OR_RETURN(Shape local, plan->result.LocalShape(hlo->shape(), what));
      HloInstruction* x = b.Add(hlo->CloneWithNewOperands(local, operands));
      x->clear_sharding();  // Global shardings mean nothing per device.
      LocalizeAttributes(x);
      if (!plan->all_reduce_groups.empty()) {
        // Summed, then split over the same groups: one reduce-scatter.
        if (std::optional<int64_t> d = ScatterDim(plan->all_reduce_groups, plan->result, target)) {
          HLOC_ASSIGN_OR_RETURN(Shape scattered, target.LocalShape(hlo->shape(), what));
          x = b.ReduceScatter(x, scattered, *d, plan->all_reduce_groups, plan->reducer);
          value.emplace(hlo, std::make_pair(x, target));
          continue;
        }
        x = b.AllReduce(x, plan->all_reduce_groups, plan->reducer);
      }
      HLOC_ASSIGN_OR_RETURN(x, b.Reshard(x, hlo->shape(), plan->result, target, what));
      value.emplace(hlo, std::make_pair(x, target));
      continue;
    }
    // No rule: global operands, global result, and the report says so.
    if (hlo->opcode() != HloOpcode::kGetTupleElement && hlo->opcode() != HloOpcode::kTuple) {
      report->replicated_ops.push_back(absl::StrCat(what, " (", HloOpcodeName(hlo->opcode()), ")"));
    }
    for (const HloInstruction* o : hlo->operands()) {
      HLOC_ASSIGN_OR_RETURN(HloInstruction * x,
                            operand_as(o, TileSharding::Replicated(o->shape().IsArray() ? o->shape().rank() : 0, devices)));
      operands.push_back(x);
    }
    HloInstruction* x = b.Add(hlo->CloneWithNewOperands(hlo->shape(), operands));
    x->clear_sharding();
    if (array) {
      HLOC_ASSIGN_OR_RETURN(x, b.Reshard(x, hlo->shape(),
                                         TileSharding::Replicated(hlo->shape().rank(), devices),
                                         target, what));
    }
    value.emplace(hlo, std::make_pair(x, target));
  }
  // Results in their requested shardings (else as propagated), which the
  // root records for whoever gathers them.
  std::vector<HloInstruction*> outs;
  xla::OpSharding root_sharding;
  root_sharding.set_type(xla::OpSharding::TUPLE);
  std::vector<TileSharding> result_shardings;
  for (size_t i = 0; i < results.elements.size(); ++i) {
    const HloInstruction* e = results.elements[i];
    const TileSharding want = results.shardings[i] ? *results.shardings[i] : value.at(e).second;
    HLOC_ASSIGN_OR_RETURN(HloInstruction * x, operand_as(e, want));
    outs.push_back(x);
    result_shardings.push_back(want);
    *root_sharding.add_tuple_shardings() = want.ToOpSharding();
  }
  HloInstruction* root = outs[0];
  if (results.tuple) {
    root = b.Add(HloInstruction::CreateTuple(outs));
    root->set_sharding(root_sharding);
  } else if (root->opcode() == HloOpcode::kParameter || root->has_sharding()) {
    root = b.Add(HloInstruction::Create(HloOpcode::kCopy, root->shape(), {root}));
    root->set_sharding(root_sharding.tuple_shardings(0));
  } else {
    root->set_sharding(root_sharding.tuple_shardings(0));
  }
  comp->set_root(root);
  if (options_.mesh_shardings != nullptr) {
    std::vector<TileSharding> parameter_shardings;
    for (const HloInstruction* p : entry->parameters()) {
      parameter_shardings.push_back(value.at(p).second);
    }
    DescribeOnMesh(module, parameter_shardings, result_shardings, options_.mesh_shardings);
  }
  const std::string name = entry->name();
  module.set_entry(comp);
  HLOC_RETURN_IF_ERROR(module.RemoveComputation(entry));
  comp->set_name(name);
  module.mutable_config()->num_partitions = devices;
  module.mutable_config()->entry_computation_layout.reset();
  return true;
}

}  // namespace hloc
