// Host fallbacks through the interpreter (see host_fallback.h).
#include "backend/gpu/host_fallback.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/shape_util.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/outline.h"

namespace hloc {
namespace gpu {
namespace {

void MutableLeaves(Literal* literal, std::vector<Literal*>* out) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_tuple_elements()) MutableLeaves(&element, out);
  } else if (literal->shape().IsArray()) {
    out->push_back(literal);
  }
}

void ConstLeaves(const Literal& literal, std::vector<const Literal*>* out) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) ConstLeaves(element, out);
  } else if (literal.shape().IsArray()) {
    out->push_back(&literal);
  }
}

}  // namespace

absl::StatusOr<cuda::InterpreterThunk::Function> MakeHostFallback(const HloInstruction& hlo) {
  std::shared_ptr<const HloComputation> wrapper = WrapInstruction(hlo);
  if (wrapper == nullptr || wrapper->root() == nullptr) {
    return absl::InternalError(absl::StrCat("cannot wrap %", hlo.name(), " for the host"));
  }
  std::vector<Shape> operand_shapes;
  for (const HloInstruction* operand : hlo.operands()) operand_shapes.push_back(operand->shape());
  const std::string name = hlo.name();
  auto calls = std::make_shared<std::atomic<uint64_t>>(0);
  return cuda::InterpreterThunk::Function(
      [wrapper, operand_shapes, name, calls](
          absl::Span<const void* const> inputs, absl::Span<void* const> outputs) -> absl::Status {
        std::vector<Literal> arguments;
        size_t next = 0;
        for (const Shape& shape : operand_shapes) {
          absl::StatusOr<Literal> argument = Literal::Create(StaticBounds(shape));
          if (!argument.ok()) return argument.status();
          std::vector<Literal*> leaves;
          MutableLeaves(&*argument, &leaves);
          for (Literal* leaf : leaves) {
            if (next >= inputs.size()) {
              return absl::InternalError(absl::StrCat("%", name, ": too few input buffers"));
            }
            std::memcpy(leaf->mutable_raw(), inputs[next++], leaf->size_bytes());
          }
          arguments.push_back(*std::move(argument));
        }
        if (next != inputs.size()) {
          return absl::InternalError(absl::StrCat("%", name, ": too many input buffers"));
        }
        std::vector<const Literal*> pointers;
        for (const Literal& argument : arguments) pointers.push_back(&argument);
        EvaluatorOptions options;
        options.rng_seed = 42 + calls->fetch_add(1);
        absl::StatusOr<Literal> result = EvaluateComputation(*wrapper, pointers, options);
        if (!result.ok()) return result.status();
        std::vector<const Literal*> leaves;
        ConstLeaves(*result, &leaves);
        if (leaves.size() != outputs.size()) {
          return absl::InternalError(absl::StrCat("%", name, ": ", leaves.size(),
                                                  " result leaves for ", outputs.size(),
                                                  " output buffers"));
        }
        for (size_t i = 0; i < leaves.size(); ++i) {
          std::memcpy(outputs[i], leaves[i]->raw(), leaves[i]->size_bytes());
        }
        return absl::OkStatus();
      });
}

}  // namespace gpu
}  // namespace hloc
