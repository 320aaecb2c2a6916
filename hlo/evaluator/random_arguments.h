// Deterministic random arguments for a module's entry computation, for
// differential testing (`hloc compare`, corpus tests): floats uniform in
// [-1, 1), signed integers in [-8, 8], unsigned in [0, 16], pred 50/50,
// complex with both parts in [-1, 1). Integer parameters that feed index
// operands (gather/scatter indices, dynamic-slice and dynamic-update-slice
// starts), directly or through convert/reshape/broadcast/copy/bitcast/
// transpose/slice/concatenate, are kept inside the valid start range of
// every such use. No array argument is all zeros.
#ifndef HLOC_HLO_EVALUATOR_RANDOM_ARGUMENTS_H_
#define HLOC_HLO_EVALUATOR_RANDOM_ARGUMENTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hloc {

// One argument per entry parameter; a bounded dynamic one (f32[<=8]) at its
// bound.
absl::StatusOr<std::vector<Literal>> MakeRandomArguments(const HloModule& module, uint64_t seed);

// One random literal of `shape` (tuples recursively); integers drawn from
// [0, index_bound) when index_bound > 0.
absl::StatusOr<Literal> MakeRandomLiteral(const Shape& shape, uint64_t seed,
                                          int64_t index_bound = 0);

}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_RANDOM_ARGUMENTS_H_
