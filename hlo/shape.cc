#include "hlo/shape.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {

Layout Layout::RowMajor(int64_t rank) {
  Layout layout;
  for (int64_t i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}

std::vector<int64_t> MajorToMinorOrder(const Shape& shape) {
  const int64_t rank = shape.rank();
  std::vector<int64_t> order(rank);
  if (shape.has_layout() &&
      static_cast<int64_t>(shape.layout().minor_to_major.size()) == rank) {
    const std::vector<int64_t>& minor_to_major = shape.layout().minor_to_major;
    for (int64_t i = 0; i < rank; ++i) order[i] = minor_to_major[rank - 1 - i];
  } else {
    for (int64_t i = 0; i < rank; ++i) order[i] = i;
  }
  return order;
}

bool BitcastIsRowMajorReshape(const Shape& from, const Shape& to) {
  // The order in memory of the dimensions that have more than one index.
  auto memory_order = [](const Shape& shape) {
    std::vector<int64_t> order;
    for (int64_t d : MajorToMinorOrder(shape)) {
      if (shape.dimensions(d) != 1) order.push_back(d);
    }
    return order;
  };
  // No elements: nothing moves.
  for (int64_t d : from.dimensions()) {
    if (d == 0) return true;
  }
  const std::vector<int64_t> from_order = memory_order(from);
  const std::vector<int64_t> to_order = memory_order(to);
  // Both stored as row-major would store them: the reshape.
  if (std::is_sorted(from_order.begin(), from_order.end()) &&
      std::is_sorted(to_order.begin(), to_order.end())) {
    return true;
  }
  // The same dimensions in the same order: the identity.
  return from.dimensions() == to.dimensions() && from_order == to_order;
}

std::string Layout::ToString() const {
  std::string out = absl::StrJoin(minor_to_major, ",");
  if (tiles.empty() && element_size_in_bits == 0 && memory_space == 0) return out;
  out += ":";
  if (!tiles.empty()) {
    out += "T";
    for (const Tile& tile : tiles) {
      out += "(";
      for (size_t i = 0; i < tile.dimensions.size(); ++i) {
        if (i) out += ",";
        int64_t d = tile.dimensions[i];
        if (d == Tile::kCombineDimension) {
          out += "*";
        } else {
          absl::StrAppend(&out, d);
        }
      }
      out += ")";
    }
  }
  if (element_size_in_bits != 0) absl::StrAppend(&out, "E(", element_size_in_bits, ")");
  if (memory_space != 0) absl::StrAppend(&out, "S(", memory_space, ")");
  return out;
}

Shape::Shape(PrimitiveType element_type, std::vector<int64_t> dimensions)
    : element_type_(element_type), dimensions_(std::move(dimensions)) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = xla::TUPLE;
  shape.tuple_shapes_ = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.element_type_ = xla::TOKEN;
  return shape;
}

void Shape::set_dimensions(std::vector<int64_t> dims) {
  dimensions_ = std::move(dims);
  dynamic_.clear();
}

void Shape::add_dimension(int64_t size, bool is_dynamic) {
  if (is_dynamic || !dynamic_.empty()) {
    dynamic_.resize(dimensions_.size(), false);
    dynamic_.push_back(is_dynamic);
  }
  dimensions_.push_back(size);
}

void Shape::set_dynamic_dimension(int64_t i, bool is_dynamic) {
  if (dynamic_.empty()) {
    if (!is_dynamic) return;
    dynamic_.assign(dimensions_.size(), false);
  }
  dynamic_[i] = is_dynamic;
}

std::vector<bool> Shape::dynamic_dimensions() const {
  return dynamic_.empty() ? std::vector<bool>(dimensions_.size(), false) : dynamic_;
}

bool Shape::is_static() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes_) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  for (bool d : dynamic_) {
    if (d) return false;
  }
  return true;
}

std::optional<int64_t> Shape::CheckedElementCount() const {
  int64_t count = 1;
  for (int64_t d : dimensions_) {
    if (d < 0) return std::nullopt;
    if (__builtin_mul_overflow(count, d, &count)) return std::nullopt;
  }
  return count;
}

int64_t Shape::element_count() const {
  int64_t count = 1;
  for (int64_t d : dimensions_) count *= d;
  return count;
}

std::optional<int64_t> Shape::CheckedByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : tuple_shapes_) {
      std::optional<int64_t> size = s.CheckedByteSize();
      if (!size || __builtin_add_overflow(total, *size, &total)) return std::nullopt;
    }
    return total;
  }
  if (!IsArray()) return 0;
  std::optional<int64_t> count = CheckedElementCount();
  int64_t bytes;
  if (!count || __builtin_mul_overflow(*count, int64_t{ByteWidth(element_type_)}, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

bool Shape::operator==(const Shape& other) const {
  if (!Compatible(other)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (tuple_shapes_[i] != other.tuple_shapes_[i]) return false;
    }
    return true;
  }
  return layout_ == other.layout_;
}

bool Shape::Compatible(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (IsTuple()) {
    if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (!tuple_shapes_[i].Compatible(other.tuple_shapes_[i])) return false;
    }
    return true;
  }
  if (dimensions_ != other.dimensions_) return false;
  if (dynamic_.empty() && other.dynamic_.empty()) return true;
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    if (is_dynamic_dimension(i) != other.is_dynamic_dimension(i)) return false;
  }
  return true;
}

bool Shape::SameDimensions(const Shape& other) const {
  if (IsTuple() != other.IsTuple()) return false;
  if (IsTuple()) {
    if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (!tuple_shapes_[i].SameDimensions(other.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return dimensions_ == other.dimensions_;
}

void Shape::AppendTo(std::string* out, bool print_layout) const {
  if (IsTuple()) {
    out->push_back('(');
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i) out->append(", ");
      tuple_shapes_[i].AppendTo(out, print_layout);
    }
    out->push_back(')');
    return;
  }
  absl::StrAppend(out, PrimitiveTypeName(element_type_));
  out->push_back('[');
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    if (i) out->push_back(',');
    if (is_dynamic_dimension(i)) {
      // An unbounded dynamic size prints as "?", a bounded one as "<=N".
      if (dimensions_[i] == kUnboundedSize) {
        out->push_back('?');
        continue;
      }
      out->append("<=");
    }
    absl::StrAppend(out, dimensions_[i]);
  }
  out->push_back(']');
  if (print_layout && layout_ && IsArray() && !dimensions_.empty()) {
    out->push_back('{');
    out->append(layout_->ToString());
    out->push_back('}');
  } else if (print_layout && layout_ && IsArray() &&
             (layout_->memory_space != 0 || layout_->element_size_in_bits != 0)) {
    out->push_back('{');
    out->append(layout_->ToString());
    out->push_back('}');
  }
}

std::string Shape::ToString(bool print_layout) const {
  std::string out;
  AppendTo(&out, print_layout);
  return out;
}

absl::StatusOr<const Shape*> GetSubshape(const Shape& shape, absl::Span<const int64_t> index) {
  const Shape* current = &shape;
  for (size_t i = 0; i < index.size(); ++i) {
    if (!current->IsTuple() || index[i] < 0 || index[i] >= current->tuple_shapes_size()) {
      return absl::InvalidArgumentError(absl::StrCat("tuple index {", absl::StrJoin(index, ","),
                                                     "} is out of range for shape ",
                                                     shape.ToString()));
    }
    current = &current->tuple_shapes(index[i]);
  }
  return current;
}

absl::Status ValidateShape(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      absl::Status status = ValidateShape(s);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  if (shape.IsToken()) return absl::OkStatus();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape has an invalid element type (", static_cast<int>(shape.element_type()),
                     ")"));
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    int64_t d = shape.dimensions(i);
    if (d < 0 && !(d == Shape::kUnboundedSize && shape.is_dynamic_dimension(i))) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", shape.ToString(), " has negative dimension ", i));
    }
  }
  // The byte size with unbounded dimensions counted as 0 must fit in 64 bits
  // (computed in place: the verifier validates every instruction's shape).
  int64_t count = 1;
  bool fits = true;
  for (int64_t d : shape.dimensions()) {
    if (fits && __builtin_mul_overflow(count, d < 0 ? int64_t{0} : d, &count)) fits = false;
  }
  int64_t bytes;
  if (!fits || __builtin_mul_overflow(count, int64_t{ByteWidth(shape.element_type())}, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", shape.ToString(), " has more elements than fit in 64 bits"));
  }
  if (shape.has_layout()) {
    const std::vector<int64_t>& m2m = shape.layout().minor_to_major;
    if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("layout of ", shape.ToString(), " names ",
                                                     m2m.size(), " dimensions, the shape has ",
                                                     shape.rank()));
    }
    // A bit per dimension; on the stack up to rank 256 (the verifier checks
    // every instruction's shape).
    uint64_t small_seen[4] = {0, 0, 0, 0};
    std::vector<uint64_t> large_seen;
    uint64_t* seen = small_seen;
    if (m2m.size() > 256) {
      large_seen.assign((m2m.size() + 63) / 64, 0);
      seen = large_seen.data();
    }
    for (int64_t d : m2m) {
      if (d < 0 || d >= shape.rank() || (seen[d / 64] >> (d % 64) & 1)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "layout of ", shape.ToString(), " is not a permutation of the dimensions"));
      }
      seen[d / 64] |= uint64_t{1} << (d % 64);
    }
  }
  return absl::OkStatus();
}

}  // namespace hloc
