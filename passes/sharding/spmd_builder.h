// SpmdBuilder: what the SPMD partitioner (spmd_partitioner.h) adds to the
// per-device entry besides the ops it partitions: resharding between two
// TileShardings, and the all-reduce / reduce-scatter that finish a partial
// sum. Resharding, cheapest first:
//   one split dimension a -> another b on the same devices:  one all-to-all
//     (reshape, transpose, all-to-all, transpose, reshape);
//   else all-gather the dimensions `to` no longer splits, then dynamic-slice
//     the ones only `to` splits at offsets read from a per-device s32 table
//     by partition-id; where the two do not meet, through replication.
// Collectives carry explicit device groups (ordered as the tile array says),
// a fresh channel id and use_global_device_ids where the op has the flag;
// SpmdReport counts each kind.
#ifndef HLOC_PASSES_SHARDING_SPMD_BUILDER_H_
#define HLOC_PASSES_SHARDING_SPMD_BUILDER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "passes/sharding/spmd_partitioner.h"
#include "passes/sharding/spmd_sharding.h"

namespace hloc {

class SpmdBuilder {
 public:
  // Adds to `comp` (of `module`); `report` (not owned) counts collectives.
  SpmdBuilder(HloModule& module, HloComputation* comp, SpmdReport* report)
      : module_(module), comp_(comp), report_(report) {}

  HloInstruction* Add(std::unique_ptr<HloInstruction> hlo) {
    return comp_->AddInstruction(std::move(hlo));
  }
  // `x` (a block of `from`, of global shape `global`) as a block of `to`;
  // `what` names the value in errors (uneven blocks).
  absl::StatusOr<HloInstruction*> Reshard(HloInstruction* x, const Shape& global,
                                          const TileSharding& from, const TileSharding& to,
                                          const std::string& what);
  // Sums over `groups` with `reducer` (null: add of x's type).
  HloInstruction* AllReduce(HloInstruction* x, std::vector<std::vector<int64_t>> groups,
                            HloComputation* reducer);
  // Sums over `groups` and leaves member i block i along `dim` (`scattered`).
  HloInstruction* ReduceScatter(HloInstruction* x, const Shape& scattered, int64_t dim,
                                std::vector<std::vector<int64_t>> groups, HloComputation* reducer);

 private:
  absl::StatusOr<HloInstruction*> AllToAll(HloInstruction* x, const Shape& global,
                                           const TileSharding& from, int64_t a, int64_t b);
  void SetGroups(HloAttributes* a, std::vector<std::vector<int64_t>> groups);
  HloInstruction* Zero();
  HloInstruction* Offset(const std::vector<int64_t>& table);
  HloComputation* AddComputation(PrimitiveType type);

  HloModule& module_;
  HloComputation* comp_;
  SpmdReport* report_;
  int64_t next_channel_ = 1;
  HloInstruction* zero_ = nullptr;
  HloInstruction* partition_ = nullptr;
  std::map<std::vector<int64_t>, HloInstruction*> offsets_;
  std::map<PrimitiveType, HloComputation*> adds_;
};

// The dimension where `target` is `summed` split once more across each of
// the all-reduce `groups` in their order (member i holds block i): then the
// sum and split are one reduce-scatter along it. nullopt otherwise.
std::optional<int64_t> ScatterDim(const std::vector<std::vector<int64_t>>& groups,
                                  const TileSharding& summed, const TileSharding& target);

}  // namespace hloc

#endif  // HLOC_PASSES_SHARDING_SPMD_BUILDER_H_
