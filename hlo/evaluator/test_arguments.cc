// Random arguments for differential tests; see test_arguments.h.
#include "hlo/evaluator/test_arguments.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/verifier.h"

namespace hloc {

bool HasNondeterministicOps(const HloModule& module) {
  bool found = false;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](HloInstruction* i) {
      found = found || i->opcode() == HloOpcode::kRng ||
              i->opcode() == HloOpcode::kRngGetAndUpdateState;
    });
  }
  return found;
}

std::string RandomArgumentsForTest(const HloModule& module, uint64_t seed,
                                   std::vector<Literal>* arguments,
                                   int64_t max_argument_bytes) {
  if (!VerifyModule(module).ok()) return "does not verify";
  if (HasNondeterministicOps(module)) return "random number generation";
  int64_t bytes = 0;
  for (const HloInstruction* parameter : module.entry()->parameters()) {
    std::optional<int64_t> size =
        parameter == nullptr ? std::nullopt : parameter->shape().CheckedByteSize();
    bytes = size && bytes <= max_argument_bytes ? bytes + *size : max_argument_bytes + 1;
  }
  if (bytes > max_argument_bytes) {
    return absl::StrCat("arguments over ", max_argument_bytes >> 20, " MiB");
  }
  absl::StatusOr<std::vector<Literal>> drawn = MakeRandomArguments(module, seed);
  if (!drawn.ok()) return "no random arguments for its parameters";
  *arguments = *std::move(drawn);
  return "";
}

EvaluatorOptions TestEvaluatorOptions() {
  EvaluatorOptions options;
  options.max_while_iterations = 100000;
  return options;
}

}  // namespace hloc
