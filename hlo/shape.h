// Shapes of HLO values: arrays (element type, dimensions, dynamic flags,
// optional layout), tuples of shapes, and tokens.
#ifndef HLOC_HLO_SHAPE_H_
#define HLOC_HLO_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/primitive_type.h"

namespace hloc {

// One tile of a tiled layout. A dimension of kCombineDimension ("*" in text)
// folds the matching dimension into the next minor one.
struct Tile {
  static constexpr int64_t kCombineDimension = INT64_MIN;
  std::vector<int64_t> dimensions;
  bool operator==(const Tile& other) const { return dimensions == other.dimensions; }
};

// Physical arrangement of an array. Only minor_to_major affects semantics on
// the host; tiles, memory space and element size are carried through.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<Tile> tiles;
  int64_t element_size_in_bits = 0;
  int64_t memory_space = 0;

  bool operator==(const Layout& other) const {
    return minor_to_major == other.minor_to_major && tiles == other.tiles &&
           element_size_in_bits == other.element_size_in_bits &&
           memory_space == other.memory_space;
  }
  bool operator!=(const Layout& other) const { return !(*this == other); }
  // Descending minor_to_major: the row-major layout of a rank-`rank` array.
  static Layout RowMajor(int64_t rank);
  // "1,0:T(8,128)S(1)" (the text between a shape's layout braces).
  std::string ToString() const;
};

class Shape {
 public:
  // Size of an unbounded dynamic dimension ("?" in text), as XLA stores it.
  static constexpr int64_t kUnboundedSize = INT64_MIN;
  Shape() = default;  // An invalid shape (element type PRIMITIVE_TYPE_INVALID).
  // An array shape; all dimensions static, no layout.
  Shape(PrimitiveType element_type, std::vector<int64_t> dimensions);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Scalar(PrimitiveType element_type) { return Shape(element_type, {}); }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType type) { element_type_ = type; }
  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == xla::TUPLE; }
  bool IsToken() const { return element_type_ == xla::TOKEN; }
  bool IsScalar() const { return IsArray() && dimensions_.empty(); }

  int64_t rank() const { return static_cast<int64_t>(dimensions_.size()); }
  const std::vector<int64_t>& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[i]; }
  void set_dimensions(std::vector<int64_t> dims);
  void set_dimension(int64_t i, int64_t size) { dimensions_[i] = size; }
  void add_dimension(int64_t size, bool is_dynamic = false);

  bool is_dynamic_dimension(int64_t i) const { return !dynamic_.empty() && dynamic_[i]; }
  void set_dynamic_dimension(int64_t i, bool is_dynamic);
  // One flag per dimension (a copy: static shapes store none).
  std::vector<bool> dynamic_dimensions() const;
  bool is_static() const;  // No dynamic dimension anywhere, tuples included.

  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout* mutable_layout() { return &*layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout() { layout_.reset(); }

  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>* mutable_tuple_shapes() { return &tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  // Number of elements of an array shape; nullopt when it overflows int64.
  std::optional<int64_t> CheckedElementCount() const;
  // Element count of a shape already known to be valid (no overflow check).
  int64_t element_count() const;
  // Bytes of a host literal of this shape (ByteWidth per element); tuples
  // sum their elements. nullopt on overflow.
  std::optional<int64_t> CheckedByteSize() const;

  // Structural equality of element types, dimensions, dynamic flags and
  // layouts (a missing layout equals only a missing layout).
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // Equality ignoring layouts.
  bool Compatible(const Shape& other) const;
  // Equality ignoring layouts and element type (same dimensions/tuple tree).
  bool SameDimensions(const Shape& other) const;

  // HLO text: "f32[2,<=3]{1,0}", "(f32[], s32[4])", "token[]".
  std::string ToString(bool print_layout = true) const;
  void AppendTo(std::string* out, bool print_layout = true) const;

 private:
  PrimitiveType element_type_ = xla::PRIMITIVE_TYPE_INVALID;
  std::vector<int64_t> dimensions_;
  // Empty while no dimension was made dynamic (most shapes: no allocation),
  // else one flag per dimension.
  std::vector<bool> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
};

// The subshape at a tuple index path; error naming the path when out of range.
absl::StatusOr<const Shape*> GetSubshape(const Shape& shape, absl::Span<const int64_t> index);

// The dimensions of an array shape from the most major to the most minor in
// memory under its layout; 0..rank-1 (row-major) when it has no layout or
// one of another rank.
std::vector<int64_t> MajorToMinorOrder(const Shape& shape);

// Whether a bitcast from array shape `from` to `to` leaves every element
// where a row-major reshape would. hloc keeps every array row-major in
// memory, so layouts are metadata except on a bitcast, which reinterprets
// memory as its layouts say: one that fails this test is a transpose (with a
// reshape) in disguise. Conservative: dimensions of size 1 are ignored, and
// an equivalent pair this does not recognize is reported as false.
bool BitcastIsRowMajorReshape(const Shape& from, const Shape& to);

// Validates a shape coming from user input: known element type, non-negative
// dimensions, element count and byte size within int64, a layout that is a
// permutation of the dimensions. The message names what is wrong.
absl::Status ValidateShape(const Shape& shape);

}  // namespace hloc

#endif  // HLOC_HLO_SHAPE_H_
