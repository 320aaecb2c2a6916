// Running a compiled HostProgram (see host_compiler.h): the arguments are
// checked against the entry computation's parameters, their array leaves
// become the executable's parameter buffers and the result's leaves its
// output buffers. ExecuteDonating hands a donated argument leaf to the
// output the executable aliases with it (input_output_alias, buffer
// sharing), so that output is computed in the argument's memory.
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_compiler_internal.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace host {
namespace host_compiler_internal {

// Depth-first array leaves of a literal, matching ArrayLeaves of its shape.
void CollectLiteralLeaves(const Literal& literal, std::vector<const Literal*>* out) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) CollectLiteralLeaves(element, out);
  } else if (literal.shape().IsArray()) {
    out->push_back(&literal);
  }
}
void CollectMutableLeaves(Literal* literal, std::vector<Literal*>* out) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_tuple_elements()) CollectMutableLeaves(&element, out);
  } else if (literal->shape().IsArray()) {
    out->push_back(literal);
  }
}

}  // namespace host_compiler_internal

namespace {

using host_compiler_internal::CollectLiteralLeaves;
using host_compiler_internal::CollectMutableLeaves;

absl::Status CheckArguments(absl::Span<const Literal> arguments,
                            const std::vector<Shape>& parameter_shapes) {
  if (arguments.size() != parameter_shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   parameter_shapes.size(), " arguments, got ",
                                                   arguments.size()));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!arguments[i].shape().Compatible(parameter_shapes[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " has shape ", arguments[i].shape().ToString(false),
          ", the parameter is ", parameter_shapes[i].ToString(false)));
    }
  }
  return absl::OkStatus();
}

// A literal of `shape` whose array leaf j is the donated argument leaf the
// executable aliases with output j, or new memory.
absl::StatusOr<Literal> ResultWithDonations(const Shape& shape,
                                            const runtime::Executable& executable,
                                            absl::Span<Literal* const> argument_leaves,
                                            int64_t* next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& element : shape.tuple_shapes()) {
      HLOC_ASSIGN_OR_RETURN(Literal literal,
                            ResultWithDonations(element, executable, argument_leaves, next));
      elements.push_back(std::move(literal));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  const int64_t j = (*next)++;
  const int64_t k = j < executable.num_outputs() ? executable.aliased_parameter(j) : -1;
  if (k < 0 || k >= static_cast<int64_t>(argument_leaves.size()) ||
      !argument_leaves[k]->shape().Compatible(shape)) {
    return Literal::Create(shape);
  }
  Literal donated = std::move(*argument_leaves[k]);
  if (shape.has_layout()) donated.set_layout(shape.layout());
  return donated;
}

}  // namespace

absl::StatusOr<Literal> HostProgram::ExecuteDonating(std::vector<Literal> arguments,
                                                     runtime::ThreadPool* pool,
                                                     const runtime::ExecuteOptions& options) const {
  HLOC_RETURN_IF_ERROR(CheckArguments(arguments, parameter_shapes_));
  std::vector<Literal*> argument_leaves;
  for (Literal& argument : arguments) CollectMutableLeaves(&argument, &argument_leaves);
  std::vector<const void*> parameters;
  for (Literal* leaf : argument_leaves) parameters.push_back(leaf->raw());
  int64_t next = 0;
  HLOC_ASSIGN_OR_RETURN(Literal result,
                        ResultWithDonations(result_shape_, *executable_, argument_leaves, &next));
  std::vector<Literal*> leaves;
  CollectMutableLeaves(&result, &leaves);
  std::vector<void*> outputs;
  for (Literal* leaf : leaves) outputs.push_back(leaf->mutable_raw());
  HLOC_RETURN_IF_ERROR(executable_->Execute(parameters, outputs, pool, options));
  return result;
}

absl::StatusOr<Literal> HostProgram::Execute(absl::Span<const Literal> arguments,
                                             runtime::ThreadPool* pool,
                                             const runtime::ExecuteOptions& options) const {
  HLOC_RETURN_IF_ERROR(CheckArguments(arguments, parameter_shapes_));
  std::vector<const void*> parameters;
  for (size_t i = 0; i < arguments.size(); ++i) {
    std::vector<const Literal*> leaves;
    CollectLiteralLeaves(arguments[i], &leaves);
    for (const Literal* leaf : leaves) parameters.push_back(leaf->raw());
  }
  HLOC_ASSIGN_OR_RETURN(Literal result, Literal::Create(result_shape_));
  std::vector<Literal*> leaves;
  CollectMutableLeaves(&result, &leaves);
  std::vector<void*> outputs;
  for (Literal* leaf : leaves) outputs.push_back(leaf->mutable_raw());
  HLOC_RETURN_IF_ERROR(executable_->Execute(parameters, outputs, pool, options));
  return result;
}

}  // namespace host
}  // namespace hloc
