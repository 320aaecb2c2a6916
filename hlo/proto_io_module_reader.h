// Reading a module proto's graph into the IR, shared by the two readers:
// ModuleFromProto (proto_io.cc, a parsed xla::HloModuleProto) and
// ModuleFromProtoBytes (proto_fast_reader.cc, wire bytes decoded in place).
// Not a public API.
//
// The reader resolves every id before building anything: computation ids,
// then per-computation instruction ids, then the call graph (which must be
// acyclic), then each computation's operand/control graph (which must be
// acyclic and stay inside the computation). Only then are instructions
// created, operands first, so the IR never sees a dangling reference.
//
// The code is written against a "view" of the module with the accessors of
// the generated messages, so both readers take the same decisions (entry
// choice, instruction order, errors):
//   module:      computations_size(), computations(i), name(),
//                entry_computation_id(), entry_computation_name()
//   computation: name(), id(), root_id(), execution_thread(),
//                instructions_size(), instructions(j)
//   instruction: name(), id(), opcode(), parameter_number(), operand_ids(),
//                operand_ids_size(), control_predecessor_ids(),
//                called_computation_ids()
// xla::HloModuleProto is such a view. Instructions themselves are built by a
// callback, `make(instruction_view, operands, called_computations)`, and the
// module-level settings come from an xla::HloModuleProto `header` (the
// module's fields other than its computations).
#ifndef HLOC_HLO_PROTO_IO_MODULE_READER_H_
#define HLOC_HLO_PROTO_IO_MODULE_READER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/hlo.pb.h"
#include "hlo/module.h"
#include "hlo/proto_io.h"
#include "hlo/proto_io_internal.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace proto_io_internal {

template <typename C>
absl::Status ComputationError(const C& c, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("computation '", c.name(), "' (id ", c.id(), "): ", message));
}

template <typename C, typename I>
absl::Status InstructionError(const C& c, const I& i, absl::string_view message) {
  return ComputationError(c, absl::StrCat("instruction '", i.name(), "' (id ", i.id(), "): ",
                                          message));
}

// Ids and call edges of the whole proto, checked before anything is built.
struct ProtoIndex {
  absl::flat_hash_map<int64_t, int> computation_of_id;
  // Per computation: instruction id -> position in the computation proto.
  std::vector<absl::flat_hash_map<int64_t, int>> instruction_of_id;
  std::vector<std::vector<int>> callees;

  // The first computation holding instruction `id`, or -1 (for messages).
  int HomeOfInstruction(int64_t id) const {
    for (size_t i = 0; i < instruction_of_id.size(); ++i) {
      if (instruction_of_id[i].contains(id)) return static_cast<int>(i);
    }
    return -1;
  }
};

template <typename M>
absl::Status IndexProto(const M& proto, ProtoIndex* index) {
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
    index->instruction_of_id[i].reserve(c.instructions_size());
    for (int j = 0; j < c.instructions_size(); ++j) {
      const auto& instruction = c.instructions(j);
      auto [jt, fresh] = index->instruction_of_id[i].emplace(instruction.id(), j);
      if (!fresh) {
        return InstructionError(c, instruction,
                                absl::StrCat("shares its id with instruction '",
                                             c.instructions(jt->second).name(), "'"));
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    const auto& c = proto.computations(i);
    for (int j = 0; j < c.instructions_size(); ++j) {
      const auto& instruction = c.instructions(j);
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
template <typename M>
absl::Status CheckCallGraphAcyclic(const M& proto, const ProtoIndex& index) {
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
template <typename M, typename I>
absl::StatusOr<int> ResolveLocal(const M& proto, const ProtoIndex& index, int computation,
                                 const I& user, int64_t id, absl::string_view what) {
  const auto& local = index.instruction_of_id[computation];
  auto it = local.find(id);
  if (it != local.end()) return it->second;
  const auto& c = proto.computations(computation);
  const int home = index.HomeOfInstruction(id);
  if (home >= 0) {
    const auto& other = proto.computations(home);
    return InstructionError(
        c, user,
        absl::StrCat(what, " id ", id, " is instruction '",
                     other.instructions(index.instruction_of_id[home].at(id)).name(),
                     "' of another computation, '", other.name(), "'"));
  }
  return InstructionError(c, user, absl::StrCat(what, " id ", id, " names no instruction"));
}

// Operand and control-predecessor positions of each instruction, in one
// array: instruction j's are targets[begin[j] .. begin[j + 1]), operands
// first.
struct Edges {
  std::vector<int> begin;
  std::vector<int> targets;
  size_t size(int j) const { return begin[j + 1] - begin[j]; }
  int at(int j, size_t k) const { return targets[begin[j] + k]; }
};

template <typename M>
absl::StatusOr<Edges> ResolveEdges(const M& proto, const ProtoIndex& index, int ci) {
  const auto& c = proto.computations(ci);
  Edges edges;
  edges.begin.reserve(c.instructions_size() + 1);
  edges.begin.push_back(0);
  for (int j = 0; j < c.instructions_size(); ++j) {
    const auto& instruction = c.instructions(j);
    for (int64_t id : instruction.operand_ids()) {
      HLOC_ASSIGN_OR_RETURN(int d, ResolveLocal(proto, index, ci, instruction, id, "operand"));
      edges.targets.push_back(d);
    }
    for (int64_t id : instruction.control_predecessor_ids()) {
      HLOC_ASSIGN_OR_RETURN(int d,
                            ResolveLocal(proto, index, ci, instruction, id, "control predecessor"));
      edges.targets.push_back(d);
    }
    edges.begin.push_back(static_cast<int>(edges.targets.size()));
  }
  return edges;
}

// Dependencies-first order of the computation's instructions; the proto's
// own order when it already is one. A cycle is an error.
template <typename C>
absl::StatusOr<std::vector<int>> TopologicalOrder(const C& c, const Edges& deps) {
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
      if (next < deps.size(node)) {
        const int dep = deps.at(node, next++);
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

template <typename C>
absl::Status CheckParameterNumbers(const C& c) {
  int64_t count = 0;
  for (int j = 0; j < c.instructions_size(); ++j) count += c.instructions(j).opcode() == "parameter";
  std::vector<bool> seen(count, false);
  for (int j = 0; j < c.instructions_size(); ++j) {
    const auto& i = c.instructions(j);
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

// Builds computation `ci`'s instructions into `computations[ci]`; callees
// exist (possibly still empty) in `computations`.
template <typename M, typename Make>
absl::Status BuildComputation(const M& proto, const ProtoIndex& index, int ci,
                              const std::vector<std::unique_ptr<HloComputation>>& computations,
                              const Make& make, std::vector<HloInstruction*>* by_position) {
  const auto& c = proto.computations(ci);
  HloComputation* computation = computations[ci].get();
  HLOC_RETURN_IF_ERROR(CheckParameterNumbers(c));
  HLOC_ASSIGN_OR_RETURN(Edges deps, ResolveEdges(proto, index, ci));
  HLOC_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(c, deps));
  by_position->assign(c.instructions_size(), nullptr);
  // Uses of each instruction as an operand: its users' vector is sized once.
  std::vector<int> uses(c.instructions_size(), 0);
  for (int j = 0; j < c.instructions_size(); ++j) {
    for (int k = 0; k < c.instructions(j).operand_ids_size(); ++k) ++uses[deps.at(j, k)];
  }
  std::vector<HloInstruction*> operands;
  std::vector<HloComputation*> called;
  for (int j : order) {
    const auto& ip = c.instructions(j);
    operands.clear();
    for (int k = 0; k < ip.operand_ids_size(); ++k) operands.push_back((*by_position)[deps.at(j, k)]);
    called.clear();
    for (int64_t id : ip.called_computation_ids()) {
      called.push_back(computations[index.computation_of_id.at(id)].get());
    }
    auto instruction = make(ip, operands, called);
    if (!instruction.ok()) {
      return absl::Status(instruction.status().code(),
                          absl::StrCat("computation '", c.name(), "': ",
                                       instruction.status().message()));
    }
    (*by_position)[j] = computation->AddInstruction(*std::move(instruction));
    if (uses[j] > 0) (*by_position)[j]->ReserveUsers(uses[j]);
  }
  for (int j = 0; j < c.instructions_size(); ++j) {
    for (size_t k = c.instructions(j).operand_ids_size(); k < deps.size(j); ++k) {
      (*by_position)[deps.at(j, k)]->AddControlDependencyTo((*by_position)[j]);
    }
  }
  auto root = index.instruction_of_id[ci].find(c.root_id());
  if (root == index.instruction_of_id[ci].end()) {
    return ComputationError(c, absl::StrCat("root_id ", c.root_id(), " names no instruction of it"));
  }
  computation->set_root((*by_position)[root->second]);
  computation->set_execution_thread(std::string(c.execution_thread()));
  return absl::OkStatus();
}

// Which computation is the entry: by id, else by name.
template <typename M>
absl::StatusOr<int> FindEntry(const M& proto, const ProtoIndex& index) {
  auto it = index.computation_of_id.find(proto.entry_computation_id());
  const absl::string_view entry_name = proto.entry_computation_name();
  if (it != index.computation_of_id.end() &&
      (entry_name.empty() || absl::string_view(proto.computations(it->second).name()) == entry_name)) {
    return it->second;
  }
  for (int i = 0; i < proto.computations_size(); ++i) {
    if (!entry_name.empty() && absl::string_view(proto.computations(i).name()) == entry_name) {
      return i;
    }
  }
  if (it != index.computation_of_id.end()) return it->second;
  return absl::InvalidArgumentError(absl::StrCat(
      "module '", proto.name(), "' has no entry computation (entry_computation_id ",
      proto.entry_computation_id(), ", entry_computation_name '", entry_name, "')"));
}

// True when `layout` has the entry's parameter and result shapes, layouts
// aside (ComputeProgramShape's, compared without building it).
inline bool MatchesEntry(const ProgramShape& layout, const HloComputation& entry) {
  static const Shape* const kNone = new Shape();
  auto shape_of = [](const HloInstruction* i) -> const Shape& { return i ? i->shape() : *kNone; };
  if (static_cast<int64_t>(layout.parameters.size()) != entry.num_parameters() ||
      !layout.result.Compatible(shape_of(entry.root()))) {
    return false;
  }
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    if (!layout.parameters[i].Compatible(shape_of(entry.parameter(i)))) return false;
  }
  return true;
}

// Module settings from `header` (everything of the module but its
// computations) into the module's config. `host_program_shape`, when set,
// was decoded from the module's bytes by the caller (`header` then has none).
template <typename M>
absl::Status ReadConfig(const M& proto, const xla::HloModuleProto& header,
                        std::optional<ProgramShape> host_program_shape,
                        const ProtoIndex& index, const std::vector<HloComputation*>& computations,
                        const std::vector<std::vector<HloInstruction*>>& by_position,
                        HloModule* module) {
  HloModuleConfig* config = module->mutable_config();
  if (host_program_shape || header.has_host_program_shape()) {
    absl::StatusOr<ProgramShape> layout =
        host_program_shape ? *std::move(host_program_shape)
                           : ProgramShapeFromProto(header.host_program_shape());
    if (!layout.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("host_program_shape: ", layout.status().message()));
    }
    if (!MatchesEntry(*layout, *module->entry())) {
      return absl::InvalidArgumentError(
          absl::StrCat("host_program_shape ", layout->ToString(),
                       " does not match the entry computation's ",
                       module->entry()->ComputeProgramShape().ToString()));
    }
    config->entry_computation_layout = *std::move(layout);
  }
  config->input_output_alias = header.input_output_alias();
  config->buffer_donor = header.buffer_donor();
  config->frontend_attributes = header.frontend_attributes();
  config->is_scheduled = header.has_schedule();
  using P = xla::HloModuleProto;
  CopyFieldsExcept(header,
                   {P::kNameFieldNumber, P::kEntryComputationNameFieldNumber,
                    P::kEntryComputationIdFieldNumber, P::kComputationsFieldNumber,
                    P::kHostProgramShapeFieldNumber, P::kInputOutputAliasFieldNumber,
                    P::kBufferDonorFieldNumber, P::kFrontendAttributesFieldNumber,
                    P::kScheduleFieldNumber},
                   &config->carried);
  if (!header.has_schedule()) return absl::OkStatus();
  // Keep the schedule in terms of the IR's unique ids (see ModuleToProto).
  auto* sequences = config->carried.mutable_schedule()->mutable_sequences();
  for (const auto& [computation_id, sequence] : header.schedule().sequences()) {
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

// The whole module: `proto` is the view of the computations, `header` the
// module's other fields, `make` builds one instruction; `host_program_shape`
// is the header's when the caller decoded it already (see ReadConfig).
template <typename M, typename Make>
absl::StatusOr<std::unique_ptr<HloModule>> ReadModule(
    const M& proto, const xla::HloModuleProto& header, const Make& make,
    std::optional<ProgramShape> host_program_shape = std::nullopt) {
  if (proto.computations_size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("module '", proto.name(), "' has no computations"));
  }
  ProtoIndex index;
  HLOC_RETURN_IF_ERROR(IndexProto(proto, &index));
  HLOC_RETURN_IF_ERROR(CheckCallGraphAcyclic(proto, index));
  HLOC_ASSIGN_OR_RETURN(const int entry, FindEntry(proto, index));

  const int n = proto.computations_size();
  std::vector<std::unique_ptr<HloComputation>> owned(n);
  for (int i = 0; i < n; ++i) {
    owned[i] = std::make_unique<HloComputation>(std::string(proto.computations(i).name()));
  }
  std::vector<std::vector<HloInstruction*>> by_position(n);
  for (int i = 0; i < n; ++i) {
    HLOC_RETURN_IF_ERROR(BuildComputation(proto, index, i, owned, make, &by_position[i]));
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

  auto module = std::make_unique<HloModule>(std::string(proto.name()));
  std::vector<HloComputation*> computations(n);
  for (int i = 0; i < n; ++i) computations[i] = module->AddComputation(std::move(owned[i]));
  module->set_entry(computations[entry]);
  HLOC_RETURN_IF_ERROR(ReadConfig(proto, header, std::move(host_program_shape), index,
                                  computations, by_position, module.get()));
  return module;
}

}  // namespace proto_io_internal
}  // namespace hloc

#endif  // HLOC_HLO_PROTO_IO_MODULE_READER_H_
