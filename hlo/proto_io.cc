// Modules and snapshots <-> HloModuleProto / HloSnapshot (see proto_io.h).
//
// Reading (from a parsed message) is proto_io_module_reader.h's ReadModule
// with InstructionFromProto; proto_fast_reader.cc reads wire bytes directly.
//
// Writing numbers instructions and computations by their IR unique ids
// (fresh ids where those are missing or repeated) and emits computations
// callees-first and instructions operands-first.
#include <algorithm>
#include <climits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "hlo/proto_io.h"
#include "hlo/proto_io_internal.h"
#include "hlo/proto_io_module_reader.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

using proto_io_internal::CalledComputationsInProtoOrder;
using proto_io_internal::InstructionFieldsToProto;
using proto_io_internal::InstructionFromProto;

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
  return proto_io_internal::ReadModule(
      proto, proto,
      [](const xla::HloInstructionProto& instruction, absl::Span<HloInstruction* const> operands,
         absl::Span<HloComputation* const> called) {
        return InstructionFromProto(instruction, operands, called);
      });
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

bool ParseProtoQuietly(absl::string_view bytes, google::protobuf::MessageLite* message) {
  if (bytes.size() > INT_MAX) return false;
  google::protobuf::LogSilencer quiet;
  return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace hloc
