// The module's input_output_alias pairs (see program_builder.h): output
// leaf j may be computed in the memory of parameter leaf i when the pair
// names arrays of one shape, neither is aliased twice, and buffer sharing
// finds nothing that writes the output's bytes before the parameter's last
// read (BufferSharing::OutputMayReuseParameter). The others are reported
// with the reason and run without sharing memory.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/common/program_builder.h"
#include "backend/llvm/array_leaves.h"

namespace hloc {
namespace backend {

namespace {

// The leaf of `leaves` at shape index `index`, or leaves.end().
std::vector<ArrayLeaf>::const_iterator LeafAt(const std::vector<ArrayLeaf>& leaves,
                                              const ShapeIndex& index) {
  return std::find_if(leaves.begin(), leaves.end(),
                      [&](const ArrayLeaf& leaf) { return leaf.index == index; });
}

}  // namespace

std::vector<BufferId> ProgramBuilder::AliasedOutputs(const HloModule& module,
                                                     const std::vector<BufferId>& outputs) const {
  const std::vector<ArrayLeaf> leaves = ArrayLeaves(module.entry()->root()->shape());
  std::vector<BufferId> aliased;
  if (leaves.size() != outputs.size()) return aliased;
  for (const auto& alias : module.config().input_output_alias.entries()) {
    auto j = LeafAt(leaves, ShapeIndex(alias.output_shape_index().begin(),
                                       alias.output_shape_index().end()));
    if (j != leaves.end()) aliased.push_back(outputs[j - leaves.begin()]);
  }
  return aliased;
}

absl::Status ProgramBuilder::AliasOutputsWithParameters(const HloModule& module,
                                                        BuiltProgram* program) {
  const HloComputation& entry = *module.entry();
  const std::vector<BufferId>& outputs = program->outputs;
  const std::vector<ArrayLeaf> output_leaves = ArrayLeaves(entry.root()->shape());
  std::vector<bool> output_taken(outputs.size(), false);
  std::vector<BufferId> parameters_taken;
  for (const auto& alias : module.config().input_output_alias.entries()) {
    const ShapeIndex output_index(alias.output_shape_index().begin(),
                                  alias.output_shape_index().end());
    const ShapeIndex parameter_index(alias.parameter_shape_index().begin(),
                                     alias.parameter_shape_index().end());
    const std::string what =
        absl::StrCat("output {", absl::StrJoin(output_index, ","), "} / parameter ",
                     alias.parameter_number(), " {", absl::StrJoin(parameter_index, ","), "}");
    auto j = LeafAt(output_leaves, output_index);
    if (j == output_leaves.end() || output_leaves.size() != outputs.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_output_alias ", what, ": no such array in the entry's result"));
    }
    const int64_t number = alias.parameter_number();
    if (number < 0 || number >= entry.num_parameters()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_output_alias ", what, ": no such parameter"));
    }
    const std::vector<ArrayLeaf> parameter_leaves = ArrayLeaves(entry.parameter(number)->shape());
    auto p = LeafAt(parameter_leaves, parameter_index);
    if (p == parameter_leaves.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_output_alias ", what, ": no such array in the parameter"));
    }
    if (!j->shape->Compatible(*p->shape)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_output_alias ", what, ": the arrays differ in shape"));
    }
    const size_t output = j - output_leaves.begin();
    const BufferId parameter =
        buffers_.LeavesOf(entry.parameter(number)).at(p - parameter_leaves.begin());
    std::string refusal;
    if (output_taken[output] ||
        std::count(parameters_taken.begin(), parameters_taken.end(), parameter) > 0) {
      refusal = "aliased twice";
    } else if (!buffers_.sharing().OutputMayReuseParameter(buffers_.specs(), outputs,
                                                           outputs[output], parameter)) {
      refusal = "the output is written before the parameter's last read";
    }
    if (!refusal.empty()) {
      report_.alias_refusals.push_back(absl::StrCat(what, ": ", refusal));
      continue;
    }
    output_taken[output] = true;
    parameters_taken.push_back(parameter);
    program->output_parameter_aliases.push_back(
        {static_cast<int64_t>(output), buffers_.spec(parameter).parameter});
    report_.aliased_outputs.push_back(what);
  }
  return absl::OkStatus();
}

}  // namespace backend
}  // namespace hloc
