#include "passes/expanders/scan_expander.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "passes/expanders/counted_loop.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

// Rounds of expansion in one run: each round also expands the scans that the
// previous one copied out of to_apply bodies.
constexpr int kMaxRounds = 64;

bool CanExpand(const HloInstruction& scan) {
  if (!scan.control_predecessors().empty() || !scan.control_successors().empty()) return false;
  if (scan.called_computations().size() != 1 || scan.to_apply() == nullptr) return false;
  if (scan.dimensions().size() != 1) return false;
  const int64_t carries = scan.attrs().num_carries;
  if (carries < 0 || carries >= scan.operand_count()) return false;
  for (const HloInstruction* operand : scan.operands()) {
    if (!operand->shape().IsArray() || !operand->shape().is_static()) return false;
  }
  const Shape& first = scan.operand(0)->shape();
  return scan.dimensions(0) >= 0 && scan.dimensions(0) < first.rank();
}

// The array shapes of the scan's result, in order (one when it is bare).
std::vector<Shape> ResultShapes(const HloInstruction& scan) {
  if (scan.shape().IsTuple()) return scan.shape().tuple_shapes();
  return {scan.shape()};
}

absl::Status Expand(HloInstruction* scan) {
  const int64_t dimension = scan->dimensions(0);
  const int64_t num_carries = scan->attrs().num_carries;
  const int64_t inputs = scan->operand_count() - num_carries;
  const int64_t length = scan->operand(0)->shape().dimensions(dimension);
  const std::vector<Shape> results = ResultShapes(*scan);
  const int64_t outputs = static_cast<int64_t>(results.size()) - num_carries;
  const HloComputation& step = *scan->to_apply();
  const bool reverse = scan->attrs().is_reverse;

  ExpansionBuilder b(scan->parent(), scan);
  std::vector<HloInstruction*> initial_outputs;
  for (int64_t j = 0; j < outputs; ++j) {
    initial_outputs.push_back(
        b.Splat(b.Scalar(results[j].element_type(), 0), results[j].dimensions()));
  }
  std::vector<HloInstruction*> final_outputs = initial_outputs;
  std::vector<HloInstruction*> final_carries(scan->operands().begin() + inputs,
                                             scan->operands().end());
  if (length > 0) {
    // state = (carries..., inputs..., outputs...)
    std::vector<HloInstruction*> init = final_carries;
    init.insert(init.end(), scan->operands().begin(), scan->operands().begin() + inputs);
    init.insert(init.end(), initial_outputs.begin(), initial_outputs.end());
    auto body = [&](ExpansionBuilder& c, HloInstruction* counter,
                    const std::vector<HloInstruction*>& state) {
      HloInstruction* index =
          reverse ? c.Binary(HloOpcode::kSubtract, c.IndexScalar(xla::S32, length - 1), counter)
                  : counter;
      HloInstruction* zero = c.IndexScalar(xla::S32, 0);
      auto starts_for = [&](int64_t rank) {
        std::vector<HloInstruction*> starts(rank, zero);
        starts[dimension] = index;
        return starts;
      };
      std::vector<HloInstruction*> arguments;
      for (int64_t k = 0; k < inputs; ++k) {
        HloInstruction* input = state[num_carries + k];
        std::vector<int64_t> sizes = input->shape().dimensions();
        sizes[dimension] = 1;
        std::vector<int64_t> step_dims = sizes;
        step_dims.erase(step_dims.begin() + dimension);
        arguments.push_back(
            c.Reshape(c.DynamicSlice(input, starts_for(input->shape().rank()), sizes), step_dims));
      }
      arguments.insert(arguments.end(), state.begin(), state.begin() + num_carries);
      HloInstruction* returned = c.Inline(step, arguments);
      std::vector<HloInstruction*> values;
      if (returned != nullptr && returned->shape().IsTuple()) {
        for (int64_t v = 0; v < returned->shape().tuple_shapes_size(); ++v) {
          values.push_back(c.GetTupleElement(returned, v));
        }
      } else {
        values.push_back(returned);
      }
      if (static_cast<int64_t>(values.size()) != outputs + num_carries || values[0] == nullptr) {
        c.Fail(absl::InternalError(absl::StrCat("expanding %", scan->name(), ": to_apply returns ",
                                                values.size(), " values, expected ",
                                                outputs + num_carries)));
        return std::vector<HloInstruction*>();
      }
      std::vector<HloInstruction*> next(values.begin() + outputs, values.end());
      next.insert(next.end(), state.begin() + num_carries, state.begin() + num_carries + inputs);
      for (int64_t j = 0; j < outputs; ++j) {
        HloInstruction* stacked = state[num_carries + inputs + j];
        std::vector<int64_t> one = stacked->shape().dimensions();
        one[dimension] = 1;
        next.push_back(c.DynamicUpdateSlice(stacked, c.Reshape(values[j], one),
                                            starts_for(stacked->shape().rank())));
      }
      return next;
    };
    std::vector<HloInstruction*> after = expanders::BuildCountedLoop(b, length, init, body);
    if (!after.empty()) {
      final_carries.assign(after.begin(), after.begin() + num_carries);
      final_outputs.assign(after.begin() + num_carries + inputs, after.end());
    }
  }
  HLOC_RETURN_IF_ERROR(b.status());
  std::vector<HloInstruction*> elements = final_outputs;
  elements.insert(elements.end(), final_carries.begin(), final_carries.end());
  HloInstruction* result = scan->shape().IsTuple() ? b.Tuple(elements) : elements[0];
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(scan, result);
}

}  // namespace

absl::StatusOr<bool> ScanExpander::Run(HloModule& module) {
  bool changed = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::vector<HloInstruction*> expandable;
    for (HloComputation* computation : module.computations()) {
      if (computation->IsFusionComputation()) continue;
      for (HloInstruction* scan : computation->MakeInstructionPostOrder()) {
        if (scan->opcode() == HloOpcode::kScan && CanExpand(*scan)) expandable.push_back(scan);
      }
    }
    if (expandable.empty()) break;
    std::vector<HloComputation*> steps;
    for (HloInstruction* scan : expandable) {
      HloComputation* step = scan->to_apply();
      if (std::find(steps.begin(), steps.end(), step) == steps.end()) steps.push_back(step);
      HLOC_RETURN_IF_ERROR(Expand(scan));
    }
    // The bodies now live inside the loops; drop those nothing calls.
    for (HloComputation* step : steps) {
      if (module.CallersOf(step).empty()) HLOC_RETURN_IF_ERROR(module.RemoveComputation(step));
    }
    changed = true;
  }
  return changed;
}

}  // namespace hloc
