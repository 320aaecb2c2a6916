// HLO verifier (see verifier.h). Checks run in three rounds so that each
// round may rely on the previous one:
//   1. module structure: entry, computation ownership, unique names and ids,
//      roots, parameter numbering, operand/user/control edge consistency,
//      called computations that belong to the module;
//   2. acyclicity: no instruction reaches itself through operands and control
//      predecessors, no computation calls itself through the call graph;
//   3. per instruction: valid shapes (all first), per-op operand and called-computation
//      counts, composite calls, fusion back-pointers, and the declared shape
//      against InferShape, collectives' device groups (collective_groups.h);
//      then entry_computation_layout and, when asked, layout preservation;
//      last the module's input_output_alias and buffer_donor against the
//      entry's parameters and result.
#include "hlo/verifier.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/collective_groups.h"
#include "hlo/mesh_replica_groups.h"
#include "hlo/shape_inference.h"
#include "hlo/status_macros.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

std::string ShapeText(const Shape& shape, bool with_layout = false) {
  return shape.ToString(with_layout);
}

absl::Status ModuleError(const HloModule& module, absl::string_view rule,
                         absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("module ", module.name(), ": [", rule, "] ", message));
}

absl::Status ComputationError(const HloComputation& computation, absl::string_view rule,
                              absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("computation ", computation.name(), ": [", rule, "] ", message));
}

absl::Status InstructionError(const HloInstruction& instruction, absl::string_view rule,
                              absl::string_view message) {
  const HloComputation* parent = instruction.parent();
  return absl::InvalidArgumentError(
      absl::StrCat("computation ", parent ? parent->name() : std::string("<none>"),
                   ", instruction %", instruction.name(), ": [", rule, "] ", message));
}

// Equal including layouts; a scalar's missing layout equals its only one ({}).
// The product of [begin, end); -1 when a factor is negative or it overflows.
template <typename It>
int64_t CheckedProduct(It begin, It end) {
  int64_t p = 1;
  for (It it = begin; it != end; ++it) {
    if (*it < 0 || __builtin_mul_overflow(p, static_cast<int64_t>(*it), &p)) return -1;
  }
  return p;
}

// What makes a sharding unusable, or "" when it is well formed: the
// invariants its text form relies on (so a proto-built sharding that breaks
// one would print as text that does not parse).
std::string ShardingProblem(const xla::OpSharding& sharding, bool nested = false) {
  using S = xla::OpSharding;
  switch (sharding.type()) {
    case S::TUPLE:
      if (nested) return "tuple shardings do not nest";
      for (int i = 0; i < sharding.tuple_shardings_size(); ++i) {
        std::string inner = ShardingProblem(sharding.tuple_shardings(i), /*nested=*/true);
        if (!inner.empty()) return absl::StrCat("tuple element ", i, ": ", inner);
      }
      return "";
    case S::MAXIMAL:
      if (sharding.tile_assignment_devices_size() != 1) {
        return absl::StrCat("a maximal sharding names exactly one device, not ",
                            sharding.tile_assignment_devices_size());
      }
      return "";
    case S::OTHER: {
      if (sharding.tile_assignment_dimensions_size() == 0) {
        return "a tiled sharding has no tile dimensions";
      }
      const int64_t tiles = CheckedProduct(sharding.tile_assignment_dimensions().begin(),
                                         sharding.tile_assignment_dimensions().end());
      if (tiles <= 0) return "tile dimensions must be positive";
      if (sharding.iota_reshape_dims_size() > 0) {
        if (CheckedProduct(sharding.iota_reshape_dims().begin(),
                           sharding.iota_reshape_dims().end()) != tiles) {
          return "iota dimensions must hold as many devices as the tile dimensions";
        }
        const auto& perm = sharding.iota_transpose_perm();
        if (!perm.empty()) {
          std::vector<bool> seen(perm.size(), false);
          if (perm.size() != sharding.iota_reshape_dims_size()) {
            return "iota transpose must be a permutation of the iota dimensions";
          }
          for (int32_t p : perm) {
            if (p < 0 || p >= perm.size() || seen[p]) {
              return "iota transpose must be a permutation of the iota dimensions";
            }
            seen[p] = true;
          }
        }
      } else if (tiles != sharding.tile_assignment_devices_size()) {
        return absl::StrCat("tile dimensions hold ", tiles, " devices but ",
                            sharding.tile_assignment_devices_size(), " are listed");
      }
      if (sharding.replicate_on_last_tile_dim() && sharding.last_tile_dims_size() > 0) {
        return "last_tile_dim_replicate and last_tile_dims exclude each other";
      }
      for (int type : sharding.last_tile_dims()) {
        if (type != S::REPLICATED && type != S::MANUAL && type != S::MAXIMAL &&
            type != S::UNREDUCED) {
          return "last_tile_dims hold only replicated, manual, maximal or unreduced";
        }
      }
      return "";
    }
    default:
      if (!xla::OpSharding::Type_IsValid(sharding.type())) {
        return absl::StrCat("sharding type ", sharding.type(), " is not one XLA defines");
      }
      return "";
  }
}

bool SameWithLayouts(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes_size() != b.tuple_shapes_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!SameWithLayouts(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (!a.Compatible(b)) return false;
  if (a.IsArray() && a.rank() == 0) {
    const Layout none;
    return (a.has_layout() ? a.layout() : none) == (b.has_layout() ? b.layout() : none);
  }
  if (a.has_layout() != b.has_layout()) return false;
  return !a.has_layout() || a.layout() == b.layout();
}

bool Contains(const std::vector<HloInstruction*>& list, const HloInstruction* item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// How many computations an opcode calls: exactly `min` == `max`, a range, or
// any (custom-call).
struct CalleeCount {
  size_t min, max;
};

CalleeCount ExpectedCallees(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
    case HloOpcode::kMap:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kScan:
    case HloOpcode::kScatter:
    case HloOpcode::kSort:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAsyncStart:
      return {1, 1};
    case HloOpcode::kWhile:
    case HloOpcode::kSelectAndScatter:
      return {2, 2};
    case HloOpcode::kConditional:
      return {1, SIZE_MAX};
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return {0, 1};
    case HloOpcode::kCustomCall:
      return {0, SIZE_MAX};
    default:
      return {0, 0};
  }
}

class Verifier {
 public:
  Verifier(const HloModule& module, const VerifierOptions& options)
      : module_(module), options_(options) {}

  absl::Status Run() {
    HLOC_RETURN_IF_ERROR(VerifyModuleStructure());
    for (const HloComputation* computation : computations_) {
      HLOC_RETURN_IF_ERROR(VerifyComputationStructure(*computation));
    }
    // Users and control edges last, so a misplaced operand is reported at
    // the instruction that uses it.
    for (const HloComputation* computation : computations_) {
      for (const HloInstruction* instruction : computation->instructions()) {
        HLOC_RETURN_IF_ERROR(VerifyUserAndControlEdges(*computation, *instruction));
      }
    }
    for (const HloComputation* computation : computations_) {
      HLOC_RETURN_IF_ERROR(VerifyAcyclic(*computation));
    }
    HLOC_RETURN_IF_ERROR(VerifyCallGraphAcyclic());
    // Every declared shape is valid before any rule reads operand shapes.
    for (const HloComputation* computation : computations_) {
      for (const HloInstruction* instruction : computation->instructions()) {
        absl::Status valid = ValidateShape(instruction->shape());
        if (!valid.ok()) return InstructionError(*instruction, "valid-shape", valid.message());
        HLOC_RETURN_IF_ERROR(VerifySparsity(*instruction));
        HLOC_RETURN_IF_ERROR(VerifyEnumAttributes(*instruction));
      }
    }
    for (const HloComputation* computation : computations_) {
      for (const HloInstruction* instruction : computation->instructions()) {
        HLOC_RETURN_IF_ERROR(VerifyInstruction(*instruction));
      }
    }
    HLOC_RETURN_IF_ERROR(VerifyEntryLayout());
    return VerifyAliasing();
  }

 private:
  // ---- round 1: structure

  // A dot's N:M sparsity descriptor (carried from the proto): N of every M
  // elements non-zero, 1 <= N < M, on an existing operand dimension.
  absl::Status VerifySparsity(const HloInstruction& instruction) {
    const xla::HloInstructionProto* carried = instruction.carried_proto_fields();
    if (carried == nullptr || !carried->has_sparsity_config()) return absl::OkStatus();
    const xla::SparsityConfig& sparsity = carried->sparsity_config();
    for (int side = 0; side < 2; ++side) {
      const bool lhs = side == 0;
      if (lhs ? !sparsity.has_lhs() : !sparsity.has_rhs()) continue;
      const xla::SparsityConfig::TensorSparsityConfig& c = lhs ? sparsity.lhs() : sparsity.rhs();
      const int64_t operand = lhs ? 0 : 1;
      const int64_t rank = instruction.operand_count() > operand && instruction.operand(operand)
                               ? instruction.operand(operand)->shape().rank()
                               : 0;
      if (c.num_non_zero() < 1 || c.block_size() <= c.num_non_zero() || c.dimension() < 0 ||
          c.dimension() >= rank) {
        return InstructionError(
            instruction, "sparsity",
            absl::StrCat("sparsity ", lhs ? "L" : "R", ".", c.dimension(), "@", c.num_non_zero(),
                         ":", c.block_size(), " needs 1 <= N < M and a dimension of operand ",
                         operand, " (rank ", rank, ")"));
      }
    }
    return absl::OkStatus();
  }

  // Enum-valued attributes arrive from the proto as plain integers (proto3
  // enums are open), so a value with no name must be refused here: nothing
  // downstream can print, parse or lower it.
  absl::Status VerifyEnumAttributes(const HloInstruction& instruction) {
    const HloAttributes& a = instruction.attrs();
    auto unknown = [&](absl::string_view what, int value) {
      return InstructionError(instruction, "enum-attribute",
                              absl::StrCat(what, " has no value ", value));
    };
    if (a.precision_config.has_value()) {
      const xla::PrecisionConfig& config = *a.precision_config;
      for (int p : config.operand_precision()) {
        if (!xla::PrecisionConfig::Precision_IsValid(p)) return unknown("operand_precision", p);
      }
      if (!xla::PrecisionConfig::Algorithm_IsValid(config.algorithm())) {
        return unknown("dot algorithm", config.algorithm());
      }
    }
    if (a.triangular_solve_options.has_value() &&
        !xla::TriangularSolveOptions::Transpose_IsValid(a.triangular_solve_options->transpose_a())) {
      return unknown("transpose_a", a.triangular_solve_options->transpose_a());
    }
    if (a.result_accuracy.has_value() &&
        !xla::ResultAccuracy::Mode_IsValid(a.result_accuracy->mode())) {
      return unknown("result_accuracy mode", a.result_accuracy->mode());
    }
    const xla::HloInstructionProto* carried = instruction.carried_proto_fields();
    if (carried != nullptr && !xla::PaddingType_IsValid(carried->padding_type())) {
      return unknown("padding_type", carried->padding_type());
    }
    if (!xla::CustomCallApiVersion_IsValid(a.custom_call_api_version)) {
      return unknown("custom-call api_version", a.custom_call_api_version);
    }
    if (!xla::CustomCallSchedule_IsValid(a.custom_call_schedule)) {
      return unknown("custom-call schedule", a.custom_call_schedule);
    }
    if (!xla::RandomDistribution_IsValid(a.distribution)) {
      return unknown("rng distribution", a.distribution);
    }
    if (!xla::RandomAlgorithm_IsValid(a.rng_algorithm)) {
      return unknown("rng algorithm", a.rng_algorithm);
    }
    if (!xla::FftType_IsValid(a.fft_type)) return unknown("fft_type", a.fft_type);
    if (!xla::TriState_IsValid(a.is_associative)) {
      return unknown("is_associative", a.is_associative);
    }
    return absl::OkStatus();
  }

  absl::Status VerifyModuleStructure() {
    computations_ = module_.computations();
    absl::flat_hash_set<std::string> computation_names;
    for (const HloComputation* computation : computations_) {
      if (computation == nullptr) return ModuleError(module_, "structure", "null computation");
      if (computation->parent() != &module_) {
        return ComputationError(*computation, "structure",
                                "computation does not name this module as its parent");
      }
      if (!computation_names.insert(PrintedName(computation->name())).second) {
        return ComputationError(*computation, "unique-name",
                                "another computation has the same (printed) name");
      }
      in_module_.insert(computation);
    }
    if (module_.entry() == nullptr) {
      return ModuleError(module_, "entry", "module has no entry computation");
    }
    if (!in_module_.contains(module_.entry())) {
      return ModuleError(module_, "entry",
                         absl::StrCat("entry computation ", module_.entry()->name(),
                                      " is not one of the module's computations"));
    }
    // Keys view the instructions' own names, which stay put while verifying.
    int64_t instruction_count = 0;
    for (const HloComputation* computation : computations_) {
      instruction_count += computation->instruction_count();
    }
    // Names are compared as printed (PrintedName): almost every name prints
    // as itself; the few that do not are keyed by their printed copy.
    absl::flat_hash_map<absl::string_view, const HloInstruction*> names;
    std::deque<std::string> printed_copies;
    absl::flat_hash_map<int64_t, const HloInstruction*> ids;
    names.reserve(instruction_count);
    ids.reserve(instruction_count);
    for (const HloComputation* computation : computations_) {
      for (const HloInstruction* instruction : computation->instructions()) {
        absl::string_view key = instruction->name();
        std::string printed = PrintedName(key);
        if (printed != key) key = printed_copies.emplace_back(std::move(printed));
        auto [name_it, new_name] = names.emplace(key, instruction);
        if (!new_name) {
          return InstructionError(
              *instruction, "unique-name",
              absl::StrCat(key == instruction->name()
                               ? "name is also used by an instruction"
                               : absl::StrCat("name prints as %", key, ", as does %",
                                              name_it->second->name()),
                           " in computation ",
                           name_it->second->parent() ? name_it->second->parent()->name() : "?"));
        }
        auto [id_it, new_id] = ids.emplace(instruction->unique_id(), instruction);
        if (!new_id) {
          return InstructionError(*instruction, "unique-id",
                                  absl::StrCat("unique id ", instruction->unique_id(),
                                               " is also used by %", id_it->second->name()));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyComputationStructure(const HloComputation& computation) {
    if (computation.root() == nullptr) {
      return ComputationError(computation, "root", "computation has no root instruction");
    }
    if (computation.root()->parent() != &computation) {
      return ComputationError(
          computation, "root",
          absl::StrCat("root %", computation.root()->name(), " belongs to another computation"));
    }
    std::vector<const HloInstruction*> parameters;
    for (const HloInstruction* instruction : computation.instructions()) {
      if (instruction->parent() != &computation) {
        return InstructionError(
            *instruction, "structure",
            absl::StrCat("instruction's parent is not computation ", computation.name()));
      }
      if (instruction->opcode() == HloOpcode::kParameter) parameters.push_back(instruction);
      HLOC_RETURN_IF_ERROR(VerifyOperandEdges(computation, *instruction));
    }
    // Parameter numbers are 0..n-1, each used once.
    const int64_t n = static_cast<int64_t>(parameters.size());
    std::vector<const HloInstruction*> by_number(n, nullptr);
    for (const HloInstruction* parameter : parameters) {
      const int64_t number = parameter->parameter_number();
      if (number < 0 || number >= n) {
        return InstructionError(*parameter, "parameter-number",
                                absl::StrCat("parameter number ", number, " is outside [0, ", n,
                                             ") for a computation with ", n, " parameters"));
      }
      if (by_number[number] != nullptr) {
        return InstructionError(*parameter, "parameter-number",
                                absl::StrCat("parameter number ", number, " is also used by %",
                                             by_number[number]->name()));
      }
      by_number[number] = parameter;
    }
    if (computation.num_parameters() != n) {
      return ComputationError(computation, "parameter-number",
                              absl::StrCat("computation records ", computation.num_parameters(),
                                           " parameters but has ", n, " parameter instructions"));
    }
    for (int64_t i = 0; i < n; ++i) {
      if (computation.parameter(i) != by_number[i]) {
        return ComputationError(computation, "parameter-number",
                                absl::StrCat("parameter ", i,
                                             " recorded by the computation is "
                                             "not the instruction with that number"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyOperandEdges(const HloComputation& computation,
                                  const HloInstruction& instruction) {
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      const HloInstruction* operand = instruction.operand(i);
      if (operand == nullptr) {
        return InstructionError(instruction, "operand", absl::StrCat("operand ", i, " is null"));
      }
      if (operand->parent() != &computation) {
        return InstructionError(
            instruction, "operand",
            absl::StrCat("operand ", i, " %", operand->name(), " belongs to computation ",
                         operand->parent() ? operand->parent()->name() : "<none>"));
      }
      if (!Contains(operand->users(), &instruction)) {
        return InstructionError(instruction, "users",
                                absl::StrCat("operand ", i, " %", operand->name(),
                                             " does not list this instruction as a user"));
      }
    }
    for (size_t i = 0; i < instruction.called_computations().size(); ++i) {
      const HloComputation* callee = instruction.called_computations()[i];
      if (callee == nullptr) {
        return InstructionError(instruction, "called-computation",
                                absl::StrCat("called computation ", i, " is null"));
      }
      if (!in_module_.contains(callee)) {
        return InstructionError(
            instruction, "called-computation",
            absl::StrCat("called computation ", callee->name(), " is not in the module"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyUserAndControlEdges(const HloComputation& computation,
                                         const HloInstruction& instruction) {
    // Most instructions have a few users: look back instead of hashing.
    const std::vector<HloInstruction*>& users = instruction.users();
    absl::flat_hash_set<const HloInstruction*> seen_users;
    for (size_t k = 0; k < users.size(); ++k) {
      const HloInstruction* user = users[k];
      if (user == nullptr) return InstructionError(instruction, "users", "null user");
      const bool repeated =
          users.size() <= 16 ? std::find(users.begin(), users.begin() + k, user) !=
                                   users.begin() + k
                             : !seen_users.insert(user).second;
      if (repeated) {
        return InstructionError(instruction, "users",
                                absl::StrCat("user %", user->name(), " is listed twice"));
      }
      if (user->parent() != &computation) {
        return InstructionError(
            instruction, "users",
            absl::StrCat("user %", user->name(), " belongs to another computation"));
      }
      if (user->OperandIndex(&instruction) < 0) {
        return InstructionError(
            instruction, "users",
            absl::StrCat("user %", user->name(), " does not have this instruction as an operand"));
      }
    }
    for (const HloInstruction* predecessor : instruction.control_predecessors()) {
      if (predecessor == nullptr || predecessor->parent() != &computation) {
        return InstructionError(instruction, "control",
                                "control predecessor is null or in another computation");
      }
      if (!Contains(predecessor->control_successors(), &instruction)) {
        return InstructionError(instruction, "control",
                                absl::StrCat("control predecessor %", predecessor->name(),
                                             " does not list this instruction as a successor"));
      }
    }
    for (const HloInstruction* successor : instruction.control_successors()) {
      if (successor == nullptr || successor->parent() != &computation) {
        return InstructionError(instruction, "control",
                                "control successor is null or in another computation");
      }
      if (!Contains(successor->control_predecessors(), &instruction)) {
        return InstructionError(instruction, "control",
                                absl::StrCat("control successor %", successor->name(),
                                             " does not list this instruction as a predecessor"));
      }
    }
    return absl::OkStatus();
  }

  // ---- round 2: acyclicity

  absl::Status VerifyAcyclic(const HloComputation& computation) {
    // Iterative DFS over operands and control predecessors; gray nodes are on
    // the current path, so reaching one closes a cycle.
    enum Color : uint8_t { kWhite, kGray, kBlack };
    absl::flat_hash_map<const HloInstruction*, Color> color;
    color.reserve(computation.instruction_count());
    struct Frame {
      const HloInstruction* node;
      size_t next;
    };
    std::vector<Frame> stack;
    for (const HloInstruction* start : computation.instructions()) {
      if (color[start] != kWhite) continue;
      color[start] = kGray;
      stack.push_back({start, 0});
      while (!stack.empty()) {
        Frame& frame = stack.back();
        const HloInstruction* node = frame.node;
        const size_t num_operands = node->operands().size();
        const size_t total = num_operands + node->control_predecessors().size();
        if (frame.next == total) {
          color[node] = kBlack;
          stack.pop_back();
          continue;
        }
        const HloInstruction* dep = frame.next < num_operands
                                        ? node->operands()[frame.next]
                                        : node->control_predecessors()[frame.next - num_operands];
        ++frame.next;
        Color& c = color[dep];
        if (c == kBlack) continue;
        if (c == kGray) {
          // The cycle is dep -> ... -> node along the stack, closed by node -> dep.
          std::vector<std::string> names;
          bool in_cycle = false;
          for (const Frame& f : stack) {
            if (f.node == dep) in_cycle = true;
            if (in_cycle) names.push_back(absl::StrCat("%", f.node->name()));
          }
          names.push_back(absl::StrCat("%", dep->name()));
          std::reverse(names.begin(), names.end());
          return InstructionError(*dep, "cycle",
                                  absl::StrCat("instruction depends on itself through operands "
                                               "and control predecessors: ",
                                               absl::StrJoin(names, " <- ")));
        }
        c = kGray;
        stack.push_back({dep, 0});
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyCallGraphAcyclic() {
    enum Color : uint8_t { kWhite, kGray, kBlack };
    absl::flat_hash_map<const HloComputation*, Color> color;
    absl::flat_hash_map<const HloComputation*, std::vector<const HloComputation*>> callees;
    for (const HloComputation* computation : computations_) {
      std::vector<const HloComputation*>& list = callees[computation];
      for (const HloInstruction* instruction : computation->instructions()) {
        for (const HloComputation* callee : instruction->called_computations()) {
          list.push_back(callee);
        }
      }
    }
    struct Frame {
      const HloComputation* node;
      size_t next;
    };
    std::vector<Frame> stack;
    for (const HloComputation* start : computations_) {
      if (color[start] != kWhite) continue;
      color[start] = kGray;
      stack.push_back({start, 0});
      while (!stack.empty()) {
        Frame& frame = stack.back();
        const std::vector<const HloComputation*>& list = callees[frame.node];
        if (frame.next == list.size()) {
          color[frame.node] = kBlack;
          stack.pop_back();
          continue;
        }
        const HloComputation* callee = list[frame.next++];
        Color& c = color[callee];
        if (c == kBlack) continue;
        if (c == kGray) {
          std::vector<std::string> names;
          bool in_cycle = false;
          for (const Frame& f : stack) {
            if (f.node == callee) in_cycle = true;
            if (in_cycle) names.push_back(f.node->name());
          }
          names.push_back(callee->name());
          return ComputationError(
              *callee, "recursive-call",
              absl::StrCat("computation calls itself: ", absl::StrJoin(names, " -> ")));
        }
        c = kGray;
        stack.push_back({callee, 0});
      }
    }
    return absl::OkStatus();
  }

  // ---- round 3: per instruction

  absl::Status VerifyInstruction(const HloInstruction& instruction) {
    const HloOpcode opcode = instruction.opcode();
    if (options_.layout_sensitive) HLOC_RETURN_IF_ERROR(VerifyHasLayouts(instruction));

    const int arity = HloOpcodeArity(opcode);
    if (arity >= 0 && instruction.operand_count() != arity) {
      return InstructionError(instruction, "operand-count",
                              absl::StrCat(HloOpcodeName(opcode), " takes ", arity,
                                           " operands, got ", instruction.operand_count()));
    }
    const CalleeCount callees = ExpectedCallees(opcode);
    const size_t called = instruction.called_computations().size();
    if (called < callees.min || called > callees.max) {
      std::string expected =
          callees.min == callees.max
              ? absl::StrCat(callees.min)
              : (callees.max == SIZE_MAX ? absl::StrCat("at least ", callees.min)
                                         : absl::StrCat(callees.min, " to ", callees.max));
      return InstructionError(instruction, "called-computation",
                              absl::StrCat(HloOpcodeName(opcode), " calls ", called,
                                           " computations, expected ", expected));
    }
    if (instruction.is_composite()) {
      if (opcode != HloOpcode::kCall) {
        return InstructionError(instruction, "composite",
                                "only call instructions may be composite");
      }
      if (instruction.FindFrontendAttribute("composite.name") == nullptr) {
        return InstructionError(instruction, "composite",
                                "composite call has no composite.name frontend attribute");
      }
    }
    if (opcode == HloOpcode::kFusion) {
      const HloComputation* fused = instruction.called_computations()[0];
      if (fused->fusion_instruction() != &instruction) {
        return InstructionError(instruction, "fusion",
                                absl::StrCat("fused computation ", fused->name(),
                                             " does not point back to this fusion"));
      }
    }
    for (const HloComputation* callee : instruction.called_computations()) {
      const HloInstruction* owner = callee->fusion_instruction();
      if (owner != nullptr && owner != &instruction) {
        return InstructionError(instruction, "fusion",
                                absl::StrCat("calls fused computation ", callee->name(),
                                             " that belongs to fusion %", owner->name()));
      }
    }
    HLOC_RETURN_IF_ERROR(VerifyIotaReplicaGroups(instruction));
    HLOC_RETURN_IF_ERROR(VerifyMeshReplicaGroups(instruction));
    HLOC_RETURN_IF_ERROR(VerifyShardings(instruction));
    if (options_.check_shapes) HLOC_RETURN_IF_ERROR(VerifyShape(instruction));
    if (options_.check_shapes && HasDeviceGroups(opcode)) {
      absl::Status groups = VerifyCollective(instruction, DeviceMesh::Of(module_.config()));
      if (!groups.ok()) return InstructionError(instruction, "device-groups", groups.message());
    }
    // Layout forwarding relies on the shape checks (tuple sizes, parameters).
    if (options_.check_shapes && options_.layout_sensitive) {
      HLOC_RETURN_IF_ERROR(VerifyLayoutsForwarded(instruction));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyShardings(const HloInstruction& instruction) {
    auto check = [&](const xla::OpSharding& sharding, absl::string_view what) -> absl::Status {
      std::string problem = ShardingProblem(sharding);
      if (problem.empty()) return absl::OkStatus();
      return InstructionError(instruction, "sharding", absl::StrCat(what, ": ", problem));
    };
    if (instruction.has_sharding()) HLOC_RETURN_IF_ERROR(check(instruction.sharding(), "sharding"));
    if (instruction.opcode() == HloOpcode::kDomain) {
      HLOC_RETURN_IF_ERROR(check(*instruction.attrs().domain_entry_sharding, "domain entry"));
      HLOC_RETURN_IF_ERROR(check(*instruction.attrs().domain_exit_sharding, "domain exit"));
    }
    return absl::OkStatus();
  }

  // replica_groups=[groups,size]<=[reshape]T(perm) (a proto can hold any
  // numbers; the text form, and so the parser, needs these to hold).
  absl::Status VerifyIotaReplicaGroups(const HloInstruction& instruction) {
    if (!instruction.attrs().iota_replica_groups) return absl::OkStatus();
    const xla::IotaReplicaGroupListProto& iota = *instruction.attrs().iota_replica_groups;
    const int64_t sizes[] = {iota.num_replica_groups(), iota.num_devices_per_group()};
    const int64_t devices = CheckedProduct(std::begin(sizes), std::end(sizes));
    const int64_t reshaped =
        CheckedProduct(iota.iota_reshape_dims().begin(), iota.iota_reshape_dims().end());
    if (iota.iota_reshape_dims().empty() || devices < 0 || devices != reshaped) {
      return InstructionError(
          instruction, "replica-groups",
          absl::StrCat("iota replica groups [", sizes[0], ",", sizes[1], "] do not hold as many "
                       "devices as the iota dimensions [",
                       absl::StrJoin(iota.iota_reshape_dims(), ","), "]"));
    }
    const auto& perm = iota.iota_transpose_perm();
    std::vector<bool> seen(static_cast<size_t>(iota.iota_reshape_dims_size()), false);
    bool permutation = perm.empty() || perm.size() == iota.iota_reshape_dims_size();
    for (int32_t p : perm) {
      if (!permutation || p < 0 || p >= iota.iota_reshape_dims_size() || seen[p]) {
        permutation = false;
        break;
      }
      seen[p] = true;
    }
    if (!permutation) {
      return InstructionError(instruction, "replica-groups",
                              absl::StrCat("iota transpose [", absl::StrJoin(perm, ","),
                                           "] is not a permutation of the ",
                                           iota.iota_reshape_dims_size(), " iota dimensions"));
    }
    return absl::OkStatus();
  }

  // replica_groups=mesh[...] {...}: the mesh and axis rules of
  // hlo/mesh_replica_groups.h (a proto can break them), and one form only.
  absl::Status VerifyMeshReplicaGroups(const HloInstruction& instruction) {
    const HloAttributes& a = instruction.attrs();
    if (!a.mesh_replica_groups) return absl::OkStatus();
    if (a.replica_groups || a.iota_replica_groups) {
      return InstructionError(instruction, "replica-groups",
                              "has mesh replica groups and another replica group list");
    }
    absl::Status valid = ValidateMeshAxesGroups(*a.mesh_replica_groups);
    if (!valid.ok()) return InstructionError(instruction, "replica-groups", valid.message());
    return absl::OkStatus();
  }

  absl::Status VerifyShape(const HloInstruction& instruction) {
    absl::StatusOr<Shape> inferred = InferShape(instruction);
    if (!inferred.ok()) {
      return InstructionError(instruction, "shape", inferred.status().message());
    }
    if (!ShapesCompatible(instruction.shape(), *inferred, options_.allow_mixed_precision)) {
      return InstructionError(instruction, "shape",
                              absl::StrCat("declared shape ", ShapeText(instruction.shape()),
                                           " but ", HloOpcodeName(instruction.opcode()),
                                           " of its operands gives ", ShapeText(*inferred)));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyHasLayouts(const HloInstruction& instruction) {
    std::vector<const Shape*> pending = {&instruction.shape()};
    while (!pending.empty()) {
      const Shape* shape = pending.back();
      pending.pop_back();
      if (shape->IsTuple()) {
        for (const Shape& element : shape->tuple_shapes()) pending.push_back(&element);
      } else if (shape->IsArray() && shape->rank() > 0 && !shape->has_layout()) {
        return InstructionError(instruction, "layout",
                                absl::StrCat("array shape ", ShapeText(*shape), " has no layout"));
      }
    }
    return absl::OkStatus();
  }

  // Layout-sensitive: shapes that flow unchanged across an edge keep their
  // layouts. `what` names the two ends in the message.
  absl::Status SameWithLayout(const HloInstruction& instruction, const Shape& a, const Shape& b,
                              absl::string_view what) {
    if (SameWithLayouts(a, b)) return absl::OkStatus();
    return InstructionError(
        instruction, "layout",
        absl::StrCat(what, ": ", ShapeText(a, true), " vs ", ShapeText(b, true)));
  }

  absl::Status VerifyLayoutsForwarded(const HloInstruction& instruction) {
    const Shape& shape = instruction.shape();
    switch (instruction.opcode()) {
      case HloOpcode::kTuple:
        for (int64_t i = 0; i < instruction.operand_count(); ++i) {
          HLOC_RETURN_IF_ERROR(SameWithLayout(instruction, shape.tuple_shapes(i),
                                              instruction.operand(i)->shape(),
                                              absl::StrCat("tuple element ", i, " vs operand")));
        }
        return absl::OkStatus();
      case HloOpcode::kGetTupleElement:
        return SameWithLayout(
            instruction, shape,
            instruction.operand(0)->shape().tuple_shapes(instruction.tuple_index()),
            "result vs the tuple element");
      case HloOpcode::kWhile: {
        const HloComputation* condition = instruction.called_computations()[0];
        const HloComputation* body = instruction.called_computations()[1];
        HLOC_RETURN_IF_ERROR(SameWithLayout(instruction, shape, instruction.operand(0)->shape(),
                                            "result vs operand"));
        HLOC_RETURN_IF_ERROR(
            SameWithLayout(instruction, shape, body->root()->shape(), "result vs body root"));
        HLOC_RETURN_IF_ERROR(SameWithLayout(instruction, shape, body->parameter(0)->shape(),
                                            "result vs body parameter"));
        return SameWithLayout(instruction, shape, condition->parameter(0)->shape(),
                              "result vs condition parameter");
      }
      case HloOpcode::kConditional:
        for (size_t b = 0; b < instruction.called_computations().size(); ++b) {
          const HloComputation* branch = instruction.called_computations()[b];
          HLOC_RETURN_IF_ERROR(SameWithLayout(instruction, shape, branch->root()->shape(),
                                              absl::StrCat("result vs branch ", b, " root")));
          HLOC_RETURN_IF_ERROR(SameWithLayout(instruction, instruction.operand(b + 1)->shape(),
                                              branch->parameter(0)->shape(),
                                              absl::StrCat("operand vs branch ", b, " parameter")));
        }
        return absl::OkStatus();
      case HloOpcode::kCall:
      case HloOpcode::kFusion: {
        const HloComputation* callee = instruction.called_computations()[0];
        for (int64_t i = 0; i < instruction.operand_count(); ++i) {
          HLOC_RETURN_IF_ERROR(SameWithLayout(instruction, instruction.operand(i)->shape(),
                                              callee->parameter(i)->shape(),
                                              absl::StrCat("operand ", i, " vs parameter")));
        }
        return SameWithLayout(instruction, shape, callee->root()->shape(), "result vs called root");
      }
      default:
        return absl::OkStatus();
    }
  }

  absl::Status VerifyEntryLayout() {
    const std::optional<ProgramShape>& layout = module_.config().entry_computation_layout;
    if (!layout.has_value()) return absl::OkStatus();
    const HloComputation& entry = *module_.entry();
    if (static_cast<int64_t>(layout->parameters.size()) != entry.num_parameters()) {
      return ComputationError(
          entry, "entry-layout",
          absl::StrCat("entry_computation_layout has ", layout->parameters.size(),
                       " parameters, the entry ", entry.num_parameters()));
    }
    auto check = [&](const Shape& expected, const Shape& actual,
                     const std::string& what) -> absl::Status {
      // Sizes and dynamic flags exactly (an unbounded `?` matches only `?`):
      // the test the proto loader applies to host_program_shape, so a module
      // that verifies also loads from its own proto.
      const bool ok = options_.layout_sensitive ? SameWithLayouts(expected, actual)
                                                : expected.Compatible(actual);
      if (ok) return absl::OkStatus();
      return ComputationError(
          entry, "entry-layout",
          absl::StrCat("entry_computation_layout ", what, " is ", ShapeText(expected, true),
                       " but the entry has ", ShapeText(actual, true)));
    };
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      HLOC_RETURN_IF_ERROR(
          check(layout->parameters[i], entry.parameter(i)->shape(), absl::StrCat("parameter ", i)));
    }
    return check(layout->result, entry.root()->shape(), "result");
  }

  // ---- module aliasing: input_output_alias and buffer_donor name entry
  // parameter and result buffers that exist. As in XLA, an aliased pair is two
  // arrays of equal byte size (their shapes may differ), an output buffer and a
  // parameter buffer take part in one pair at most, and a donor is not also
  // aliased.

  // The array at `index` of `shape`, or an error naming `what`.
  absl::StatusOr<const Shape*> AliasedArray(const Shape& shape,
                                            absl::Span<const int64_t> index,
                                            const std::string& what) {
    absl::StatusOr<const Shape*> subshape = GetSubshape(shape, index);
    if (!subshape.ok()) {
      return ModuleError(module_, "input-output-alias",
                         absl::StrCat(what, ": ", subshape.status().message()));
    }
    if (!(*subshape)->IsArray()) {
      return ModuleError(module_, "input-output-alias",
                         absl::StrCat(what, " is ", ShapeText(**subshape), ", not an array"));
    }
    return *subshape;
  }

  absl::Status VerifyAliasing() {
    const HloComputation& entry = *module_.entry();
    const HloModuleConfig& config = module_.config();
    auto buffer = [](int64_t parameter, absl::Span<const int64_t> index) {
      return absl::StrCat("parameter ", parameter, " {", absl::StrJoin(index, ","), "}");
    };
    auto parameter_shape = [&](int64_t number, const char* rule) -> absl::StatusOr<const Shape*> {
      if (number < 0 || number >= entry.num_parameters()) {
        return ModuleError(module_, rule,
                           absl::StrCat("parameter ", number, " does not exist (the entry has ",
                                        entry.num_parameters(), ")"));
      }
      return &entry.parameter(number)->shape();
    };
    absl::flat_hash_set<std::string> outputs, parameters;
    for (const auto& alias : config.input_output_alias.entries()) {
      const std::string output =
          absl::StrCat("output {", absl::StrJoin(alias.output_shape_index(), ","), "}");
      const std::string input = buffer(alias.parameter_number(), alias.parameter_shape_index());
      if (alias.kind() != xla::UNDEFINED_ALIAS && alias.kind() != xla::MAY_ALIAS &&
          alias.kind() != xla::MUST_ALIAS) {
        return ModuleError(module_, "input-output-alias",
                           absl::StrCat(output, ": unknown alias kind ", alias.kind()));
      }
      HLOC_ASSIGN_OR_RETURN(const Shape* parameter,
                            parameter_shape(alias.parameter_number(), "input-output-alias"));
      HLOC_ASSIGN_OR_RETURN(const Shape* param_array,
                            AliasedArray(*parameter, alias.parameter_shape_index(), input));
      HLOC_ASSIGN_OR_RETURN(const Shape* out_array,
                            AliasedArray(entry.root()->shape(), alias.output_shape_index(), output));
      const std::optional<int64_t> param_bytes = param_array->CheckedByteSize();
      const std::optional<int64_t> out_bytes = out_array->CheckedByteSize();
      if (!param_bytes || !out_bytes || *param_bytes != *out_bytes) {
        return ModuleError(module_, "input-output-alias",
                           absl::StrCat(output, " ", ShapeText(*out_array), " and ", input, " ",
                                        ShapeText(*param_array), " differ in byte size"));
      }
      if (!outputs.insert(output).second) {
        return ModuleError(module_, "input-output-alias",
                           absl::StrCat(output, " is aliased more than once"));
      }
      if (!parameters.insert(input).second) {
        return ModuleError(module_, "input-output-alias",
                           absl::StrCat(input, " is aliased with more than one output"));
      }
    }
    absl::flat_hash_set<std::string> donors;
    for (const auto& donor : config.buffer_donor.entries()) {
      const std::string input = buffer(donor.parameter_number(), donor.parameter_shape_index());
      HLOC_ASSIGN_OR_RETURN(const Shape* parameter,
                            parameter_shape(donor.parameter_number(), "buffer-donor"));
      absl::StatusOr<const Shape*> subshape =
          GetSubshape(*parameter, donor.parameter_shape_index());
      if (!subshape.ok()) {
        return ModuleError(module_, "buffer-donor",
                           absl::StrCat(input, ": ", subshape.status().message()));
      }
      if (!donors.insert(input).second) {
        return ModuleError(module_, "buffer-donor", absl::StrCat(input, " is listed twice"));
      }
      if (parameters.contains(input)) {
        return ModuleError(module_, "buffer-donor",
                           absl::StrCat(input, " is a donor and also in input_output_alias"));
      }
    }
    return absl::OkStatus();
  }

  const HloModule& module_;
  const VerifierOptions& options_;
  std::vector<HloComputation*> computations_;
  absl::flat_hash_set<const HloComputation*> in_module_;
};

}  // namespace

absl::Status VerifyModule(const HloModule& module, const VerifierOptions& options) {
  return Verifier(module, options).Run();
}

}  // namespace hloc
