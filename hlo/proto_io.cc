// Modules and snapshots <-> HloModuleProto / HloSnapshot (see proto_io.h).
//
// Reading resolves every id before building anything: computation ids, then
// per-computation instruction ids, then the call graph (which must be
// acyclic), then each computation's operand/control graph (which must be
// acyclic and stay inside the computation). Only then are instructions
// created, operands first, so the IR never sees a dangling reference.
//
// Writing numbers instructions and computations by their IR unique ids
// (fresh ids where those are missing or repeated) and emits computations
// callees-first and instructions operands-first.
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/proto_io.h"
#include "hlo/proto_io_internal.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

using proto_io_internal::CalledComputationsInProtoOrder;
using proto_io_internal::CopyFieldsExcept;
using proto_io_internal::InstructionFieldsToProto;
using proto_io_internal::InstructionFromProto;

absl::Status ComputationError(const xla::HloComputationProto& c, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("computation '", c.name(), "' (id ", c.id(), "): ", message));
}

absl::Status InstructionError(const xla::HloComputationProto& c,
                              const xla::HloInstructionProto& i, absl::string_view message) {
  return ComputationError(c, absl::StrCat("instruction '", i.name(), "' (id ", i.id(), "): ",
                                          message));
}

// Ids and call edges of the whole proto, checked before anything is built.
struct ProtoIndex {
  absl::flat_hash_map<int64_t, int> computation_of_id;
  // Per computation: instruction id -> position in the computation proto.
  std::vector<absl::flat_hash_map<int64_t, int>> instruction_of_id;
  // Instruction id -> computation holding it (first one), for messages.
  absl::flat_hash_map<int64_t, int> home_of_instruction_id;
  std::vector<std::vector<int>> callees;
};

absl::Status IndexProto(const xla::HloModuleProto& proto, ProtoIndex* index) {
  const int n = proto.computations_size();
  index->instruction_of_id.resize(n);
  index->callees.resize(n);
  for (int i = 0; i < n; ++i) {
    const auto& c = proto.computations(i);
    auto [it, inserted] = index->computation_of_id.emplace(c.id(), i);
    if (!inserted) {
      return ComputationError(c, absl::StrCat("shares its id with computation '",
                                              proto.computations(it->second).name(), "'"));
    }
    for (int j = 0; j < c.instructions_size(); ++j) {
      const auto& instruction = c.instructions(j);
      auto [jt, fresh] = index->instruction_of_id[i].emplace(instruction.id(), j);
      if (!fresh) {
        return InstructionError(c, instruction,
                                absl::StrCat("shares its id with instruction '",
                                             c.instructions(jt->second).name(), "'"));
      }
      index->home_of_instruction_id.emplace(instruction.id(), i);
    }
  }
  for (int i = 0; i < n; ++i) {
    const auto& c = proto.computations(i);
    for (const auto& instruction : c.instructions()) {
      for (int64_t id : instruction.called_computation_ids()) {
        auto it = index->computation_of_id.find(id);
        if (it == index->computation_of_id.end()) {
          return InstructionError(c, instruction,
                                  absl::StrCat("calls unknown computation id ", id));
        }
        index->callees[i].push_back(it->second);
      }
    }
  }
  return absl::OkStatus();
}

// Rejects call cycles: a computation calling itself, directly or not.
absl::Status CheckCallGraphAcyclic(const xla::HloModuleProto& proto, const ProtoIndex& index) {
  const int n = proto.computations_size();
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the DFS stack, 2 done.
  std::vector<std::pair<int, size_t>> stack;
  for (int root = 0; root < n; ++root) {
    if (state[root] != 0) continue;
    state[root] = 1;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < index.callees[node].size()) {
        const int callee = index.callees[node][next++];
        if (state[callee] == 1) {
          return ComputationError(proto.computations(callee),
                                  callee == node ? "calls itself"
                                                 : absl::StrCat("calls itself through '",
                                                                proto.computations(node).name(),
                                                                "'"));
        }
        if (state[callee] == 0) {
          state[callee] = 1;
          stack.push_back({callee, 0});
        }
        continue;
      }
      state[node] = 2;
      stack.pop_back();
    }
  }
  return absl::OkStatus();
}

// Position (in the computation proto) of the instruction `id` that
// `user` refers to, or an error naming the reference.
absl::StatusOr<int> ResolveLocal(const xla::HloModuleProto& proto, const ProtoIndex& index,
                                 int computation, const xla::HloInstructionProto& user,
                                 int64_t id, absl::string_view what) {
  const auto& local = index.instruction_of_id[computation];
  auto it = local.find(id);
  if (it != local.end()) return it->second;
  const auto& c = proto.computations(computation);
  auto home = index.home_of_instruction_id.find(id);
  if (home != index.home_of_instruction_id.end()) {
    const auto& other = proto.computations(home->second);
    return InstructionError(
        c, user,
        absl::StrCat(what, " id ", id, " is instruction '",
                     other.instructions(index.instruction_of_id[home->second].at(id)).name(),
                     "' of another computation, '", other.name(), "'"));
  }
  return InstructionError(c, user, absl::StrCat(what, " id ", id, " names no instruction"));
}

// Operand and control-predecessor positions of each instruction.
absl::StatusOr<std::vector<std::vector<int>>> ResolveEdges(const xla::HloModuleProto& proto,
                                                          const ProtoIndex& index, int ci) {
  const auto& c = proto.computations(ci);
  std::vector<std::vector<int>> deps(c.instructions_size());
  for (int j = 0; j < c.instructions_size(); ++j) {
    const auto& instruction = c.instructions(j);
    for (int64_t id : instruction.operand_ids()) {
      HLOC_ASSIGN_OR_RETURN(int d, ResolveLocal(proto, index, ci, instruction, id, "operand"));
      deps[j].push_back(d);
    }
    for (int64_t id : instruction.control_predecessor_ids()) {
      HLOC_ASSIGN_OR_RETURN(int d,
                            ResolveLocal(proto, index, ci, instruction, id, "control predecessor"));
      deps[j].push_back(d);
    }
  }
  return deps;
}

// Dependencies-first order of the computation's instructions; the proto's
// own order when it already is one. A cycle is an error.
absl::StatusOr<std::vector<int>> TopologicalOrder(const xla::HloComputationProto& c,
                                                  const std::vector<std::vector<int>>& deps) {
  const int m = c.instructions_size();
  std::vector<int> order;
  order.reserve(m);
  std::vector<uint8_t> state(m, 0);
  std::vector<std::pair<int, size_t>> stack;
  for (int root = 0; root < m; ++root) {
    if (state[root] != 0) continue;
    state[root] = 1;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < deps[node].size()) {
        const int dep = deps[node][next++];
        if (state[dep] == 1) {
          return InstructionError(c, c.instructions(dep),
                                  "is part of a cycle in the operand/control graph");
        }
        if (state[dep] == 0) {
          state[dep] = 1;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[node] = 2;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

absl::Status CheckParameterNumbers(const xla::HloComputationProto& c) {
  int64_t count = 0;
  for (const auto& i : c.instructions()) count += i.opcode() == "parameter";
  std::vector<bool> seen(count, false);
  for (const auto& i : c.instructions()) {
    if (i.opcode() != "parameter") continue;
    const int64_t number = i.parameter_number();
    if (number < 0 || number >= count) {
      return InstructionError(c, i, absl::StrCat("parameter number ", number,
                                                 " is out of range for ", count, " parameters"));
    }
    if (seen[number]) {
      return InstructionError(c, i, absl::StrCat("repeats parameter number ", number));
    }
    seen[number] = true;
  }
  return absl::OkStatus();
}

// Builds computation `ci`'s instructions into `computation`; callees exist
// (possibly still empty) in `computations`.
absl::Status BuildComputation(const xla::HloModuleProto& proto, const ProtoIndex& index, int ci,
                              const std::vector<std::unique_ptr<HloComputation>>& computations,
                              std::vector<HloInstruction*>* by_position) {
  const auto& c = proto.computations(ci);
  HloComputation* computation = computations[ci].get();
  HLOC_RETURN_IF_ERROR(CheckParameterNumbers(c));
  HLOC_ASSIGN_OR_RETURN(std::vector<std::vector<int>> deps, ResolveEdges(proto, index, ci));
  HLOC_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(c, deps));
  by_position->assign(c.instructions_size(), nullptr);
  for (int j : order) {
    const auto& ip = c.instructions(j);
    std::vector<HloInstruction*> operands;
    operands.reserve(ip.operand_ids_size());
    for (int k = 0; k < ip.operand_ids_size(); ++k) operands.push_back((*by_position)[deps[j][k]]);
    std::vector<HloComputation*> called;
    for (int64_t id : ip.called_computation_ids()) {
      called.push_back(computations[index.computation_of_id.at(id)].get());
    }
    auto instruction = InstructionFromProto(ip, operands, called);
    if (!instruction.ok()) {
      return absl::Status(instruction.status().code(),
                          absl::StrCat("computation '", c.name(), "': ",
                                       instruction.status().message()));
    }
    (*by_position)[j] = computation->AddInstruction(*std::move(instruction));
  }
  for (int j = 0; j < c.instructions_size(); ++j) {
    for (size_t k = c.instructions(j).operand_ids_size(); k < deps[j].size(); ++k) {
      (*by_position)[deps[j][k]]->AddControlDependencyTo((*by_position)[j]);
    }
  }
  auto root = index.instruction_of_id[ci].find(c.root_id());
  if (root == index.instruction_of_id[ci].end()) {
    return ComputationError(c, absl::StrCat("root_id ", c.root_id(), " names no instruction of it"));
  }
  computation->set_root((*by_position)[root->second]);
  computation->set_execution_thread(c.execution_thread());
  return absl::OkStatus();
}

// Which computation is the entry: by id, else by name.
absl::StatusOr<int> FindEntry(const xla::HloModuleProto& proto, const ProtoIndex& index) {
  auto it = index.computation_of_id.find(proto.entry_computation_id());
  if (it != index.computation_of_id.end() &&
      (proto.entry_computation_name().empty() ||
       proto.computations(it->second).name() == proto.entry_computation_name())) {
    return it->second;
  }
  for (int i = 0; i < proto.computations_size(); ++i) {
    if (!proto.entry_computation_name().empty() &&
        proto.computations(i).name() == proto.entry_computation_name()) {
      return i;
    }
  }
  if (it != index.computation_of_id.end()) return it->second;
  return absl::InvalidArgumentError(absl::StrCat(
      "module '", proto.name(), "' has no entry computation (entry_computation_id ",
      proto.entry_computation_id(), ", entry_computation_name '", proto.entry_computation_name(),
      "')"));
}

absl::Status ReadConfig(const xla::HloModuleProto& proto, const ProtoIndex& index,
                        const std::vector<HloComputation*>& computations,
                        const std::vector<std::vector<HloInstruction*>>& by_position,
                        HloModule* module) {
  HloModuleConfig* config = module->mutable_config();
  if (proto.has_host_program_shape()) {
    auto layout = ProgramShapeFromProto(proto.host_program_shape());
    if (!layout.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("host_program_shape: ", layout.status().message()));
    }
    const ProgramShape entry = module->entry()->ComputeProgramShape();
    bool compatible = layout->parameters.size() == entry.parameters.size() &&
                      layout->result.Compatible(entry.result);
    for (size_t i = 0; compatible && i < entry.parameters.size(); ++i) {
      compatible = layout->parameters[i].Compatible(entry.parameters[i]);
    }
    if (!compatible) {
      return absl::InvalidArgumentError(
          absl::StrCat("host_program_shape ", layout->ToString(),
                       " does not match the entry computation's ", entry.ToString()));
    }
    config->entry_computation_layout = *std::move(layout);
  }
  config->input_output_alias = proto.input_output_alias();
  config->buffer_donor = proto.buffer_donor();
  config->frontend_attributes = proto.frontend_attributes();
  config->is_scheduled = proto.has_schedule();
  using M = xla::HloModuleProto;
  CopyFieldsExcept(proto,
                   {M::kNameFieldNumber, M::kEntryComputationNameFieldNumber,
                    M::kEntryComputationIdFieldNumber, M::kComputationsFieldNumber,
                    M::kHostProgramShapeFieldNumber, M::kInputOutputAliasFieldNumber,
                    M::kBufferDonorFieldNumber, M::kFrontendAttributesFieldNumber,
                    M::kScheduleFieldNumber},
                   &config->carried);
  if (!proto.has_schedule()) return absl::OkStatus();
  // Keep the schedule in terms of the IR's unique ids (see ModuleToProto).
  auto* sequences = config->carried.mutable_schedule()->mutable_sequences();
  for (const auto& [computation_id, sequence] : proto.schedule().sequences()) {
    auto c = index.computation_of_id.find(computation_id);
    if (c == index.computation_of_id.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule names unknown computation id ", computation_id));
    }
    auto& translated = (*sequences)[computations[c->second]->unique_id()];
    for (int64_t id : sequence.instruction_ids()) {
      auto i = index.instruction_of_id[c->second].find(id);
      if (i == index.instruction_of_id[c->second].end()) {
        return ComputationError(proto.computations(c->second),
                                absl::StrCat("schedule names unknown instruction id ", id));
      }
      translated.add_instruction_ids(by_position[c->second][i->second]->unique_id());
    }
  }
  return absl::OkStatus();
}

// ---- writing ----

// Ids for writing: each object's own id when it is non-negative and not yet
// taken, fresh ids above all of those otherwise.
template <typename T>
absl::flat_hash_map<const T*, int64_t> AssignIds(const std::vector<const T*>& objects) {
  absl::flat_hash_map<const T*, int64_t> ids;
  absl::flat_hash_set<int64_t> used;
  std::vector<const T*> pending;
  int64_t next = 0;
  for (const T* object : objects) {
    const int64_t id = object->unique_id();
    if (id >= 0 && used.insert(id).second) {
      ids[object] = id;
      next = std::max(next, id + 1);
    } else {
      pending.push_back(object);
    }
  }
  for (const T* object : pending) ids[object] = next++;
  return ids;
}

// Insertion order when every operand and control predecessor comes first,
// else a post order.
std::vector<HloInstruction*> WriteOrder(const HloComputation& computation) {
  std::vector<HloInstruction*> order = computation.instructions();
  absl::flat_hash_map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (size_t i = 0; i < order.size(); ++i) {
    auto before = [&](const HloInstruction* dep) {
      auto it = position.find(dep);
      return it != position.end() && it->second < i;
    };
    const bool ok = std::all_of(order[i]->operands().begin(), order[i]->operands().end(), before) &&
                    std::all_of(order[i]->control_predecessors().begin(),
                                order[i]->control_predecessors().end(), before);
    if (!ok) return computation.MakeInstructionPostOrder();
  }
  return order;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProto(const xla::HloModuleProto& proto) {
  if (proto.computations_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("module '", proto.name(), "' has no computations"));
  }
  ProtoIndex index;
  HLOC_RETURN_IF_ERROR(IndexProto(proto, &index));
  HLOC_RETURN_IF_ERROR(CheckCallGraphAcyclic(proto, index));
  HLOC_ASSIGN_OR_RETURN(const int entry, FindEntry(proto, index));

  const int n = proto.computations_size();
  std::vector<std::unique_ptr<HloComputation>> owned(n);
  for (int i = 0; i < n; ++i) {
    owned[i] = std::make_unique<HloComputation>(proto.computations(i).name());
  }
  std::vector<std::vector<HloInstruction*>> by_position(n);
  for (int i = 0; i < n; ++i) {
    HLOC_RETURN_IF_ERROR(BuildComputation(proto, index, i, owned, &by_position[i]));
  }
  for (int i = 0; i < n; ++i) {
    for (HloInstruction* instruction : by_position[i]) {
      if (instruction->opcode() != HloOpcode::kFusion) continue;
      HloComputation* fused = instruction->called_computations()[0];
      if (fused->fusion_instruction() != nullptr) {
        return ComputationError(
            proto.computations(i),
            absl::StrCat("fusion '", instruction->name(), "' fuses computation '", fused->name(),
                         "', already fused by '", fused->fusion_instruction()->name(), "'"));
      }
      fused->set_fusion_instruction(instruction);
    }
  }

  auto module = std::make_unique<HloModule>(proto.name());
  std::vector<HloComputation*> computations(n);
  for (int i = 0; i < n; ++i) computations[i] = module->AddComputation(std::move(owned[i]));
  module->set_entry(computations[entry]);
  HLOC_RETURN_IF_ERROR(ReadConfig(proto, index, computations, by_position, module.get()));
  return module;
}

absl::StatusOr<xla::HloModuleProto> ModuleToProto(const HloModule& module) {
  if (module.entry() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("module '", module.name(), "' has no entry computation"));
  }
  const HloModuleConfig& config = module.config();
  const std::vector<HloComputation*> computations = module.MakeComputationPostOrder();
  std::vector<std::vector<HloInstruction*>> orders;
  std::vector<const HloInstruction*> all_instructions;
  for (const HloComputation* c : computations) {
    orders.push_back(WriteOrder(*c));
    all_instructions.insert(all_instructions.end(), orders.back().begin(), orders.back().end());
  }
  const auto computation_ids =
      AssignIds(std::vector<const HloComputation*>(computations.begin(), computations.end()));
  if (!computation_ids.contains(module.entry())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "module '", module.name(), "': the entry computation is not among its computations"));
  }
  const auto instruction_ids = AssignIds(all_instructions);

  xla::HloModuleProto proto = config.carried;
  proto.clear_computations();
  proto.clear_schedule();
  proto.set_name(module.name());
  proto.set_entry_computation_name(module.entry()->name());
  proto.set_entry_computation_id(computation_ids.at(module.entry()));

  absl::flat_hash_map<const HloInstruction*, const xla::HloInstructionProto*> written;
  const xla::HloComputationProto* entry_proto = nullptr;
  for (size_t ci = 0; ci < computations.size(); ++ci) {
    const HloComputation* c = computations[ci];
    auto error = [&](absl::string_view message) {
      return absl::FailedPreconditionError(
          absl::StrCat("computation '", c->name(), "': ", message));
    };
    xla::HloComputationProto* cp = proto.add_computations();
    cp->set_name(c->name());
    cp->set_id(computation_ids.at(c));
    cp->set_execution_thread(c->execution_thread());
    cp->set_is_fusion_computation(c->IsFusionComputation());
    for (const HloInstruction* instruction : orders[ci]) {
      xla::HloInstructionProto* ip = cp->add_instructions();
      InstructionFieldsToProto(*instruction, /*use_carried=*/true, /*write_literal=*/true, ip);
      ip->set_id(instruction_ids.at(instruction));
      for (const HloInstruction* operand : instruction->operands()) {
        if (operand->parent() != c || !instruction_ids.contains(operand)) {
          return error(absl::StrCat("an operand of '", instruction->name(),
                                    "' is not in the computation"));
        }
        ip->add_operand_ids(instruction_ids.at(operand));
      }
      for (const HloInstruction* predecessor : instruction->control_predecessors()) {
        if (predecessor->parent() != c || !instruction_ids.contains(predecessor)) {
          return error(absl::StrCat("a control predecessor of '", instruction->name(),
                                    "' is not in the computation"));
        }
        ip->add_control_predecessor_ids(instruction_ids.at(predecessor));
      }
      for (const HloComputation* callee : CalledComputationsInProtoOrder(*instruction)) {
        auto it = computation_ids.find(callee);
        if (it == computation_ids.end()) {
          return error(absl::StrCat("'", instruction->name(),
                                    "' calls a computation that is not in the module"));
        }
        ip->add_called_computation_ids(it->second);
      }
      written[instruction] = ip;
    }
    if (c->root() == nullptr || !written.contains(c->root())) return error("no root");
    cp->set_root_id(instruction_ids.at(c->root()));
    xla::ProgramShapeProto* program = cp->mutable_program_shape();
    for (int64_t k = 0; k < c->num_parameters(); ++k) {
      const HloInstruction* parameter = c->parameter(k);
      if (parameter == nullptr || !written.contains(parameter)) {
        return error(absl::StrCat("parameter ", k, " is missing"));
      }
      *program->add_parameters() = written.at(parameter)->shape();
      program->add_parameter_names(parameter->name());
    }
    *program->mutable_result() = written.at(c->root())->shape();
    if (c == module.entry()) entry_proto = cp;
  }

  if (config.entry_computation_layout) {
    // Reuse the entry's written shapes where they agree: they keep layout
    // details the IR's shapes do not model.
    const ProgramShape& layout = *config.entry_computation_layout;
    const xla::ProgramShapeProto& entry_program = entry_proto->program_shape();
    xla::ProgramShapeProto* host = proto.mutable_host_program_shape();
    for (size_t i = 0; i < layout.parameters.size(); ++i) {
      const HloInstruction* parameter =
          static_cast<int64_t>(i) < module.entry()->num_parameters() ? module.entry()->parameter(i)
                                                                     : nullptr;
      if (parameter != nullptr && parameter->shape() == layout.parameters[i]) {
        *host->add_parameters() = entry_program.parameters(i);
      } else {
        *host->add_parameters() = ShapeToProto(layout.parameters[i]);
      }
      host->add_parameter_names(i < layout.parameter_names.size() ? layout.parameter_names[i] : "");
    }
    *host->mutable_result() = module.entry()->root()->shape() == layout.result
                                  ? entry_program.result()
                                  : ShapeToProto(layout.result);
  } else {
    *proto.mutable_host_program_shape() = entry_proto->program_shape();
  }
  *proto.mutable_input_output_alias() = config.input_output_alias;
  *proto.mutable_buffer_donor() = config.buffer_donor;
  *proto.mutable_frontend_attributes() = config.frontend_attributes;

  if (config.is_scheduled) {
    // The schedule read from a proto, where it still covers a computation
    // exactly; otherwise the written instruction order.
    const auto& kept = config.carried.schedule().sequences();
    auto* sequences = proto.mutable_schedule()->mutable_sequences();
    for (size_t ci = 0; ci < computations.size(); ++ci) {
      const HloComputation* c = computations[ci];
      if (c->IsFusionComputation()) continue;
      absl::flat_hash_map<int64_t, const HloInstruction*> by_unique_id;
      for (const HloInstruction* i : orders[ci]) by_unique_id[i->unique_id()] = i;
      std::vector<const HloInstruction*> sequence;
      auto it = kept.find(c->unique_id());
      if (it != kept.end() && it->second.instruction_ids_size() == static_cast<int>(orders[ci].size())) {
        absl::flat_hash_set<const HloInstruction*> seen;
        for (int64_t id : it->second.instruction_ids()) {
          auto found = by_unique_id.find(id);
          if (found == by_unique_id.end() || !seen.insert(found->second).second) break;
          sequence.push_back(found->second);
        }
      }
      if (sequence.size() != orders[ci].size()) {
        sequence.assign(orders[ci].begin(), orders[ci].end());
      }
      auto& out = (*sequences)[computation_ids.at(c)];
      for (const HloInstruction* i : sequence) out.add_instruction_ids(instruction_ids.at(i));
    }
  }
  return proto;
}

void CanonicalizeProtoIds(xla::HloModuleProto* proto) {
  absl::flat_hash_map<int64_t, int64_t> computation_id, instruction_id;
  for (int k = 0; k < proto->computations_size(); ++k) {
    const auto& c = proto->computations(k);
    computation_id.emplace(c.id(), k + 1);
    for (int j = 0; j < c.instructions_size(); ++j) {
      instruction_id.emplace(c.instructions(j).id(), (int64_t{k + 1} << 32) | (j + 1));
    }
  }
  auto renumber = [](const absl::flat_hash_map<int64_t, int64_t>& map, int64_t id) {
    auto it = map.find(id);
    return it == map.end() ? id : it->second;
  };
  auto renumber_all = [&](const absl::flat_hash_map<int64_t, int64_t>& map,
                          google::protobuf::RepeatedField<int64_t>* ids) {
    for (int64_t& id : *ids) id = renumber(map, id);
  };
  for (auto& c : *proto->mutable_computations()) {
    c.set_id(renumber(computation_id, c.id()));
    c.set_root_id(renumber(instruction_id, c.root_id()));
    for (auto& i : *c.mutable_instructions()) {
      i.set_id(renumber(instruction_id, i.id()));
      renumber_all(instruction_id, i.mutable_operand_ids());
      renumber_all(instruction_id, i.mutable_control_predecessor_ids());
      renumber_all(computation_id, i.mutable_called_computation_ids());
    }
  }
  proto->set_entry_computation_id(renumber(computation_id, proto->entry_computation_id()));
  if (proto->has_schedule()) {
    xla::HloScheduleProto schedule;
    for (const auto& [id, sequence] : proto->schedule().sequences()) {
      auto& out = (*schedule.mutable_sequences())[renumber(computation_id, id)];
      for (int64_t i : sequence.instruction_ids()) out.add_instruction_ids(renumber(instruction_id, i));
    }
    *proto->mutable_schedule() = std::move(schedule);
  }
}

absl::StatusOr<LoadedSnapshot> SnapshotFromProto(const xla::HloSnapshot& proto) {
  if (!proto.hlo().has_hlo_module()) {
    return absl::InvalidArgumentError("HloSnapshot has no module (hlo.hlo_module)");
  }
  LoadedSnapshot snapshot;
  HLOC_ASSIGN_OR_RETURN(snapshot.module, ModuleFromProto(proto.hlo().hlo_module()));
  for (int i = 0; i < proto.arguments_size(); ++i) {
    auto argument = LiteralFromProto(proto.arguments(i));
    if (!argument.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("snapshot argument ", i, ": ", argument.status().message()));
    }
    snapshot.arguments.push_back(*std::move(argument));
  }
  if (proto.has_result()) {
    auto result = LiteralFromProto(proto.result());
    if (!result.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("snapshot result: ", result.status().message()));
    }
    snapshot.result = *std::move(result);
  }
  snapshot.execution_platform = proto.execution_platform();
  return snapshot;
}

absl::StatusOr<xla::HloSnapshot> SnapshotToProto(const LoadedSnapshot& snapshot) {
  if (snapshot.module == nullptr) return absl::InvalidArgumentError("snapshot has no module");
  xla::HloSnapshot proto;
  HLOC_ASSIGN_OR_RETURN(*proto.mutable_hlo()->mutable_hlo_module(),
                        ModuleToProto(*snapshot.module));
  for (const Literal& argument : snapshot.arguments) {
    *proto.add_arguments() = LiteralToProto(argument);
  }
  if (snapshot.result) *proto.mutable_result() = LiteralToProto(*snapshot.result);
  proto.set_execution_platform(snapshot.execution_platform);
  return proto;
}

}  // namespace hloc
