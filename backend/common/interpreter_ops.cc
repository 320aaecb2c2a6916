// Interpreter ops (see interpreter_ops.h).
#include "backend/common/interpreter_ops.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/common/literal_leaves.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/outline.h"

namespace hloc {
namespace backend {

InterpreterEvaluator ReferenceInterpreter() {
  auto calls = std::make_shared<std::atomic<uint64_t>>(0);
  return [calls](const HloModule& module, absl::Span<const Literal> arguments) {
    EvaluatorOptions options;
    options.num_threads = 1;
    options.rng_seed = 42 + calls->fetch_add(1);
    // MakeInterpreterFunction's one-instruction wrapper calls computations of
    // the module it came from, which was verified before it was compiled.
    options.verify = false;
    return Evaluate(module, arguments, options);
  };
}

absl::StatusOr<runtime::HostFunction> MakeInterpreterFunction(const HloInstruction& hlo,
                                                              InterpreterEvaluator evaluate) {
  auto module = std::make_shared<HloModule>(absl::StrCat("interpreter_", hlo.name()));
  std::unique_ptr<HloComputation> wrapper = WrapInstruction(hlo);
  if (wrapper == nullptr || wrapper->root() == nullptr) {
    return absl::InternalError(absl::StrCat("cannot wrap %", hlo.name(), " for the interpreter"));
  }
  module->AddEntryComputation(std::move(wrapper));
  std::vector<Shape> operand_shapes;
  for (const HloInstruction* operand : hlo.operands()) operand_shapes.push_back(operand->shape());
  const std::string name = hlo.name();
  return runtime::HostFunction([module, operand_shapes, name, evaluate](
                                   absl::Span<const void* const> inputs,
                                   absl::Span<void* const> outputs) -> absl::Status {
    absl::StatusOr<std::vector<Literal>> arguments = LiteralsFromBuffers(operand_shapes, inputs);
    if (!arguments.ok()) {
      return absl::InternalError(absl::StrCat("%", name, ": ", arguments.status().message()));
    }
    absl::StatusOr<Literal> result = evaluate(*module, *arguments);
    if (!result.ok()) return result.status();
    std::vector<const Literal*> leaves;
    CollectLiteralLeaves(*result, &leaves);
    if (leaves.size() != outputs.size()) {
      return absl::InternalError(absl::StrCat("%", name, ": ", leaves.size(), " result leaves for ",
                                              outputs.size(), " output buffers"));
    }
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i]->size_bytes() > 0) {
        std::memcpy(outputs[i], leaves[i]->raw(), leaves[i]->size_bytes());
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace backend
}  // namespace hloc
