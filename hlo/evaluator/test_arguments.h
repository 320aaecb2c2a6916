// Test support for differential tests over real modules (corpus and zoo):
// decides whether a module can be run on random arguments and draws them,
// with the reason when it cannot. Test code only (testonly target).
#ifndef HLOC_HLO_EVALUATOR_TEST_ARGUMENTS_H_
#define HLOC_HLO_EVALUATOR_TEST_ARGUMENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/evaluator/evaluator.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {

// Whether `module` uses rng or rng-get-and-update-state (results that no
// second run reproduces).
bool HasNondeterministicOps(const HloModule& module);

// Fills `arguments` with seeded random arguments for `module` and returns "",
// or returns why it did not: "does not verify", "random number generation",
// "arguments over N MiB" (sized before they are drawn: drawing gigabytes of
// random numbers is slow) or "no random arguments for its parameters".
std::string RandomArgumentsForTest(const HloModule& module, uint64_t seed,
                                   std::vector<Literal>* arguments,
                                   int64_t max_argument_bytes = int64_t{64} << 20);

// Evaluator options for corpus modules: while loops bounded at 100000 trips.
EvaluatorOptions TestEvaluatorOptions();

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_TEST_ARGUMENTS_H_
