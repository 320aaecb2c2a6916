// ShardMapToPerDevice (see shard_map_to_per_device.h).
#include "passes/sharding/shard_map_to_per_device.h"

#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/status_macros.h"
#include "passes/call_inliner.h"

namespace hloc {
namespace {

constexpr char kGlobalToLocal[] = "xla.sdy.GlobalToLocalShape";
constexpr char kLocalToGlobal[] = "xla.sdy.LocalToGlobalShape";

bool IsCustomCall(const HloInstruction* hlo, absl::string_view target) {
  return hlo->opcode() == HloOpcode::kCustomCall && hlo->attrs().custom_call_target == target;
}

template <typename... Args>
absl::Status Unsupported(const HloInstruction& hlo, const Args&... args) {
  return absl::UnimplementedError(absl::StrCat("shard-map-to-per-device: %", hlo.name(), ": ",
                                               args...));
}

template <typename... Args>
absl::Status Malformed(absl::string_view what, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat("shard-map-to-per-device: ", what, ": ",
                                                 args...));
}

// `{mesh = #sdy.mesh<["x"=2, "y"=2]>}` -> axis names and sizes.
// Meshes without axes (`empty_mesh = #sdy.mesh<[]>`, which JAX adds for
// replicated arguments) are skipped: they split nothing.
absl::Status ParseMesh(absl::string_view all, ShardMapSignature* signature) {
  absl::string_view text;
  for (size_t at = all.find("#sdy.mesh<"); at != absl::string_view::npos;) {
    const size_t next = all.find("#sdy.mesh<", at + 1);
    absl::string_view mesh = all.substr(at, next == absl::string_view::npos ? all.npos : next - at);
    if (!absl::StartsWith(mesh, "#sdy.mesh<[]>")) {
      if (!text.empty()) {
        return absl::UnimplementedError(
            absl::StrCat("shard-map-to-per-device: more than one mesh with axes in ", all));
      }
      text = mesh;
    }
    at = next;
  }
  const size_t open = text.find("#sdy.mesh<[");
  if (open == absl::string_view::npos) return Malformed("xla.sdy.meshes", "no #sdy.mesh in ", all);
  const size_t close = text.find(']', open);
  if (close == absl::string_view::npos) return Malformed("xla.sdy.meshes", "unclosed ", text);
  if (text.find("device_ids", close) != absl::string_view::npos) {
    return absl::UnimplementedError(
        "shard-map-to-per-device: meshes with explicit device_ids (only iota order)");
  }
  absl::string_view axes = text.substr(open + 11, close - open - 11);
  while (!axes.empty()) {
    const size_t q1 = axes.find('"'), q2 = axes.find('"', q1 + 1), eq = axes.find('=', q2);
    if (q1 == absl::string_view::npos || q2 == absl::string_view::npos ||
        eq == absl::string_view::npos) {
      return Malformed("xla.sdy.meshes", "bad axis list in ", text);
    }
    size_t end = axes.find(',', eq);
    if (end == absl::string_view::npos) end = axes.size();
    int64_t size = 0;
    if (!absl::SimpleAtoi(axes.substr(eq + 1, end - eq - 1), &size) || size < 1 || size > 4096) {
      return Malformed("xla.sdy.meshes", "bad axis size in ", text);
    }
    signature->axis_names.emplace_back(axes.substr(q1 + 1, q2 - q1 - 1));
    signature->axis_sizes.push_back(size);
    axes = end < axes.size() ? axes.substr(end + 1) : absl::string_view();
  }
  if (signature->axis_names.empty()) return Malformed("xla.sdy.meshes", "no axes in ", text);
  return absl::OkStatus();
}

// `#sdy.sharding_per_value<[<@mesh, [{"d"}, {}]>, ...]>` -> per value, per
// dimension, the axis indices.
absl::StatusOr<std::vector<std::vector<std::vector<int64_t>>>> ParseShardings(
    const HloInstruction& hlo, absl::string_view text, const ShardMapSignature& signature) {
  std::vector<std::vector<std::vector<int64_t>>> values;
  size_t pos = 0;
  while ((pos = text.find("<@", pos)) != absl::string_view::npos) {
    const size_t open = text.find('[', pos);
    if (open == absl::string_view::npos) return Unsupported(hlo, "bad sharding ", text);
    std::vector<std::vector<int64_t>>& dims = values.emplace_back();
    size_t i = open + 1;
    for (; i < text.size() && text[i] != ']'; ++i) {
      if (text[i] != '{') continue;
      const size_t close = text.find('}', i);
      if (close == absl::string_view::npos) return Unsupported(hlo, "bad sharding ", text);
      absl::string_view dim = text.substr(i + 1, close - i - 1);
      std::vector<int64_t>& axes = dims.emplace_back();
      if (dim.find('?') != absl::string_view::npos || dim.find(':') != absl::string_view::npos) {
        return Unsupported(hlo, "open or sub-axis dimension sharding {", dim, "}");
      }
      size_t q = 0;
      while ((q = dim.find('"', q)) != absl::string_view::npos) {
        const size_t q2 = dim.find('"', q + 1);
        if (q2 == absl::string_view::npos) return Unsupported(hlo, "bad sharding ", text);
        const absl::string_view name = dim.substr(q + 1, q2 - q - 1);
        int64_t axis = -1;
        for (size_t a = 0; a < signature.axis_names.size(); ++a) {
          if (signature.axis_names[a] == name) axis = static_cast<int64_t>(a);
        }
        if (axis < 0) return Unsupported(hlo, "axis \"", name, "\" is not in the mesh");
        axes.push_back(axis);
        q = q2 + 1;
      }
      i = close;
    }
    pos = i;
  }
  return values;
}

absl::StatusOr<std::vector<std::vector<std::vector<int64_t>>>> ShardingsOf(
    const HloInstruction& hlo, absl::string_view key, const ShardMapSignature& signature) {
  const std::string* text = hlo.FindFrontendAttribute(key);
  if (text == nullptr) return Unsupported(hlo, "no ", key, " frontend attribute");
  return ParseShardings(hlo, *text, signature);
}

// Checks `axes` fit `global` -> `local`, returns the value.
absl::StatusOr<ShardedValue> MakeValue(const HloInstruction& hlo, const Shape& global,
                                       const Shape& local, std::vector<std::vector<int64_t>> axes,
                                       const ShardMapSignature& signature) {
  if (!global.IsArray() || !local.IsArray() || global.rank() != local.rank() ||
      static_cast<int64_t>(axes.size()) != global.rank()) {
    return Unsupported(hlo, "sharding of rank ", axes.size(), " for ", global.ToString(false),
                       " -> ", local.ToString(false));
  }
  for (int64_t d = 0; d < global.rank(); ++d) {
    int64_t pieces = 1;
    for (int64_t a : axes[d]) pieces *= signature.axis_sizes[a];
    if (local.dimensions(d) * pieces != global.dimensions(d)) {
      return Unsupported(hlo, "dimension ", d, " of ", global.ToString(false), " in ", pieces,
                         " pieces is not ", local.ToString(false));
    }
  }
  return ShardedValue{global, local, std::move(axes)};
}

std::vector<int64_t> Coordinates(const ShardMapSignature& signature, int64_t device) {
  std::vector<int64_t> coords(signature.axis_sizes.size());
  for (int64_t a = static_cast<int64_t>(coords.size()) - 1; a >= 0; --a) {
    coords[a] = device % signature.axis_sizes[a];
    device /= signature.axis_sizes[a];
  }
  return coords;
}

// Start of device's piece in each dimension.
std::vector<int64_t> PieceStart(const ShardMapSignature& signature, const ShardedValue& value,
                                int64_t device) {
  const std::vector<int64_t> coords = Coordinates(signature, device);
  std::vector<int64_t> start(value.global_shape.rank(), 0);
  for (int64_t d = 0; d < value.global_shape.rank(); ++d) {
    int64_t index = 0;
    for (int64_t a : value.dimension_axes[d]) index = index * signature.axis_sizes[a] + coords[a];
    start[d] = index * value.local_shape.dimensions(d);
  }
  return start;
}

// Copies between a local piece and the global array at `start`.
void CopyPiece(const ShardedValue& value, const std::vector<int64_t>& start, const Literal& from,
               Literal* to, bool to_global) {
  const Shape& local = value.local_shape;
  const Shape& global = value.global_shape;
  const int64_t rank = local.rank();
  const int w = ByteWidth(local.element_type());
  std::vector<int64_t> index(rank, 0);
  const int64_t n = from.element_count() == 0 ? 0 : (to_global ? from : *to).element_count();
  for (int64_t e = 0; e < n; ++e) {
    int64_t g = 0;
    for (int64_t d = 0; d < rank; ++d) g = g * global.dimensions(d) + start[d] + index[d];
    const int64_t src = to_global ? e : g, dst = to_global ? g : e;
    std::memcpy(to->mutable_raw() + dst * w, from.raw() + src * w, w);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < local.dimensions(d)) break;
      index[d] = 0;
    }
  }
}

}  // namespace

int64_t ShardMapSignature::device_count() const {
  int64_t n = 1;
  for (int64_t s : axis_sizes) n *= s;
  return n;
}

absl::StatusOr<Literal> ShardOf(const ShardMapSignature& signature, const ShardedValue& value,
                                const Literal& global, int64_t device) {
  if (!global.shape().Compatible(value.global_shape)) {
    return absl::InvalidArgumentError(absl::StrCat("argument of shape ",
                                                   global.shape().ToString(false), " is not ",
                                                   value.global_shape.ToString(false)));
  }
  if (device < 0 || device >= signature.device_count()) {
    return absl::InvalidArgumentError(absl::StrCat("no device ", device));
  }
  Literal piece(value.local_shape);
  CopyPiece(value, PieceStart(signature, value, device), global, &piece, /*to_global=*/false);
  return piece;
}

absl::StatusOr<Literal> Unshard(const ShardMapSignature& signature, const ShardedValue& value,
                                absl::Span<const Literal> per_device) {
  if (static_cast<int64_t>(per_device.size()) != signature.device_count()) {
    return absl::InvalidArgumentError(absl::StrCat(per_device.size(), " pieces for ",
                                                   signature.device_count(), " devices"));
  }
  std::vector<bool> used(signature.axis_sizes.size(), false);
  for (const auto& axes : value.dimension_axes) {
    for (int64_t a : axes) used[a] = true;
  }
  Literal global(value.global_shape);
  for (int64_t d = 0; d < signature.device_count(); ++d) {
    const std::vector<int64_t> coords = Coordinates(signature, d);
    bool first_copy = true;
    for (size_t a = 0; a < coords.size(); ++a) first_copy &= used[a] || coords[a] == 0;
    if (!first_copy) continue;
    if (!per_device[d].shape().Compatible(value.local_shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", d, "'s piece has shape ", per_device[d].shape().ToString(false),
          ", expected ", value.local_shape.ToString(false)));
    }
    CopyPiece(value, PieceStart(signature, value, d), per_device[d], &global,
              /*to_global=*/true);
  }
  return global;
}

bool HasShardMap(const HloModule& module) {
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* hlo : c->instructions()) {
      if (IsCustomCall(hlo, kGlobalToLocal)) return true;
    }
  }
  return false;
}

absl::StatusOr<bool> ShardMapToPerDevice::Run(HloModule& module) {
  if (!HasShardMap(module)) return false;
  ShardMapSignature signature;
  const auto& attrs = module.config().frontend_attributes.map();
  auto mesh = attrs.find("xla.sdy.meshes");
  if (mesh == attrs.end()) {
    return Malformed("module " + module.name(), "no xla.sdy.meshes frontend attribute");
  }
  HLOC_RETURN_IF_ERROR(ParseMesh(mesh->second, &signature));
  HLOC_RETURN_IF_ERROR(CallInliner().Run(module).status());
  HloComputation* entry = module.entry();
  // Drop what inlining left uncalled, then no shard_map may remain outside the entry.
  for (bool removed = true; removed;) {
    std::vector<HloComputation*> uncalled;
    for (HloComputation* c : module.computations()) {
      if (c != entry && module.CallersOf(c).empty()) uncalled.push_back(c);
    }
    removed = !uncalled.empty();
    if (removed) HLOC_RETURN_IF_ERROR(module.RemoveComputations(uncalled));
  }
  for (const HloComputation* c : module.computations()) {
    if (c == entry) continue;
    for (const HloInstruction* hlo : c->instructions()) {
      if (IsCustomCall(hlo, kGlobalToLocal) || IsCustomCall(hlo, kLocalToGlobal)) {
        return Unsupported(*hlo, "shard_map inside ", c->name(), " (only in the entry)");
      }
    }
  }
  signature.inputs.resize(entry->num_parameters());
  std::vector<bool> seen(entry->num_parameters(), false);
  std::vector<HloInstruction*> to_local;
  for (HloInstruction* hlo : entry->instructions()) {
    if (IsCustomCall(hlo, kGlobalToLocal)) to_local.push_back(hlo);
  }
  for (HloInstruction* cc : to_local) {
    HLOC_ASSIGN_OR_RETURN(auto shardings, ShardingsOf(*cc, "xla.sdy.in_shardings", signature));
    const int64_t n = cc->operand_count();
    if (static_cast<int64_t>(shardings.size()) != n ||
        (cc->shape().IsTuple() ? cc->shape().tuple_shapes_size() : 1) != n) {
      return Unsupported(*cc, n, " operands, ", shardings.size(), " shardings, result ",
                         cc->shape().ToString(false));
    }
    std::vector<HloInstruction*> params;
    for (int64_t i = 0; i < n; ++i) {
      HloInstruction* param = cc->operands()[i];
      if (param->opcode() != HloOpcode::kParameter || param->users().size() != 1) {
        return Unsupported(*cc, "operand ", i, " is not an entry parameter used only here");
      }
      const Shape& local = cc->shape().IsTuple() ? cc->shape().tuple_shapes(i) : cc->shape();
      HLOC_ASSIGN_OR_RETURN(ShardedValue value, MakeValue(*cc, param->shape(), local,
                                                          shardings[i], signature));
      signature.inputs[param->parameter_number()] = value;
      seen[param->parameter_number()] = true;
      params.push_back(param);
    }
    std::vector<HloInstruction*> users = cc->users();
    for (HloInstruction* user : users) {
      if (!cc->shape().IsTuple()) break;
      if (user->opcode() != HloOpcode::kGetTupleElement) {
        return Unsupported(*cc, "used by %", user->name(), ", not get-tuple-element");
      }
      HLOC_RETURN_IF_ERROR(user->ReplaceAllUsesWith(params[user->tuple_index()]));
      HLOC_RETURN_IF_ERROR(entry->RemoveInstruction(user));
    }
    if (!cc->shape().IsTuple()) HLOC_RETURN_IF_ERROR(cc->ReplaceAllUsesWith(params[0]));
    HLOC_RETURN_IF_ERROR(entry->RemoveInstruction(cc));
    for (int64_t i = 0; i < n; ++i) {
      params[i]->set_shape(signature.inputs[params[i]->parameter_number()].local_shape);
    }
  }
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    if (!seen[p]) {
      return Unsupported(*entry->parameter(p), "parameter ", p,
                         " is used outside shard_map (global computation needs SPMD partitioning)");
    }
  }
  // Results: each root element is a LocalToGlobalShape value.
  HloInstruction* root = entry->root();
  signature.tuple_result = root->opcode() == HloOpcode::kTuple;
  std::vector<HloInstruction*> elements =
      signature.tuple_result ? root->operands() : std::vector<HloInstruction*>{root};
  std::vector<HloInstruction*> locals;
  for (HloInstruction* e : elements) {
    // Through the tuples that inlining left.
    while (e->opcode() == HloOpcode::kGetTupleElement &&
           e->operands()[0]->opcode() == HloOpcode::kTuple) {
      e = e->operands()[0]->operands()[e->tuple_index()];
    }
    HloInstruction* cc = e;
    int64_t j = 0;
    if (e->opcode() == HloOpcode::kGetTupleElement) {
      cc = e->operands()[0];
      j = e->tuple_index();
    }
    if (!IsCustomCall(cc, kLocalToGlobal) || (cc == e && cc->shape().IsTuple())) {
      return Unsupported(*e, "result is not a shard_map output (global computation after "
                             "shard_map needs SPMD partitioning)");
    }
    HLOC_ASSIGN_OR_RETURN(auto shardings, ShardingsOf(*cc, "xla.sdy.out_shardings", signature));
    if (j >= static_cast<int64_t>(shardings.size()) || j >= cc->operand_count()) {
      return Unsupported(*cc, "no sharding for output ", j);
    }
    HloInstruction* local = cc->operands()[j];
    HLOC_ASSIGN_OR_RETURN(ShardedValue value,
                          MakeValue(*cc, e->shape(), local->shape(), shardings[j], signature));
    signature.outputs.push_back(std::move(value));
    locals.push_back(local);
  }
  HloInstruction* new_root =
      signature.tuple_result ? entry->AddInstruction(HloInstruction::CreateTuple(locals))
                             : locals[0];
  entry->set_root(new_root);
  // Drop the old root and what only it used; a shard_map output still used
  // feeds global computation.
  if (root != new_root) HLOC_RETURN_IF_ERROR(entry->RemoveInstructionAndUnusedOperands(root));
  for (HloInstruction* hlo : entry->instructions()) {
    if (!IsCustomCall(hlo, kLocalToGlobal)) continue;
    if (!hlo->users().empty()) {
      return Unsupported(*hlo->users()[0], "uses a shard_map output (global computation "
                                           "needs SPMD partitioning)");
    }
  }
  std::vector<HloInstruction*> left;
  for (HloInstruction* hlo : entry->instructions()) {
    if (IsCustomCall(hlo, kLocalToGlobal)) left.push_back(hlo);
  }
  for (HloInstruction* hlo : left) HLOC_RETURN_IF_ERROR(entry->RemoveInstruction(hlo));
  // The entry's signature changed: its recorded layout no longer applies.
  module.mutable_config()->entry_computation_layout.reset();
  // JAX's lowering (jax.jit(f).lower(...)) leaves the device count to the
  // compile options: a module naming one device takes the mesh's.
  if (module.config().num_partitions * module.config().replica_count == 1) {
    module.mutable_config()->num_partitions = signature.device_count();
  }
  if (static_cast<int64_t>(signature.device_count()) !=
      module.config().num_partitions * module.config().replica_count) {
    return Malformed("module " + module.name(), "mesh of ", signature.device_count(),
                     " devices but num_partitions=", module.config().num_partitions,
                     " replica_count=", module.config().replica_count);
  }
  if (signature_ != nullptr) *signature_ = std::move(signature);
  return true;
}

}  // namespace hloc
