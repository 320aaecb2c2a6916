// Literal leaves and program arguments (see literal_leaves.h).
#include "backend/common/literal_leaves.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/shape_util.h"

namespace hloc {
namespace backend {

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

int64_t LeafBytes(const Shape& shape) {
  int64_t n = ByteWidth(shape.element_type());
  for (int64_t d : shape.dimensions()) n *= d;
  return n;
}

absl::Status CheckArguments(absl::Span<const Literal> arguments,
                            absl::Span<const Shape> parameter_shapes) {
  if (arguments.size() != parameter_shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   parameter_shapes.size(), " arguments, got ",
                                                   arguments.size()));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!arguments[i].shape().Compatible(parameter_shapes[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, " has shape ", arguments[i].shape().ToString(false),
                       ", the parameter is ", parameter_shapes[i].ToString(false)));
    }
  }
  return absl::OkStatus();
}

std::vector<const void*> ArgumentLeafData(absl::Span<const Literal> arguments) {
  std::vector<const void*> data;
  for (const Literal& argument : arguments) {
    std::vector<const Literal*> leaves;
    CollectLiteralLeaves(argument, &leaves);
    for (const Literal* leaf : leaves) data.push_back(leaf->raw());
  }
  return data;
}

absl::StatusOr<ResultLiteral> CreateResultLiteral(const Shape& shape) {
  absl::StatusOr<Literal> literal = Literal::Create(shape);
  if (!literal.ok()) return literal.status();
  ResultLiteral result{*std::move(literal), {}};
  std::vector<Literal*> leaves;
  CollectMutableLeaves(&result.literal, &leaves);
  for (Literal* leaf : leaves) result.outputs.push_back(leaf->mutable_raw());
  return result;
}

absl::StatusOr<std::vector<Literal>> LiteralsFromBuffers(absl::Span<const Shape> shapes,
                                                         absl::Span<const void* const> buffers) {
  std::vector<Literal> literals;
  size_t next = 0;
  for (const Shape& shape : shapes) {
    absl::StatusOr<Literal> literal = Literal::Create(StaticBounds(shape));
    if (!literal.ok()) return literal.status();
    std::vector<Literal*> leaves;
    CollectMutableLeaves(&*literal, &leaves);
    for (Literal* leaf : leaves) {
      if (next >= buffers.size()) return absl::InternalError("too few buffers for the literals");
      if (leaf->size_bytes() > 0)
        std::memcpy(leaf->mutable_raw(), buffers[next], leaf->size_bytes());
      ++next;
    }
    literals.push_back(*std::move(literal));
  }
  if (next != buffers.size()) return absl::InternalError("more buffers than the literals take");
  return literals;
}

}  // namespace backend
}  // namespace hloc
