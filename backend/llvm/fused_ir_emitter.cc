// FusedIrEmitter: builds generators bottom-up over the operands of the
// instruction asked for (an explicit post order, so deep graphs do not
// recurse deeply) and memoizes each through the elemental emitter's cache.
#include "backend/llvm/fused_ir_emitter.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"

namespace hloc {
namespace codegen {

absl::StatusOr<llvm::Value*> FusedIrEmitter::ParameterLeaf(const HloInstruction& hlo,
                                                           const Shape** leaf_shape) {
  ShapeIndex path;
  const HloInstruction* at = &hlo;
  while (at->opcode() == HloOpcode::kGetTupleElement) {
    path.push_back(at->tuple_index());
    at = at->operand(0);
  }
  if (at->opcode() != HloOpcode::kParameter) {
    return absl::InternalError(absl::StrCat("%", hlo.name(), " is not a parameter leaf"));
  }
  std::reverse(path.begin(), path.end());
  auto it = parameters_.find(at->parameter_number());
  if (it == parameters_.end()) {
    return absl::InternalError(absl::StrCat("parameter ", at->parameter_number(), " is not bound"));
  }
  const std::vector<ArrayLeaf> leaves = ArrayLeaves(at->shape());
  for (size_t i = 0; i < leaves.size() && i < it->second.size(); ++i) {
    if (leaves[i].index == path) {
      *leaf_shape = leaves[i].shape;
      return it->second[i];
    }
  }
  return absl::UnimplementedError(absl::StrCat("%", hlo.name(),
                                               " uses a tuple-shaped parameter as a whole"));
}

absl::StatusOr<ElementGenerator> FusedIrEmitter::MakeGenerator(const HloInstruction& hlo) {
  ElementalIrEmitter* e = elemental_;
  const bool parameter_leaf =
      hlo.shape().IsArray() &&
      (hlo.opcode() == HloOpcode::kParameter ||
       (hlo.opcode() == HloOpcode::kGetTupleElement && [&] {
         const HloInstruction* at = &hlo;
         while (at->opcode() == HloOpcode::kGetTupleElement) at = at->operand(0);
         return at->opcode() == HloOpcode::kParameter;
       }()));
  if (parameter_leaf) {
    const Shape* shape = nullptr;
    absl::StatusOr<llvm::Value*> base = ParameterLeaf(hlo, &shape);
    if (!base.ok()) return base.status();
    llvm::Value* pointer = *base;
    return e->Memoize(&hlo, [e, pointer, shape](const IrIndex& index) {
      return e->EmitArrayLoad(pointer, *shape, index);
    });
  }
  if (hlo.opcode() == HloOpcode::kParameter) {
    // A tuple parameter; only its get-tuple-element leaves are read.
    return ElementGenerator([&hlo](const IrIndex&) -> absl::StatusOr<llvm::Value*> {
      return absl::UnimplementedError(absl::StrCat("%", hlo.name(),
                                                   " (a tuple parameter) is used as a whole"));
    });
  }
  if (hlo.opcode() == HloOpcode::kConstant) {
    const Literal& literal = hlo.literal();
    if (!literal.shape().IsArray()) {
      return absl::UnimplementedError(absl::StrCat("tuple constant %", hlo.name(), " in a kernel"));
    }
    if (literal.element_count() == 1) {
      absl::StatusOr<llvm::Value*> value = e->LiteralElement(literal, 0);
      if (!value.ok()) return value.status();
      llvm::Value* v = *value;
      return ElementGenerator([v](const IrIndex&) -> absl::StatusOr<llvm::Value*> { return v; });
    }
    absl::StatusOr<llvm::Type*> type = e->ValueType(literal.shape().element_type());
    if (!type.ok()) return type.status();
    llvm::Constant* data = llvm::ConstantDataArray::getRaw(
        llvm::StringRef(reinterpret_cast<const char*>(literal.raw()), literal.size_bytes()),
        literal.element_count(), *type);
    auto* global = new llvm::GlobalVariable(*e->module(), data->getType(), /*isConstant=*/true,
                                            llvm::GlobalValue::PrivateLinkage, data,
                                            absl::StrCat("constant.", hlo.name()));
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    const Shape* shape = &literal.shape();
    return e->Memoize(&hlo, [e, global, shape](const IrIndex& index) {
      return e->EmitArrayLoad(global, *shape, index);
    });
  }
  // Operands are reached through the table, not copied: a generator holds
  // copies of its operands' generators, so copying whole generators would
  // duplicate the closure of every shared subexpression once per path to it,
  // exponentially in the depth of a graph with reuse.
  std::vector<ElementGenerator> operands;
  for (const HloInstruction* operand : hlo.operands()) {
    if (!generators_.contains(operand)) {
      return absl::InternalError(absl::StrCat("operand %", operand->name(), " of %", hlo.name(),
                                              " has no generator"));
    }
    operands.push_back([this, operand](const IrIndex& index) {
      return generators_.at(operand)(index);
    });
  }
  absl::StatusOr<ElementGenerator> generator = e->MakeElementGenerator(hlo, std::move(operands));
  if (!generator.ok()) return generator.status();
  return e->Memoize(&hlo, *std::move(generator));
}

absl::StatusOr<ElementGenerator> FusedIrEmitter::GetGenerator(const HloInstruction& hlo) {
  auto found = generators_.find(&hlo);
  if (found != generators_.end()) return found->second;
  // Post order of the operands not built yet.
  std::vector<const HloInstruction*> order;
  absl::flat_hash_set<const HloInstruction*> visited;
  std::vector<std::pair<const HloInstruction*, size_t>> stack = {{&hlo, 0}};
  visited.insert(&hlo);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < static_cast<size_t>(node->operand_count())) {
      const HloInstruction* operand = node->operand(next++);
      if (!generators_.contains(operand) && visited.insert(operand).second) {
        stack.push_back({operand, 0});
      }
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  for (const HloInstruction* instruction : order) {
    absl::StatusOr<ElementGenerator> generator = MakeGenerator(*instruction);
    if (!generator.ok()) return generator.status();
    generators_[instruction] = *std::move(generator);
  }
  return generators_.at(&hlo);
}

}  // namespace codegen
}  // namespace hloc
