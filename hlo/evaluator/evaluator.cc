// The evaluator's driver: walks a computation in post order, keeps each
// instruction's value until its last user has run (so a large model's
// intermediate arrays do not pile up), dispatches each opcode to its family
// (ops.h), and implements the structural and control-flow opcodes itself:
// parameter, constant, tuple, get-tuple-element, call, fusion, while,
// conditional and the pass-through ops.
//
// Values are shared, immutable arrays (std::shared_ptr<const Literal>) or
// tuples of values, so tuple, get-tuple-element, copy of a tuple and
// pass-through ops never copy array data. Arguments and constants are
// borrowed, not copied.
#include "hlo/evaluator/evaluator.h"

#include <chrono>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/builder_custom_calls.h"
#include "hlo/custom_call_handlers.h"
#include "hlo/evaluator/collectives.h"
#include "hlo/dynamic_custom_calls.h"
#include "hlo/evaluator/linalg_custom_calls.h"
#include "hlo/evaluator/ops.h"
#include "hlo/evaluator/runtime_shapes.h"
#include "hlo/live_instructions.h"
#include "hlo/status_macros.h"
#include "hlo/usable_cpus.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

using eval::EvalContext;
using eval::InstructionError;
using eval::InstructionUnimplemented;

struct Value {
  std::shared_ptr<const Literal> array;  // Arrays and tokens.
  std::shared_ptr<const std::vector<Value>> tuple;
  bool is_tuple() const { return tuple != nullptr; }
};

Value Borrow(const Literal& literal) {
  Value v;
  if (literal.shape().IsTuple()) {
    auto elements = std::make_shared<std::vector<Value>>();
    for (const Literal& e : literal.tuple_elements()) elements->push_back(Borrow(e));
    v.tuple = std::move(elements);
  } else {
    v.array = std::shared_ptr<const Literal>(std::shared_ptr<const Literal>(), &literal);
  }
  return v;
}

Value Own(Literal literal) {
  Value v;
  if (literal.shape().IsTuple()) {
    auto elements = std::make_shared<std::vector<Value>>();
    for (Literal& e : *literal.mutable_tuple_elements()) elements->push_back(Own(std::move(e)));
    v.tuple = std::move(elements);
  } else {
    v.array = std::make_shared<const Literal>(std::move(literal));
  }
  return v;
}

Literal Materialize(const Value& v) {
  if (v.is_tuple()) {
    std::vector<Literal> elements;
    for (const Value& e : *v.tuple) elements.push_back(Materialize(e));
    return Literal::Tuple(std::move(elements));
  }
  return v.array ? *v.array : Literal();
}

bool IsControlFlow(HloOpcode op) {
  return op == HloOpcode::kCall || op == HloOpcode::kFusion || op == HloOpcode::kWhile ||
         op == HloOpcode::kConditional;
}

// The order and bookkeeping for running one computation, built once.
struct ComputationPlan {
  std::vector<const HloInstruction*> order;        // Reachable from the root, post order.
  std::vector<std::vector<int>> operand_slots;     // Slot of each operand.
  std::vector<int> use_counts;                     // Uses by later instructions.
  int root_slot = -1;
};

class Evaluator : public EvalContext {
 public:
  explicit Evaluator(const EvaluatorOptions& options) : options_(options) {
    threads_ = options.num_threads > 0 ? options.num_threads
                                       : UsableCpuCount();
    if (threads_ < 1) threads_ = 1;
    rng_state_ = options.rng_seed;
    device_ = options.device;
    if (device_ == nullptr) {
      own_rendezvous_ = std::make_unique<eval::Rendezvous>(absl::Seconds(1));
      own_device_.rendezvous = own_rendezvous_.get();
      device_ = &own_device_;
    }
  }

  int num_threads() const override { return threads_; }

  uint64_t NextRandom() override {
    // splitmix64.
    uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  absl::StatusOr<Literal> Call(const HloComputation& computation, eval::Operands args) override {
    std::vector<Value> values;
    values.reserve(args.size());
    for (const Literal* a : args) values.push_back(Borrow(*a));
    HLOC_ASSIGN_OR_RETURN(Value result, Run(computation, values));
    return Materialize(result);
  }

  absl::StatusOr<Value> Run(const HloComputation& computation, const std::vector<Value>& args);

 private:
  absl::StatusOr<const ComputationPlan*> PlanFor(const HloComputation& computation);
  absl::StatusOr<Value> EvalInstruction(const HloInstruction& hlo, const std::vector<Value*>& ops,
                                        const std::vector<Value>& args);
  absl::StatusOr<Value> EvalWhile(const HloInstruction& hlo, const Value& init);
  absl::StatusOr<Value> EvalConditional(const HloInstruction& hlo, const std::vector<Value*>& ops);
  absl::StatusOr<Value> EvalAsyncStart(const HloInstruction& hlo, const std::vector<Value*>& ops);
  absl::StatusOr<Value> EvalRegisteredCustomCall(const CustomCallHandler& handler,
                                                 const HloInstruction& hlo,
                                                 const std::vector<Value*>& ops);
  // The opcodes that compute on arrays only.
  absl::StatusOr<Literal> EvalArrayOp(const HloInstruction& hlo, eval::Operands arrays);

  EvaluatorOptions options_;
  int threads_ = 1;
  uint64_t rng_state_ = 0;
  int depth_ = 0;
  eval::DeviceSlot* device_ = nullptr;
  eval::DeviceSlot own_device_;  // A one-device run's.
  std::unique_ptr<eval::Rendezvous> own_rendezvous_;
  absl::flat_hash_map<const HloComputation*, std::unique_ptr<ComputationPlan>> plans_;
};

absl::StatusOr<const ComputationPlan*> Evaluator::PlanFor(const HloComputation& computation) {
  auto it = plans_.find(&computation);
  if (it != plans_.end()) return it->second.get();
  if (computation.root() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), " has no root"));
  }
  auto plan = std::make_unique<ComputationPlan>();
  // Instructions reachable through operands from the side effects (in post
  // order) and then the root (hlo/live_instructions.h), each after its
  // operands.
  absl::flat_hash_map<const HloInstruction*, int> slot;
  std::vector<std::pair<const HloInstruction*, size_t>> stack;
  absl::flat_hash_map<const HloInstruction*, bool> visited;
  auto visit = [&](const HloInstruction* start) {
    if (visited[start]) return;
    visited[start] = true;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands().size()) {
        const HloInstruction* op = node->operand(next++);
        if (!visited[op]) {
          visited[op] = true;
          stack.push_back({op, 0});
        }
        continue;
      }
      slot[node] = static_cast<int>(plan->order.size());
      plan->order.push_back(node);
      stack.pop_back();
    }
  };
  for (const HloInstruction* hlo : computation.MakeInstructionPostOrder()) {
    if (hlo->HasSideEffect()) visit(hlo);
  }
  visit(computation.root());
  // A broadcast of a scalar whose users all accept a scalar operand in its
  // place (elementwise binary ops, compare, select, clamp) is never
  // materialized: its users read the scalar.
  std::vector<bool> folded(plan->order.size(), false);
  for (size_t i = 0; i < plan->order.size(); ++i) {
    const HloInstruction* b = plan->order[i];
    if (b->opcode() != HloOpcode::kBroadcast || b == computation.root() ||
        !b->operand(0)->shape().IsArray() || b->operand(0)->shape().rank() != 0 ||
        b->users().empty() || b->operand(0)->shape().element_type() != b->shape().element_type()) {
      continue;
    }
    bool all_accept = true;
    for (const HloInstruction* user : b->users()) {
      const HloOpcode op = user->opcode();
      all_accept &= slot.contains(user) &&
                    (IsElementwiseBinary(op) || op == HloOpcode::kSelect || op == HloOpcode::kClamp);
    }
    folded[i] = all_accept;
  }
  auto source_slot = [&](const HloInstruction* op) {
    const int s = slot.at(op);
    return folded[s] ? slot.at(op->operand(0)) : s;
  };
  std::vector<const HloInstruction*> kept;
  std::vector<int> new_slot(plan->order.size(), -1);
  for (size_t i = 0; i < plan->order.size(); ++i) {
    if (folded[i]) continue;
    new_slot[i] = static_cast<int>(kept.size());
    kept.push_back(plan->order[i]);
  }
  plan->operand_slots.resize(kept.size());
  plan->use_counts.assign(kept.size(), 0);
  for (size_t i = 0; i < kept.size(); ++i) {
    for (const HloInstruction* op : kept[i]->operands()) {
      const int s = new_slot[source_slot(op)];
      plan->operand_slots[i].push_back(s);
      ++plan->use_counts[s];
    }
  }
  plan->order = std::move(kept);
  plan->root_slot = new_slot[slot.at(computation.root())];
  const ComputationPlan* result = plan.get();
  plans_[&computation] = std::move(plan);
  return result;
}

absl::StatusOr<Value> Evaluator::Run(const HloComputation& computation,
                                     const std::vector<Value>& args) {
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(), " takes ",
                                                   computation.num_parameters(),
                                                   " arguments, got ", args.size()));
  }
  if (depth_ > 200) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), ": calls nested too deeply"));
  }
  HLOC_ASSIGN_OR_RETURN(const ComputationPlan* plan, PlanFor(computation));
  ++depth_;
  std::vector<Value> values(plan->order.size());
  std::vector<int> remaining = plan->use_counts;
  std::vector<Value*> ops;
  for (size_t i = 0; i < plan->order.size(); ++i) {
    const HloInstruction& hlo = *plan->order[i];
    ops.clear();
    for (int s : plan->operand_slots[i]) ops.push_back(&values[s]);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Value> v = EvalInstruction(hlo, ops, args);
    if (options_.profile != nullptr && !IsControlFlow(hlo.opcode())) {
      options_.profile->entries.push_back(
          {&hlo, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    }
    if (!v.ok()) {
      --depth_;
      return v.status();
    }
    values[i] = *std::move(v);
    // A side effect nothing reads (jax.debug.print's custom call).
    if (plan->use_counts[i] == 0 && static_cast<int>(i) != plan->root_slot) values[i] = Value();
    for (int s : plan->operand_slots[i]) {
      if (--remaining[s] == 0 && s != plan->root_slot) values[s] = Value();
    }
  }
  --depth_;
  return std::move(values[plan->root_slot]);
}

absl::StatusOr<Value> Evaluator::EvalWhile(const HloInstruction& hlo, const Value& init) {
  const HloComputation* cond = hlo.while_condition();
  const HloComputation* body = hlo.while_body();
  if (cond == nullptr || body == nullptr) {
    return InstructionError(hlo, "while needs a condition and a body");
  }
  Value state = init;
  for (int64_t iteration = 0;; ++iteration) {
    if (options_.max_while_iterations > 0 && iteration >= options_.max_while_iterations) {
      return InstructionError(hlo, "more than ", options_.max_while_iterations, " iterations");
    }
    std::vector<Value> args = {state};
    HLOC_ASSIGN_OR_RETURN(Value c, Run(*cond, args));
    if (c.is_tuple() || !c.array || c.array->element_count() != 1 ||
        c.array->shape().element_type() != xla::PRED) {
      return InstructionError(hlo, "condition did not return a pred scalar");
    }
    if (c.array->raw()[0] == 0) break;
    HLOC_ASSIGN_OR_RETURN(state, Run(*body, args));
  }
  return state;
}

absl::StatusOr<Value> Evaluator::EvalConditional(const HloInstruction& hlo,
                                                 const std::vector<Value*>& ops) {
  const std::vector<HloComputation*>& branches = hlo.called_computations();
  if (ops.empty() || branches.empty() || ops.size() != branches.size() + 1 ||
      ops[0]->is_tuple() || !ops[0]->array || ops[0]->array->element_count() != 1) {
    return InstructionError(hlo, "conditional needs a scalar selector and one operand per branch");
  }
  const Literal& selector = *ops[0]->array;
  int64_t index;
  if (selector.shape().element_type() == xla::PRED) {
    index = selector.raw()[0] ? 0 : 1;
    if (branches.size() != 2) return InstructionError(hlo, "a pred selector needs two branches");
  } else {
    index = selector.GetAsInt64(0);
    // XLA: an out-of-range index runs the last branch.
    if (index < 0 || index >= static_cast<int64_t>(branches.size())) {
      index = static_cast<int64_t>(branches.size()) - 1;
    }
  }
  std::vector<Value> args = {*ops[index + 1]};
  return Run(*branches[index], args);
}

// async-start runs its computation at once: ((operands), result, context...).
absl::StatusOr<Value> Evaluator::EvalAsyncStart(const HloInstruction& hlo,
                                                const std::vector<Value*>& ops) {
  if (hlo.called_computations().size() != 1 || !hlo.shape().IsTuple() ||
      hlo.shape().tuple_shapes_size() < 2) {
    return InstructionError(hlo, "async-start needs one computation and a tuple result");
  }
  std::vector<Value> call_args;
  for (Value* op : ops) call_args.push_back(*op);
  HLOC_ASSIGN_OR_RETURN(Value result, Run(*hlo.called_computations()[0], call_args));
  auto operands = std::make_shared<std::vector<Value>>(call_args);
  auto elements = std::make_shared<std::vector<Value>>();
  Value packed;
  packed.tuple = std::move(operands);
  elements->push_back(std::move(packed));
  elements->push_back(std::move(result));
  for (int64_t i = 2; i < hlo.shape().tuple_shapes_size(); ++i) {
    HLOC_ASSIGN_OR_RETURN(Literal zero, eval::NewLiteral(hlo, hlo.shape().tuple_shapes(i)));
    elements->push_back(Own(std::move(zero)));
  }
  Value v;
  v.tuple = std::move(elements);
  return v;
}

namespace {

void AppendLeafPointers(const Value& value, std::vector<void*>* out) {
  if (value.is_tuple()) {
    for (const Value& element : *value.tuple) AppendLeafPointers(element, out);
  } else if (value.array && value.array->shape().IsArray()) {
    // The function reads operands only (custom_call_targets.h).
    out->push_back(const_cast<uint8_t*>(value.array->raw()));
  }
}

absl::StatusOr<Literal> NewResultLiteral(const Shape& shape) {
  if (!shape.IsTuple()) return Literal::Create(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    HLOC_ASSIGN_OR_RETURN(Literal literal, NewResultLiteral(element));
    elements.push_back(std::move(literal));
  }
  return Literal::Tuple(std::move(elements));
}

void AppendMutableLeafPointers(Literal* literal, std::vector<void*>* out) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_tuple_elements()) {
      AppendMutableLeafPointers(&element, out);
    }
  } else if (literal->shape().IsArray()) {
    out->push_back(literal->mutable_raw());
  }
}

}  // namespace

absl::StatusOr<Value> Evaluator::EvalRegisteredCustomCall(const CustomCallHandler& handler,
                                                          const HloInstruction& hlo,
                                                          const std::vector<Value*>& ops) {
  std::vector<void*> buffers;
  for (const Value* op : ops) AppendLeafPointers(*op, &buffers);
  HLOC_ASSIGN_OR_RETURN(Literal result, NewResultLiteral(hlo.shape()));
  AppendMutableLeafPointers(&result, &buffers);
  HLOC_RETURN_IF_ERROR(CallCustomCallHandler(handler, hlo, buffers));
  return Own(std::move(result));
}

absl::StatusOr<Value> Evaluator::EvalInstruction(const HloInstruction& hlo,
                                                 const std::vector<Value*>& ops,
                                                 const std::vector<Value>& args) {
  switch (hlo.opcode()) {
    case HloOpcode::kParameter: {
      const int64_t n = hlo.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        return InstructionError(hlo, "parameter number out of range");
      }
      return args[n];
    }
    case HloOpcode::kConstant:
      if (!hlo.attrs().literal) return InstructionError(hlo, "constant without a value");
      return Borrow(hlo.literal());
    case HloOpcode::kTuple: {
      auto elements = std::make_shared<std::vector<Value>>();
      for (Value* op : ops) elements->push_back(*op);
      Value v;
      v.tuple = std::move(elements);
      return v;
    }
    case HloOpcode::kGetTupleElement: {
      const int64_t i = hlo.tuple_index();
      if (!ops[0]->is_tuple() || i < 0 || i >= static_cast<int64_t>(ops[0]->tuple->size())) {
        return InstructionError(hlo, "tuple index ", i, " out of range");
      }
      return (*ops[0]->tuple)[i];
    }
    case HloOpcode::kCall:
    case HloOpcode::kFusion: {
      const HloComputation* callee =
          hlo.opcode() == HloOpcode::kFusion ? hlo.fused_computation() : hlo.to_apply();
      if (callee == nullptr) return InstructionError(hlo, "has no called computation");
      std::vector<Value> call_args;
      for (Value* op : ops) call_args.push_back(*op);
      return Run(*callee, call_args);
    }
    case HloOpcode::kWhile:
      return EvalWhile(hlo, *ops[0]);
    case HloOpcode::kConditional:
      return EvalConditional(hlo, ops);
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
    case HloOpcode::kDomain:
      return *ops[0];
    case HloOpcode::kCopy:
      // Values are immutable, so a copy shares its operand's data.
      return *ops[0];
    case HloOpcode::kAfterAll:
      return Own(Literal(Shape::Token()));
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId: {
      Literal id(hlo.shape());
      if (!hlo.shape().IsArray() || id.element_count() != 1) {
        return InstructionError(hlo, "must return a scalar");
      }
      id.SetFromInt64(0, hlo.opcode() == HloOpcode::kReplicaId ? device_->replica()
                                                                : device_->partition());
      return Own(std::move(id));
    }
    // -done forms: the value is in the -start's tuple (all-reduce-start's
    // value is the result itself).
    case HloOpcode::kAllReduceDone:
      return *ops[0];
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAsyncDone:
      if (!ops[0]->is_tuple() || ops[0]->tuple->size() < 2) {
        return InstructionError(hlo, "operand is not the tuple of a -start");
      }
      return (*ops[0]->tuple)[1];
    case HloOpcode::kAsyncUpdate:
      return *ops[0];
    case HloOpcode::kAsyncStart:
      return EvalAsyncStart(hlo, ops);
    case HloOpcode::kCustomCall:
      if (const HloComputation* decomposition = BuilderDecomposition(hlo)) {
        std::vector<Value> call_args;
        for (Value* op : ops) call_args.push_back(*op);
        return Run(*decomposition, call_args);
      }
      if (std::optional<DynamicCustomCall> dynamic = DynamicCustomCallOf(hlo)) {
        std::vector<const Literal*> arrays;
        for (Value* op : ops) {
          if (op->is_tuple() || !op->array) return InstructionError(hlo, "operands must be arrays");
          arrays.push_back(op->array.get());
        }
        HLOC_ASSIGN_OR_RETURN(Literal r, *dynamic == DynamicCustomCall::kPadToStatic
                                             ? eval::EvalPadToStatic(hlo, arrays)
                                             : eval::EvalSliceToDynamic(hlo, arrays));
        return Own(std::move(r));
      }
      if (hlo.attrs().custom_call_target == "TopK" && ops.size() == 1 && !ops[0]->is_tuple() &&
          hlo.shape().IsTuple() && hlo.shape().tuple_shapes_size() == 2 &&
          hlo.shape().tuple_shapes(0).rank() >= 1) {
        // XLA:CPU's TopK call: the k largest along the last dimension.
        const Shape& values = hlo.shape().tuple_shapes(0);
        HLOC_ASSIGN_OR_RETURN(Literal r, eval::TopK(hlo, *ops[0]->array,
                                                     values.dimensions(values.rank() - 1),
                                                     /*largest=*/true));
        return Own(std::move(r));
      }
      if (std::optional<LinalgCustomCall> linalg = LinalgCustomCallOf(hlo)) {
        std::vector<const Literal*> arrays;
        for (Value* op : ops) {
          if (op->is_tuple() || !op->array) return InstructionError(hlo, "operands must be arrays");
          arrays.push_back(op->array.get());
        }
        HLOC_ASSIGN_OR_RETURN(Literal r, eval::EvalLinalgCustomCall(*linalg, hlo, arrays));
        return Own(std::move(r));
      }
      {
        HLOC_ASSIGN_OR_RETURN(std::shared_ptr<const CustomCallHandler> handler,
                              FindCustomCallHandler(options_.custom_calls, hlo));
        if (handler != nullptr) return EvalRegisteredCustomCall(*handler, hlo, ops);
      }
      return InstructionUnimplemented(hlo, "custom-call target \"", hlo.attrs().custom_call_target,
                                      "\" is not known to the evaluator and not registered");
    default:
      break;
  }
  if (IsCollective(hlo.opcode())) {
    std::vector<const Literal*> arrays;
    for (Value* op : ops) {
      if (op->is_tuple() || !op->array) {
        return InstructionError(hlo, "operand ", arrays.size(), " is not an array");
      }
      arrays.push_back(op->array.get());
    }
    HLOC_ASSIGN_OR_RETURN(Literal r, eval::EvalCollective(hlo, arrays, *this, *device_));
    return Own(std::move(r));
  }
  if (IsCollective(hlo.opcode()) || IsAsyncOrCommunication(hlo.opcode())) {
    return InstructionUnimplemented(hlo, "not supported by the evaluator (no send/recv or "
                                         "infeed/outfeed)");
  }
  // Every remaining opcode computes on arrays.
  std::vector<const Literal*> arrays;
  arrays.reserve(ops.size());
  for (Value* op : ops) {
    if (op->is_tuple() || !op->array) {
      return InstructionError(hlo, "operand ", arrays.size(), " is not an array");
    }
    arrays.push_back(op->array.get());
  }
  absl::StatusOr<Literal> result;
  const bool sizes_op = hlo.opcode() == HloOpcode::kSetDimensionSize ||
                        hlo.opcode() == HloOpcode::kGetDimensionSize;
  if (!sizes_op && eval::NeedsRuntimeShapes(hlo, arrays)) {
    // Runtime (dynamic) sizes: evaluate a copy shaped to them (runtime_shapes.h).
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<eval::RuntimeOp> runtime_op,
                          eval::MakeRuntimeOp(hlo, arrays));
    result = EvalArrayOp(*runtime_op->instruction, runtime_op->operands);
  } else {
    result = EvalArrayOp(hlo, arrays);
  }
  if (!result.ok()) return result.status();
  return Own(*std::move(result));
}

absl::StatusOr<Literal> Evaluator::EvalArrayOp(const HloInstruction& hlo, eval::Operands arrays) {
  absl::StatusOr<Literal> result;
  using namespace eval;  // NOLINT: the op families.
  switch (hlo.opcode()) {
    case HloOpcode::kSetDimensionSize: result = EvalSetDimensionSize(hlo, arrays); break;
    case HloOpcode::kGetDimensionSize: result = EvalGetDimensionSize(hlo, arrays); break;
    case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClz:
    case HloOpcode::kCos: case HloOpcode::kErf: case HloOpcode::kExp: case HloOpcode::kExpm1:
    case HloOpcode::kFloor: case HloOpcode::kImag: case HloOpcode::kIsFinite:
    case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic:
    case HloOpcode::kNegate: case HloOpcode::kNot: case HloOpcode::kPopulationCount:
    case HloOpcode::kReal: case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven:
    case HloOpcode::kRsqrt: case HloOpcode::kSign: case HloOpcode::kSin: case HloOpcode::kSqrt:
    case HloOpcode::kTan: case HloOpcode::kTanh: case HloOpcode::kCopy:
      result = EvalUnary(hlo, arrays, *this);
      break;
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2:
    case HloOpcode::kComplex: case HloOpcode::kDivide: case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kOr:
    case HloOpcode::kPower: case HloOpcode::kRemainder: case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical:
    case HloOpcode::kSubtract: case HloOpcode::kXor:
      result = EvalBinary(hlo, arrays, *this);
      break;
    case HloOpcode::kCompare: result = EvalCompare(hlo, arrays, *this); break;
    case HloOpcode::kSelect: result = EvalSelect(hlo, arrays, *this); break;
    case HloOpcode::kClamp: result = EvalClamp(hlo, arrays, *this); break;
    case HloOpcode::kConvert: result = EvalConvert(hlo, arrays, *this); break;
    case HloOpcode::kBitcastConvert: result = EvalBitcastConvert(hlo, arrays); break;
    case HloOpcode::kReducePrecision: result = EvalReducePrecision(hlo, arrays); break;
    case HloOpcode::kStochasticConvert: result = EvalStochasticConvert(hlo, arrays); break;
    case HloOpcode::kBroadcast: result = EvalBroadcast(hlo, arrays); break;
    case HloOpcode::kReshape: result = EvalReshape(hlo, arrays); break;
    case HloOpcode::kBitcast: result = EvalBitcast(hlo, arrays); break;
    case HloOpcode::kTranspose: result = EvalTranspose(hlo, arrays); break;
    case HloOpcode::kReverse: result = EvalReverse(hlo, arrays); break;
    case HloOpcode::kSlice: result = EvalSlice(hlo, arrays); break;
    case HloOpcode::kDynamicSlice: result = EvalDynamicSlice(hlo, arrays); break;
    case HloOpcode::kDynamicUpdateSlice: result = EvalDynamicUpdateSlice(hlo, arrays); break;
    case HloOpcode::kConcatenate: result = EvalConcatenate(hlo, arrays); break;
    case HloOpcode::kPad: result = EvalPad(hlo, arrays); break;
    case HloOpcode::kIota: result = EvalIota(hlo); break;
    case HloOpcode::kGather: result = EvalGather(hlo, arrays); break;
    case HloOpcode::kScatter: result = EvalScatter(hlo, arrays, *this); break;
    case HloOpcode::kDot: result = EvalDot(hlo, arrays, *this); break;
    case HloOpcode::kRaggedDot: result = EvalRaggedDot(hlo, arrays); break;
    case HloOpcode::kConvolution: result = EvalConvolution(hlo, arrays, *this); break;
    case HloOpcode::kCholesky: result = EvalCholesky(hlo, arrays); break;
    case HloOpcode::kTriangularSolve: result = EvalTriangularSolve(hlo, arrays); break;
    case HloOpcode::kFft: result = EvalFft(hlo, arrays); break;
    case HloOpcode::kReduce: result = EvalReduce(hlo, arrays, *this); break;
    case HloOpcode::kReduceWindow: result = EvalReduceWindow(hlo, arrays, *this); break;
    case HloOpcode::kSelectAndScatter: result = EvalSelectAndScatter(hlo, arrays, *this); break;
    case HloOpcode::kMap: result = EvalMap(hlo, arrays, *this); break;
    case HloOpcode::kSort: result = EvalSort(hlo, arrays, *this); break;
    case HloOpcode::kScan: result = EvalScan(hlo, arrays, *this); break;
    case HloOpcode::kTopK: result = EvalTopK(hlo, arrays); break;
    case HloOpcode::kBatchNormInference: result = EvalBatchNormInference(hlo, arrays, *this); break;
    case HloOpcode::kBatchNormTraining: result = EvalBatchNormTraining(hlo, arrays, *this); break;
    case HloOpcode::kBatchNormGrad: result = EvalBatchNormGrad(hlo, arrays, *this); break;
    case HloOpcode::kRng: result = EvalRng(hlo, arrays, *this); break;
    case HloOpcode::kRngBitGenerator: result = EvalRngBitGenerator(hlo, arrays); break;
    default:
      return InstructionUnimplemented(hlo, "opcode not supported by the evaluator");
  }
  return result;
}

absl::Status CheckArguments(const HloComputation& computation,
                            absl::Span<const Literal* const> args) {
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "computation ", computation.name(), " has ", computation.num_parameters(),
        " parameters but ", args.size(), " arguments were given"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& expected = computation.parameter(i)->shape();
    // A dynamic dimension takes an array of any size up to its bound.
    const std::string why = eval::DeclaredShapeMismatch(args[i]->shape(), expected);
    if (!why.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " has shape ", args[i]->shape().ToString(false), " but parameter %",
          computation.parameter(i)->name(), " has shape ", expected.ToString(false), ": ", why));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                            absl::Span<const Literal* const> args,
                                            const EvaluatorOptions& options) {
  HLOC_RETURN_IF_ERROR(CheckArguments(computation, args));
  Evaluator evaluator(options);
  // An op's scratch (a sort's permutation, a gather's indices) is allocated
  // without a Status; running out of memory there is still an error.
  try {
    return evaluator.Call(computation, args);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory evaluating computation ", computation.name()));
  }
}

absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> arguments,
                                 const EvaluatorOptions& options) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " has no entry"));
  }
  if (options.verify) {
    absl::Status status = VerifyModule(module);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("module ", module.name(),
                                                     " fails verification: ", status.message()));
    }
  }
  std::vector<const Literal*> args;
  for (const Literal& a : arguments) args.push_back(&a);
  return EvaluateComputation(*module.entry(), args, options);
}

absl::Status CheckCustomCallTargets(const HloModule& module,
                                    const CustomCallTargets* custom_calls) {
  // Only live instructions (hlo/live_instructions.h) are evaluated: a dead
  // pure custom call must not fail (the program builder's rule too).
  for (const HloComputation* computation : module.computations()) {
    const absl::flat_hash_set<const HloInstruction*> live = LiveFromRoot(*computation);
    for (const HloInstruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != HloOpcode::kCustomCall || !live.contains(hlo)) continue;
      const std::string& target = hlo->attrs().custom_call_target;
      if (target == "TopK" || LinalgCustomCallFromTarget(target).has_value() ||
          DynamicCustomCallFromTarget(target).has_value() ||
          BuilderDecomposition(*hlo) != nullptr) {
        continue;
      }
      HLOC_ASSIGN_OR_RETURN(std::shared_ptr<const CustomCallHandler> handler,
                            FindCustomCallHandler(custom_calls, *hlo));
      if (handler != nullptr) continue;
      return InstructionUnimplemented(*hlo, "custom-call target \"", target,
                                      "\" is not known to the interpreter and not registered",
                                      UnknownTargetHint(target));
    }
  }
  return absl::OkStatus();
}

}  // namespace hloc
