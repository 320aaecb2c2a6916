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
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/computation.h"
#include "hlo/status_macros.h"
#include "passes/call_inliner.h"
#include "passes/sharding/shard_map_to_per_device.h"
#include "passes/sharding/spmd_builder.h"
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
        if (i >= root->sharding().tuple_shardings_size())
          return Unsupported(*root, "short tuple sharding");
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
    HLOC_ASSIGN_OR_RETURN(TileSharding s,
                          TileSharding::FromOpSharding(*requested[i], shape.rank(), devices,
                                                       absl::StrCat("result ", i)));
    r.shardings.push_back(std::move(s));
  }
  return r;
}

using ShardingMap = absl::flat_hash_map<const HloInstruction*, TileSharding>;

// Step 1: a sharding for every array value of the entry.
absl::StatusOr<ShardingMap> Propagate(const HloComputation& entry, const Results& results,
                                      int64_t devices, SpmdReport* report) {
  ShardingMap known;
  // A split that does not divide the value keeps that dimension whole.
  auto even = [&](const HloInstruction* hlo, const TileSharding& s) {
    std::vector<int64_t> uneven;
    TileSharding e = s.EvenFor(hlo->shape(), &uneven);
    for (int64_t d : uneven) {
      report->uneven_kept_whole.push_back(absl::StrCat("%", hlo->name(), " dim ", d, " (",
                                                       hlo->shape().dimensions(d), " in ",
                                                       s.tiles(d), " tiles)"));
    }
    return e;
  };
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
      HLOC_ASSIGN_OR_RETURN(TileSharding s,
                            TileSharding::FromOpSharding(hlo->sharding(), hlo->shape().rank(),
                                                         devices, absl::StrCat("%", hlo->name())));
      return even(hlo, s);
    }
    // A sharding written on any other array op is kept too (as GSPMD does).
    if (hlo->has_sharding() && hlo->shape().IsArray() &&
        hlo->sharding().type() != xla::OpSharding::TUPLE) {
      HLOC_ASSIGN_OR_RETURN(TileSharding s,
                            TileSharding::FromOpSharding(hlo->sharding(), hlo->shape().rank(),
                                                         devices, absl::StrCat("%", hlo->name())));
      return even(hlo, s);
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
      if (want) want = want->EvenFor(hlo->shape(), nullptr);
    }
    known.emplace(hlo, want ? *want : TileSharding::Replicated(hlo->shape().rank(), devices));
  }
  return known;
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
                      all_reduces, " all-reduce, ", reduce_scatters, " reduce-scatter, ",
                      all_to_alls, " all-to-all, ", dynamic_slices, " dynamic-slice; ",
                      replicated_ops.size(), " replicated op(s)",
                      replicated_ops.empty() ? "" : ": ", absl::StrJoin(replicated_ops, ", "),
                      uneven_kept_whole.empty() ? "" : "; uneven split(s) kept whole: ",
                      absl::StrJoin(uneven_kept_whole, ", "));
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
  HLOC_ASSIGN_OR_RETURN(ShardingMap sharding, Propagate(*entry, results, devices, report));

  HloComputation* comp = module.AddComputation(
      std::make_unique<HloComputation>(module.UniquifyComputationName(entry->name() + ".spmd")));
  SpmdBuilder b(module, comp, report);
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
      HloInstruction* p =
          b.Add(HloInstruction::CreateParameter(hlo->parameter_number(), local, hlo->name()));
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
      // A bf16/f16 dot summed over devices keeps its partial sums in f32 (one
      // device rounds once, after the whole sum), rounding after the sum.
      const PrimitiveType type = hlo->shape().element_type();
      const bool widen = !plan->all_reduce_groups.empty() && hlo->opcode() == HloOpcode::kDot &&
                         (type == xla::BF16 || type == xla::F16);
      Shape partial = local;
      if (widen) partial.set_element_type(xla::F32);
      HloInstruction* x = b.Add(hlo->CloneWithNewOperands(partial, operands));
      x->clear_sharding();  // Global shardings mean nothing per device.
      LocalizeAttributes(x);
      auto narrow = [&](HloInstruction* sum) {
        if (!widen) return sum;
        Shape shape = sum->shape();
        shape.set_element_type(type);
        return b.Add(HloInstruction::Create(HloOpcode::kConvert, shape, {sum}));
      };
      if (!plan->all_reduce_groups.empty()) {
        // Summed, then split over the same groups: one reduce-scatter.
        if (std::optional<int64_t> d = ScatterDim(plan->all_reduce_groups, plan->result, target)) {
          HLOC_ASSIGN_OR_RETURN(Shape scattered, target.LocalShape(hlo->shape(), what));
          scattered.set_element_type(x->shape().element_type());
          x = narrow(b.ReduceScatter(x, scattered, *d, plan->all_reduce_groups, plan->reducer));
          value.emplace(hlo, std::make_pair(x, target));
          continue;
        }
        x = narrow(b.AllReduce(x, plan->all_reduce_groups, plan->reducer));
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
      HLOC_ASSIGN_OR_RETURN(
          HloInstruction * x,
          operand_as(
              o, TileSharding::Replicated(o->shape().IsArray() ? o->shape().rank() : 0, devices)));
      operands.push_back(x);
    }
    HloInstruction* x = b.Add(hlo->CloneWithNewOperands(hlo->shape(), operands));
    x->clear_sharding();
    if (array) {
      HLOC_ASSIGN_OR_RETURN(
          x, b.Reshard(x, hlo->shape(), TileSharding::Replicated(hlo->shape().rank(), devices),
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
