// The checks shared by the library pattern families (see library_checks.h).
#include "passes/outlining/library_checks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {

bool IsLibraryFloat(PrimitiveType type) {
  return type == xla::F16 || type == xla::BF16 || type == xla::F32 || type == xla::F64;
}

Refusal CheckLibraryFloat(const HloInstruction* i) {
  if (!i->shape().IsArray() || !IsLibraryFloat(i->shape().element_type())) {
    return absl::StrCat(i->name(), " has type ", PrimitiveTypeName(i->shape().element_type()),
                        " (library ops take f16, bf16, f32 or f64)");
  }
  return std::nullopt;
}

Refusal CheckStatic(const HloInstruction* i) {
  auto dynamic = [](const Shape& s) { return s.IsArray() && !s.is_static(); };
  if (dynamic(i->shape())) return absl::StrCat(i->name(), " has a dynamic shape");
  for (const HloInstruction* operand : i->operands()) {
    if (dynamic(operand->shape())) return absl::StrCat(operand->name(), " has a dynamic shape");
  }
  return std::nullopt;
}

bool IsRowMajor(const Shape& shape) {
  if (!shape.IsArray() || !shape.has_layout()) return true;
  return shape.layout().minor_to_major == Layout::RowMajor(shape.rank()).minor_to_major &&
         shape.layout().tiles.empty() && shape.layout().element_size_in_bits == 0 &&
         shape.layout().memory_space == 0;
}

bool IsDenseStrided(const Shape& shape) {
  if (!shape.IsArray() || !shape.has_layout()) return true;
  const Layout& layout = shape.layout();
  if (!layout.tiles.empty() || layout.element_size_in_bits != 0 || layout.memory_space != 0) {
    return false;
  }
  std::vector<int64_t> sorted = layout.minor_to_major;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d = 0; d < static_cast<int64_t>(sorted.size()); ++d) {
    if (sorted[d] != d) return false;
  }
  return static_cast<int64_t>(sorted.size()) == shape.rank();
}

Refusal CheckLayouts(const HloInstruction* i, const LibraryCheckOptions& options) {
  auto check = [&](const HloInstruction* value, absl::string_view role) -> Refusal {
    const Shape& s = value->shape();
    if (options.require_row_major_layouts ? IsRowMajor(s) : IsDenseStrided(s)) return std::nullopt;
    return absl::StrCat(role, value->name(), " has layout {", s.layout().ToString(), "}, not ",
                        options.require_row_major_layouts
                            ? "row-major"
                            : "a dense permutation of its dimensions (strides cannot express it)");
  };
  HLOC_REFUSE_IF(check(i, ""));
  for (const HloInstruction* operand : i->operands()) {
    HLOC_REFUSE_IF(check(operand, absl::StrCat("operand of ", i->name(), " ")));
  }
  return std::nullopt;
}

void RecordLayout(CompositeAttributes& attributes, absl::string_view key,
                  const HloInstruction* value) {
  const Shape& s = value->shape();
  if (IsRowMajor(s)) {
    attributes.Erase(key);
  } else {
    attributes.Ints(key, s.layout().minor_to_major);
  }
}

Refusal CheckVectorAlong(const HloInstruction* top, const HloInstruction* vector, int64_t dimension,
                         const Shape& out, absl::string_view what) {
  const Shape& v = vector->shape();
  if (!v.IsArray() || v.rank() != 1) {
    return absl::StrCat(what, " ", vector->name(), " is not a vector");
  }
  if (v.element_type() != out.element_type()) {
    return absl::StrCat(what, " ", vector->name(), " is ", PrimitiveTypeName(v.element_type()),
                        ", the result ", PrimitiveTypeName(out.element_type()));
  }
  if (dimension < 0 || dimension >= out.rank() || v.dimensions(0) != out.dimensions(dimension)) {
    return absl::StrCat(what, " has ", v.dimensions(0), " elements, not the ",
                        dimension >= 0 && dimension < out.rank() ? out.dimensions(dimension) : -1,
                        " of dimension ", dimension);
  }
  std::optional<std::vector<int64_t>> dims = pattern::EquivalentBroadcastDimensions(top, vector);
  // A vector of one element broadcast anywhere is fine.
  std::vector<int64_t> want =
      v.dimensions(0) == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{dimension};
  if (!dims.has_value() || *dims != want) {
    return absl::StrCat(what, " ", vector->name(), " is broadcast along ",
                        dims.has_value() ? DimsToString(*dims) : "a reshaped layout",
                        ", not along dimension ", dimension);
  }
  return std::nullopt;
}

Refusal CheckBroadcastBack(const HloInstruction* top, const HloInstruction* base,
                           const Shape& reduced, absl::Span<const int64_t> reduce_dims,
                           absl::string_view what) {
  std::vector<int64_t> want;
  for (int64_t d = 0; d < reduced.rank(); ++d) {
    bool is_reduced = false;
    for (int64_t r : reduce_dims) is_reduced |= r == d;
    if (!is_reduced && reduced.dimensions(d) != 1) want.push_back(d);
  }
  std::optional<std::vector<int64_t>> dims = pattern::EquivalentBroadcastDimensions(top, base);
  if (!dims.has_value() || *dims != want || top->shape().dimensions() != reduced.dimensions()) {
    return absl::StrCat(what, " is not broadcast back along the reduced dimensions");
  }
  return std::nullopt;
}

Refusal CheckReducesLastDimension(const HloInstruction* reduce, absl::string_view what) {
  int64_t rank = reduce->operand(0)->shape().rank();
  if (reduce->dimensions() != std::vector<int64_t>{rank - 1}) {
    return absl::StrCat(what, " ", reduce->name(), " reduces dimensions ",
                        DimsToString(reduce->dimensions()), ", not the last one (", rank - 1, ")");
  }
  return std::nullopt;
}

std::vector<int64_t> ToVector(const google::protobuf::RepeatedField<int64_t>& field) {
  return std::vector<int64_t>(field.begin(), field.end());
}

std::string DimsToString(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

}  // namespace hloc
