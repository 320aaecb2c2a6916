// CheckSpmdPartition (see spmd_check.h).
#include "passes/sharding/spmd_check.h"

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/multi_device.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/status_macros.h"
#include "hlo/verifier.h"
#include "passes/sharding/device_placement.h"

namespace hloc {

absl::StatusOr<std::vector<Literal>> RunOnInterpreterDevices(
    const HloModule& module, absl::Span<const std::vector<Literal>> arguments) {
  return EvaluateOnDevices(module, arguments);
}

int64_t CountOps(const HloModule& module, HloOpcode opcode) {
  int64_t n = 0;
  for (const HloInstruction* hlo : module.entry()->instructions()) n += hlo->opcode() == opcode;
  return n;
}

absl::StatusOr<SpmdCheck> CheckSpmdPartition(const HloModule& original, int64_t devices,
                                             const DeviceRunner& run,
                                             std::vector<Literal> arguments,
                                             const Tolerance& tolerance) {
  SpmdCheck check;
  if (arguments.empty()) {
    HLOC_ASSIGN_OR_RETURN(arguments, MakeRandomArguments(original, 1));
  }
  // The reference: one device, sharding constraints (identities) dropped.
  std::unique_ptr<HloModule> reference = original.Clone();
  for (HloInstruction* hlo : reference->entry()->MakeInstructionPostOrder()) {
    if (hlo->opcode() != HloOpcode::kCustomCall ||
        (hlo->attrs().custom_call_target != "Sharding" &&
         hlo->attrs().custom_call_target != "xla.sdy.FuncResultSharding")) {
      continue;
    }
    HLOC_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(hlo->operands()[0]));
    HLOC_RETURN_IF_ERROR(reference->entry()->RemoveInstruction(hlo));
  }
  HLOC_ASSIGN_OR_RETURN(Literal expected, Evaluate(*reference, arguments));
  check.partitioned = original.Clone();
  SpmdPartitionOptions options;
  options.devices = devices;
  options.report = &check.report;
  HLOC_ASSIGN_OR_RETURN(bool changed, SpmdPartition(options).Run(*check.partitioned));
  if (!changed) return absl::FailedPreconditionError("spmd-partition changed nothing");
  HLOC_RETURN_IF_ERROR(VerifyModule(*check.partitioned));
  const HloComputation* entry = check.partitioned->entry();
  std::vector<std::vector<Literal>> per_device(devices);
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const HloInstruction* param = entry->parameter(p);
    HLOC_ASSIGN_OR_RETURN(
        DevicePlacement placement,
        PlacementOfSharding(param->sharding(), param->shape(), devices, param->name()));
    for (int64_t d = 0; d < devices; ++d) {
      Literal block(param->shape());
      CopyBlockToDevice(placement, d, arguments[p].raw(), block.mutable_raw());
      per_device[d].push_back(std::move(block));
    }
  }
  HLOC_ASSIGN_OR_RETURN(std::vector<Literal> results, run(*check.partitioned, per_device));
  const HloInstruction* root = entry->root();
  const bool tuple = root->shape().IsTuple();
  const int64_t outputs = tuple ? root->shape().tuple_shapes_size() : 1;
  check.expected = tuple ? expected.tuple_elements() : std::vector<Literal>{expected};
  for (int64_t i = 0; i < outputs; ++i) {
    const Shape& local = tuple ? root->shape().tuple_shapes(i) : root->shape();
    const xla::OpSharding& s = tuple ? root->sharding().tuple_shardings(i) : root->sharding();
    HLOC_ASSIGN_OR_RETURN(DevicePlacement placement,
                          PlacementOfSharding(s, local, devices, absl::StrCat("result ", i)));
    Literal global(check.expected[i].shape());
    for (int64_t d = 0; d < devices; ++d) {
      if (!placement.gathers[d]) continue;
      const Literal& block = tuple ? results[d].tuple_elements()[i] : results[d];
      CopyBlockFromDevice(placement, d, block.raw(), global.mutable_raw());
    }
    ComparisonReport cmp = CompareLiterals(check.expected[i], global, tolerance);
    if (!cmp.ok) absl::StrAppend(&check.mismatches, "result ", i, ": ", cmp.ToString(), "\n");
    check.actual.push_back(std::move(global));
  }
  return check;
}

}  // namespace hloc
