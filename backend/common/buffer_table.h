// The program builder's buffers: one runtime::BufferSpec per array leaf of
// every value, which instruction's leaves live in which buffers, and the
// schedule step that gives each temporary its live interval.
//
// Steps number the instructions in schedule order, nested computations
// included at the point of the instruction that runs them. A temporary is
// live from the step that defines it to the last step that reads it (Use)
// or must keep its bytes (KeepLive: a loop's state, a conditional's result).
// Every read also goes to the BufferSharing analysis, which later decides
// which temporaries may live in another's bytes (buffer_sharing.h).
#ifndef HLOC_BACKEND_COMMON_BUFFER_TABLE_H_
#define HLOC_BACKEND_COMMON_BUFFER_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "backend/common/buffer_sharing.h"
#include "hlo/instruction.h"
#include "runtime/executable.h"

namespace hloc {
namespace backend {

using runtime::BufferId;

class BufferTable {
 public:
  // The current step, and the next one.
  int64_t step() const { return step_; }
  void Advance() { ++step_; }

  BufferId Add(runtime::BufferSpec spec);
  // A temporary of `bytes` defined at this step.
  BufferId NewTemp(int64_t bytes, std::string name);
  // One temporary per array leaf of `hlo`'s shape ("%add.3", "%while.1{0}").
  std::vector<BufferId> NewTemps(const HloInstruction& hlo);
  // One constant buffer per array leaf of a constant's literal.
  std::vector<BufferId> NewConstants(const HloInstruction& constant);

  // `id` is read at this step.
  void Use(BufferId id);
  // `id` keeps its bytes to this step.
  void KeepLive(BufferId id);

  const runtime::BufferSpec& spec(BufferId id) const { return buffers_[id]; }
  runtime::BufferSpec& mutable_spec(BufferId id) { return buffers_[id]; }
  int64_t size(BufferId id) const { return buffers_[id].size; }
  std::vector<runtime::BufferSpec>& specs() { return buffers_; }

  // Which buffers hold an instruction's array leaves (in ArrayLeaves order).
  bool IsBound(const HloInstruction* hlo) const { return leaves_.contains(hlo); }
  void Bind(const HloInstruction* hlo, std::vector<BufferId> leaves);
  // The leaves of an emitted instruction (references stay valid).
  const std::vector<BufferId>& LeavesOf(const HloInstruction* hlo) const { return leaves_.at(hlo); }
  // The leaves of `hlo`'s operands, in operand order.
  std::vector<BufferId> OperandLeaves(const HloInstruction& hlo) const;
  // OperandLeaves, each read at this step.
  std::vector<BufferId> UseOperands(const HloInstruction& hlo);

  BufferSharing& sharing() { return sharing_; }
  const BufferSharing& sharing() const { return sharing_; }

 private:
  std::vector<runtime::BufferSpec> buffers_;
  absl::node_hash_map<const HloInstruction*, std::vector<BufferId>> leaves_;
  BufferSharing sharing_;
  int64_t step_ = 0;
};

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_BUFFER_TABLE_H_
