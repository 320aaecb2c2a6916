// Running a compiled HostProgram (see host_compiler.h): the arguments are
// checked against the entry computation's parameters, their array leaves
// become the executable's parameter buffers and the result's leaves its
// output buffers. ExecuteDonating hands a donated argument leaf to the
// output the executable aliases with it (input_output_alias, buffer
// sharing), so that output is computed in the argument's memory. Arguments of
// dynamic entry parameters are first padded to their bounds (DeclaredResult).
#include <cstdint>
#include <utility>
#include <vector>

#include "backend/common/literal_leaves.h"
#include "backend/host/host_compiler.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace host {
namespace {

using backend::CollectMutableLeaves;

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
  // Dynamic entry parameters run on padded copies: nothing to donate.
  if (declared_result_.dynamic_parameters()) return Execute(arguments, pool, options);
  HLOC_RETURN_IF_ERROR(backend::CheckArguments(arguments, parameter_shapes_));
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
  return declared_result_.FromRun(std::move(result));
}

absl::StatusOr<Literal> HostProgram::Execute(absl::Span<const Literal> arguments,
                                             runtime::ThreadPool* pool,
                                             const runtime::ExecuteOptions& options) const {
  std::vector<Literal> padded;  // Dynamic entry parameters' arguments (declared_result.h).
  if (declared_result_.dynamic_parameters()) {
    HLOC_ASSIGN_OR_RETURN(padded, declared_result_.PadArguments(arguments));
    arguments = padded;
  }
  HLOC_RETURN_IF_ERROR(backend::CheckArguments(arguments, parameter_shapes_));
  HLOC_ASSIGN_OR_RETURN(backend::ResultLiteral result, backend::CreateResultLiteral(result_shape_));
  HLOC_RETURN_IF_ERROR(
      executable_->Execute(backend::ArgumentLeafData(arguments), result.outputs, pool, options));
  return declared_result_.FromRun(std::move(result.literal));
}

}  // namespace host
}  // namespace hloc
