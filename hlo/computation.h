// HloComputation: a DAG of instructions with numbered parameters and one root.
// It owns its instructions; removal leaves a hole that later compaction closes,
// so removing is O(1) and iteration order stays the order of insertion.
#ifndef HLOC_HLO_COMPUTATION_H_
#define HLOC_HLO_COMPUTATION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/instruction.h"

namespace hloc {

// Parameter shapes and names plus the result shape of a computation.
struct ProgramShape {
  std::vector<Shape> parameters;
  std::vector<std::string> parameter_names;
  Shape result;
  // "(a: f32[2], b: s32[]) -> f32[2]" (names omitted when empty).
  std::string ToString(bool print_layout = true) const;
};

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }
  HloModule* parent() const { return parent_; }
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string thread) { execution_thread_ = std::move(thread); }

  // Takes ownership; the instruction gets a unique id and name from the
  // module when the computation belongs to one. Parameters are also recorded
  // by their parameter_number.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  // Removes an instruction that has no users and is not the root.
  absl::Status RemoveInstruction(HloInstruction* instruction);
  // Removes `instruction` and then every operand that became dead, recursively
  // (parameters and side-effecting ops stay).
  absl::Status RemoveInstructionAndUnusedOperands(HloInstruction* instruction);
  // Moves `instruction` from the computation that holds it (of the same
  // module) to the end of this one without copying it: name, id, attributes,
  // operand, user and control edges stay as they are, and the caller rewires
  // the edges so that none crosses computations in the end (the fusion
  // builder moves members into fused computations this way). Not for
  // parameters or the root of the computation it leaves.
  absl::Status AdoptInstruction(HloInstruction* instruction);

  HloInstruction* root() const { return root_; }
  void set_root(HloInstruction* root) { root_ = root; }

  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  HloInstruction* parameter(int64_t i) const { return parameters_[i]; }
  const std::vector<HloInstruction*>& parameters() const { return parameters_; }

  int64_t instruction_count() const { return live_count_; }
  // Live instructions in insertion order.
  std::vector<HloInstruction*> instructions() const;
  template <typename Fn>
  void ForEachInstruction(Fn&& fn) const {
    for (const auto& slot : slots_) {
      if (slot) fn(slot.get());
    }
  }

  // Operands and control predecessors before users; called computations are
  // not entered. Deterministic: ties follow insertion order.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;
  std::vector<HloInstruction*> MakeInstructionReversePostOrder() const;

  ProgramShape ComputeProgramShape() const;

  // If this computation is a fusion's fused computation, that fusion.
  HloInstruction* fusion_instruction() const { return fusion_instruction_; }
  void set_fusion_instruction(HloInstruction* fusion) { fusion_instruction_ = fusion; }
  bool IsFusionComputation() const { return fusion_instruction_ != nullptr; }

  // Deep copy of the instructions (called computations are shared, not
  // copied). Instruction names get `suffix` appended when not empty.
  std::unique_ptr<HloComputation> Clone(const std::string& suffix = "clone") const;

 private:
  friend class HloModule;
  // Takes the instruction's slot out of slots_ (compacting when half are
  // holes) and hands back ownership; edges and names are left alone.
  std::unique_ptr<HloInstruction> TakeSlot(HloInstruction* instruction);

  std::string name_;
  int64_t unique_id_ = -1;
  HloModule* parent_ = nullptr;
  std::string execution_thread_;
  std::vector<std::unique_ptr<HloInstruction>> slots_;
  int64_t live_count_ = 0;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instruction_ = nullptr;
};

}  // namespace hloc

#endif  // HLOC_HLO_COMPUTATION_H_
