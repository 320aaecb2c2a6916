// HloModule: the unit hloc compiles. It owns computations, names the entry,
// keeps instruction names and ids unique, and carries the module-level
// attributes of XLA's text header (entry layout, aliasing, schedule flag, ...).
#ifndef HLOC_HLO_MODULE_H_
#define HLOC_HLO_MODULE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/computation.h"

namespace hloc {

// Module header attributes beyond the name.
struct HloModuleConfig {
  std::optional<ProgramShape> entry_computation_layout;
  bool is_scheduled = false;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters;
  std::vector<bool> allow_spmd_sharding_propagation_to_output;
  xla::HloInputOutputAliasProto input_output_alias;
  xla::HloBufferDonorProto buffer_donor;
  xla::FrontendAttributes frontend_attributes;
  bool alias_passthrough_params = false;
  // Module proto fields hloc carries but does not model (schedule, spmd
  // shardings, profile info, ...): kept for proto round trips.
  xla::HloModuleProto carried;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const HloModuleConfig& config() const { return config_; }
  HloModuleConfig* mutable_config() { return &config_; }

  // Adds a computation; its name is made unique within the module and its
  // instructions get unique names and ids.
  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  HloComputation* AddEntryComputation(std::unique_ptr<HloComputation> computation);
  // Removes a computation nothing calls any more.
  absl::Status RemoveComputation(HloComputation* computation);
  // Removes several at once with one sweep over the module (RemoveComputation
  // per computation would be quadratic). Fails, changing nothing, when one is
  // the entry, is not in this module, or is called from a computation that stays.
  absl::Status RemoveComputations(absl::Span<HloComputation* const> computations);
  HloComputation* entry() const { return entry_; }
  void set_entry(HloComputation* entry) { entry_ = entry; }

  int64_t computation_count() const { return static_cast<int64_t>(computations_.size()); }
  std::vector<HloComputation*> computations() const;
  HloComputation* FindComputation(absl::string_view name) const;

  // Callees before callers; unreachable computations too, deterministically.
  std::vector<HloComputation*> MakeComputationPostOrder() const;
  // Computations that call `computation` (through any instruction).
  std::vector<HloInstruction*> CallersOf(const HloComputation* computation) const;

  // A name not yet used by any instruction or computation, from `base`
  // ("add" -> "add", then "add.1", ...).
  std::string UniquifyName(absl::string_view base);
  std::string UniquifyComputationName(absl::string_view base);
  // Instruction names are unique module-wide; false when `name` is taken.
  bool IsNameTaken(absl::string_view name) const { return names_.contains(name); }

  int64_t instruction_count() const;
  std::unique_ptr<HloModule> Clone(const std::string& suffix = "") const;

 private:
  friend class HloComputation;
  void RegisterInstruction(HloInstruction* instruction);
  void UnregisterInstruction(HloInstruction* instruction);

  std::string name_;
  HloModuleConfig config_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  absl::flat_hash_set<std::string> names_;              // Instruction names.
  absl::flat_hash_set<std::string> computation_names_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  int64_t next_instruction_id_ = 0;
  int64_t next_computation_id_ = 0;
};

}  // namespace hloc

#endif  // HLOC_HLO_MODULE_H_
