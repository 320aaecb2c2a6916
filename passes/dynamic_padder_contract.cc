// DynamicPadder's contract with the backends (dynamic_padder.h): the
// frontend attribute it leaves on the module, written and read only here,
// and the two halves of a run: arguments padded to their bounds, the
// padded result cut to its runtime sizes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "passes/dynamic_padder.h"
#include "passes/dynamic_padder_internal.h"

namespace hloc {
namespace {

// The lines of kDynamicResultAttribute.
constexpr absl::string_view kResultLine = "result ";
constexpr absl::string_view kParameterLine = "parameter ";
constexpr absl::string_view kCheckLine = "check ";

}  // namespace

namespace dynamic_padder_internal {

// One line each: "result SHAPE", "parameter NAME SHAPE" (every entry
// parameter as declared, when one was dynamic), "check MESSAGE".
std::string EncodeDynamicResultContract(const Shape& declared,
                                        const std::vector<std::string>& names,
                                        const std::vector<Shape>& parameters,
                                        const std::vector<std::string>& checks) {
  std::vector<std::string> lines = {
      absl::StrCat(kResultLine, declared.ToString(/*print_layout=*/false))};
  for (size_t k = 0; k < parameters.size(); ++k) {
    lines.push_back(absl::StrCat(kParameterLine, k < names.size() ? names[k] : "", " ",
                                 parameters[k].ToString(/*print_layout=*/false)));
  }
  for (const std::string& check : checks) lines.push_back(absl::StrCat(kCheckLine, check));
  return absl::StrJoin(lines, "\n");
}

}  // namespace dynamic_padder_internal

absl::StatusOr<std::optional<DynamicResultContract>> FindDynamicResultContract(
    const HloModule& module) {
  const auto& map = module.config().frontend_attributes.map();
  auto it = map.find(kDynamicResultAttribute);
  if (it == map.end()) return std::nullopt;
  DynamicResultContract contract;
  bool have_result = false;
  for (absl::string_view line : absl::StrSplit(it->second, '\n')) {
    if (absl::ConsumePrefix(&line, kResultLine)) {
      HLOC_ASSIGN_OR_RETURN(contract.declared, ParseShape(line));
      have_result = true;
    } else if (absl::ConsumePrefix(&line, kParameterLine)) {
      const size_t space = line.find(' ');
      if (space == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            "frontend attribute ", kDynamicResultAttribute, ": no shape in \"", line, "\""));
      }
      HLOC_ASSIGN_OR_RETURN(Shape parameter, ParseShape(line.substr(space + 1)));
      contract.parameter_names.emplace_back(line.substr(0, space));
      contract.parameters.push_back(std::move(parameter));
    } else if (absl::ConsumePrefix(&line, kCheckLine)) {
      contract.checks.emplace_back(line);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("frontend attribute ", kDynamicResultAttribute,
                                                     ": unknown line \"", line, "\""));
    }
  }
  if (!have_result) {
    return absl::InvalidArgumentError(
        absl::StrCat("frontend attribute ", kDynamicResultAttribute, " has no result line"));
  }
  return contract;
}

namespace {

// Copies the leading box `box` (no larger than either) of `from` into `to`,
// both dense row-major arrays of one element type.
void CopyLeadingBox(const Literal& from, const std::vector<int64_t>& box, Literal* to) {
  const int64_t rank = static_cast<int64_t>(box.size());
  int64_t count = 1;
  for (int64_t n : box) count *= n;
  if (count == 0) return;
  const int width = ByteWidth(from.shape().element_type());
  auto strides = [rank](const Shape& shape) {
    std::vector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dimensions(d + 1);
    return strides;
  };
  const std::vector<int64_t> from_strides = strides(from.shape());
  const std::vector<int64_t> to_strides = strides(to->shape());
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t source = 0, target = 0;
    for (int64_t d = 0; d < rank; ++d) {
      source += index[d] * from_strides[d];
      target += index[d] * to_strides[d];
    }
    std::memcpy(to->mutable_raw() + target * width, from.raw() + source * width, width);
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == box[d]; --d) index[d] = 0;
  }
}

// Copies the leading box of `in` given by the runtime sizes.
Literal CutToSizes(const Literal& in, const std::vector<int64_t>& dims) {
  Literal out(Shape(in.shape().element_type(), dims));
  CopyLeadingBox(in, dims, &out);
  return out;
}

// `argument` (`which`, for messages) for the entry parameter (or tuple
// element of one) `declared`: at its bound, the sizes of its dynamic
// dimensions appended to `sizes` in leaf then dimension order.
absl::StatusOr<Literal> PadValue(const Literal& argument, const std::string& which,
                                 const Shape& declared, std::vector<Literal>* sizes) {
  const Shape& shape = argument.shape();
  auto mismatch = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(which, " has shape ", shape.ToString(false),
                                                   ", the parameter is ",
                                                   declared.ToString(false)));
  };
  if (declared.IsTuple()) {
    if (!shape.IsTuple() || shape.tuple_shapes_size() != declared.tuple_shapes_size()) {
      return mismatch();
    }
    std::vector<Literal> elements;
    for (int64_t k = 0; k < declared.tuple_shapes_size(); ++k) {
      HLOC_ASSIGN_OR_RETURN(Literal element,
                            PadValue(argument.tuple_elements()[k],
                                     absl::StrCat(which, " tuple element ", k),
                                     declared.tuple_shapes(k), sizes));
      elements.push_back(std::move(element));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (declared.is_static()) {
    if (!shape.Compatible(declared)) return mismatch();
    return argument;
  }
  if (!shape.IsArray() || shape.element_type() != declared.element_type() ||
      shape.rank() != declared.rank()) {
    return mismatch();
  }
  for (int64_t d = 0; d < declared.rank(); ++d) {
    const int64_t size = shape.dimensions(d), bound = declared.dimensions(d);
    if (size < 0) {
      return absl::InvalidArgumentError(absl::StrCat(which, " dimension ", d,
                                                     " has negative size ", size));
    }
    if (!declared.is_dynamic_dimension(d)) {
      if (size != bound) {
        return absl::InvalidArgumentError(absl::StrCat(which, " dimension ", d, " has size ", size,
                                                       ", the parameter's is ", bound, " (",
                                                       declared.ToString(false), ")"));
      }
      continue;
    }
    if (size > bound) {
      return absl::InvalidArgumentError(absl::StrCat(which, " dimension ", d, " has size ", size,
                                                     ", above its bound ", bound, " (",
                                                     declared.ToString(false), ")"));
    }
    sizes->push_back(Literal::Scalar<int32_t>(xla::S32, static_cast<int32_t>(size)));
  }
  Shape bound_shape = declared;
  for (int64_t d = 0; d < bound_shape.rank(); ++d) bound_shape.set_dynamic_dimension(d, false);
  Literal padded(bound_shape);
  CopyLeadingBox(argument, shape.dimensions(), &padded);
  return padded;
}

}  // namespace

absl::StatusOr<std::vector<Literal>> PadDynamicArguments(absl::Span<const Literal> arguments,
                                                         const DynamicResultContract& contract) {
  const std::vector<Shape>& parameters = contract.parameters;
  if (arguments.size() != parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   parameters.size(), " arguments, got ",
                                                   arguments.size()));
  }
  std::vector<Literal> padded, sizes;
  padded.reserve(arguments.size());
  for (size_t k = 0; k < arguments.size(); ++k) {
    if (parameters[k].is_static()) {
      if (!arguments[k].shape().Compatible(parameters[k])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "argument ", k, " has shape ", arguments[k].shape().ToString(false),
            ", the parameter is ", parameters[k].ToString(false)));
      }
      padded.push_back(arguments[k]);
      continue;
    }
    const std::string name = k < contract.parameter_names.size() ? contract.parameter_names[k] : "";
    HLOC_ASSIGN_OR_RETURN(Literal argument,
                          PadValue(arguments[k],
                                   absl::StrCat("argument ", k, " (parameter %", name, ")"),
                                   parameters[k], &sizes));
    padded.push_back(std::move(argument));
  }
  for (Literal& size : sizes) padded.push_back(std::move(size));
  return padded;
}

absl::StatusOr<Literal> ShrinkDynamicResult(const Literal& padded,
                                            const DynamicResultContract& contract) {
  if (!padded.shape().IsTuple() || padded.tuple_elements().size() != 3) {
    return absl::InternalError("a dynamic-padded result is not (result, sizes, checks)");
  }
  const Literal& result = padded.tuple_elements()[0];
  const std::vector<Literal>& sizes = padded.tuple_elements()[1].tuple_elements();
  const std::vector<Literal>& checks = padded.tuple_elements()[2].tuple_elements();
  if (checks.size() != 2 * contract.checks.size()) {
    return absl::InternalError("dynamic-padded result: checks do not match the contract");
  }
  for (size_t k = 0; k < contract.checks.size(); ++k) {
    const int64_t value = checks[2 * k].GetAsInt64(0), limit = checks[2 * k + 1].GetAsInt64(0);
    if (value < 0 || value > limit) {
      return absl::InvalidArgumentError(
          absl::StrCat(contract.checks[k], " (value ", value, ", limit ", limit, ")"));
    }
  }
  size_t next = 0;
  auto shrink_leaf = [&](const Literal& leaf, const Shape& declared) -> absl::StatusOr<Literal> {
    if (!declared.IsArray() || declared.is_static()) return leaf;
    std::vector<int64_t> dims = leaf.shape().dimensions();
    for (int64_t d = 0; d < declared.rank(); ++d) {
      if (!declared.is_dynamic_dimension(d)) continue;
      if (next >= sizes.size()) return absl::InternalError("dynamic-padded result: sizes missing");
      dims[d] = std::clamp<int64_t>(sizes[next++].GetAsInt64(0), 0, dims[d]);
    }
    return CutToSizes(leaf, dims);
  };
  if (contract.declared.IsTuple()) {
    std::vector<Literal> elements;
    for (size_t k = 0; k < result.tuple_elements().size(); ++k) {
      HLOC_ASSIGN_OR_RETURN(Literal e, shrink_leaf(result.tuple_elements()[k],
                                                   contract.declared.tuple_shapes(k)));
      elements.push_back(std::move(e));
    }
    return Literal::Tuple(std::move(elements));
  }
  return shrink_leaf(result, contract.declared);
}

}  // namespace hloc
