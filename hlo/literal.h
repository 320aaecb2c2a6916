// Literals: host values of an HLO shape. Arrays hold their elements densely in
// row-major (logical) order whatever the shape's layout; tuples hold one literal
// per element. Element storage per type: pred as uint8 0/1, integers as their
// C++ type (sub-byte integers one per byte, sign-extended), f16/bf16/f8/f4 as
// raw bits (uint16/uint8), f32/f64 as float/double, c64/c128 as std::complex.
#ifndef HLOC_HLO_LITERAL_H_
#define HLOC_HLO_LITERAL_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/shape.h"

namespace hloc {

class Literal {
 public:
  // Largest literal hloc allocates from untrusted input (constants, protos,
  // snapshots). Bigger values are an error, never an allocation attempt.
  static constexpr int64_t kMaxBytes = int64_t{4} << 30;

  Literal() = default;
  // A zero-filled literal. The shape must be valid and within kMaxBytes; use
  // Create for shapes from user input.
  explicit Literal(const Shape& shape);
  static absl::StatusOr<Literal> Create(const Shape& shape);

  Literal(const Literal& other) { *this = other; }
  Literal& operator=(const Literal& other);
  Literal(Literal&&) noexcept = default;
  Literal& operator=(Literal&&) noexcept = default;

  template <typename T>
  static Literal Scalar(PrimitiveType type, T value) {
    Literal literal(Shape::Scalar(type));
    literal.SetFromDouble(0, static_cast<double>(value));
    return literal;
  }
  static Literal Tuple(std::vector<Literal> elements);

  const Shape& shape() const { return shape_; }
  // Changes the layout recorded in the shape; the data order does not change.
  void set_layout(const Layout& layout) { shape_.set_layout(layout); }

  int64_t element_count() const { return element_count_; }
  int64_t size_bytes() const { return element_count_ * ByteWidth(shape_.element_type()); }
  const uint8_t* raw() const { return data_.get(); }
  uint8_t* mutable_raw() { return data_.get(); }

  template <typename T>
  absl::Span<const T> data() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(data_.get()), element_count_);
  }
  template <typename T>
  absl::Span<T> mutable_data() {
    return absl::Span<T>(reinterpret_cast<T*>(data_.get()), element_count_);
  }

  const std::vector<Literal>& tuple_elements() const { return tuple_elements_; }
  std::vector<Literal>* mutable_tuple_elements() { return &tuple_elements_; }

  // Type-generic element access by linear (row-major) index. Integers and
  // pred go through int64/uint64 exactly; floats through double.
  double GetAsDouble(int64_t index) const;
  int64_t GetAsInt64(int64_t index) const;
  uint64_t GetAsUint64(int64_t index) const;
  std::complex<double> GetAsComplex(int64_t index) const;
  void SetFromDouble(int64_t index, double value);
  void SetFromInt64(int64_t index, int64_t value);
  void SetFromUint64(int64_t index, uint64_t value);
  void SetFromComplex(int64_t index, std::complex<double> value);

  // Bitwise equality of shapes (ignoring layout) and element bits.
  bool operator==(const Literal& other) const;
  bool operator!=(const Literal& other) const { return !(*this == other); }

  // "f32[2,2] {{1, 2}, {3, 4}}" (tuples: "(f32[] 1, s32[] 2)").
  std::string ToString() const;
  // Only the value: "{{1, 2}, {3, 4}}", "1", "(1, 2)" — the form inside constant(...).
  void AppendValueTo(std::string* out) const;
  // One element as HLO text spells it ("1.5", "-inf", "nan", "true", "(1, 2)").
  void AppendElementTo(int64_t index, std::string* out) const;

 private:
  Shape shape_;
  int64_t element_count_ = 0;
  std::unique_ptr<uint8_t[]> data_;
  std::vector<Literal> tuple_elements_;
};

// Shortest decimal text that parses back to the same value ("0.1", "1e+30").
void AppendShortestDouble(double value, std::string* out);
void AppendShortestFloat(float value, std::string* out);

}  // namespace hloc

#endif  // HLOC_HLO_LITERAL_H_
