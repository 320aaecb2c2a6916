// The SPMD partitioner's per-op rules (the table in spmd_partitioner.h):
// for one instruction and its operands' shardings, the plan that runs it on
// per-device blocks, and, for backward propagation, what a user wants of an
// operand given the user's sharding.
#ifndef HLOC_PASSES_SHARDING_SPMD_RULES_H_
#define HLOC_PASSES_SHARDING_SPMD_RULES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/instruction.h"
#include "passes/sharding/spmd_sharding.h"

namespace hloc {

struct SpmdPlan {
  // False: no rule; the op runs replicated on global shapes.
  bool partitioned = false;
  std::vector<TileSharding> operands;  // What each operand must be (arrays).
  TileSharding result;                 // What the local op's result is.
  // Non-empty: the local result is a partial value, summed (with `reducer`,
  // or add where null) over these device groups.
  std::vector<std::vector<int64_t>> all_reduce_groups;
  HloComputation* reducer = nullptr;
};

// `operands[i]` is operand i's sharding (nullopt: not known yet, or not an
// array); `preferred` the result sharding wanted, where one is.
// Returns nullopt when the op has no rule.
std::optional<SpmdPlan> PlanSpmdOp(const HloInstruction& hlo,
                                   const std::vector<std::optional<TileSharding>>& operands,
                                   const std::optional<TileSharding>& preferred, int64_t devices);

// What `user`, sharded `user_sharding`, wants its operand `index` to be; nullopt
// where the rule has no opinion.
std::optional<TileSharding> SpmdOperandWant(const HloInstruction& user,
                                            const TileSharding& user_sharding, int64_t index);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_SPMD_RULES_H_
