#include "hlo/literal.h"

#include <charconv>
#include <cmath>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/float_formats.h"

namespace hloc {

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) tuple_elements_.emplace_back(element);
    return;
  }
  if (!shape.IsArray()) return;
  element_count_ = shape.element_count();
  int64_t bytes = size_bytes();
  data_.reset(new uint8_t[bytes > 0 ? bytes : 1]());
}

absl::StatusOr<Literal> Literal::Create(const Shape& shape) {
  absl::Status status = ValidateShape(shape);
  if (!status.ok()) return status;
  if (!shape.is_static()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot make a literal of dynamic shape ", shape.ToString()));
  }
  std::optional<int64_t> bytes = shape.CheckedByteSize();
  if (!bytes || *bytes > kMaxBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("literal of shape ", shape.ToString(),
                                                     " would take more than ", kMaxBytes,
                                                     " bytes"));
  }
  // Below the limit the memory may still not be there (a container's limit,
  // ulimit -v): a Status, not a terminated process.
  try {
    return Literal(shape);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory: cannot allocate ", *bytes, " bytes for a literal of shape ",
        shape.ToString()));
  }
}

Literal& Literal::operator=(const Literal& other) {
  if (this == &other) return *this;
  shape_ = other.shape_;
  element_count_ = other.element_count_;
  tuple_elements_ = other.tuple_elements_;
  if (other.data_) {
    int64_t bytes = other.size_bytes();
    data_.reset(new uint8_t[bytes > 0 ? bytes : 1]);
    std::memcpy(data_.get(), other.data_.get(), bytes);
  } else {
    data_.reset();
  }
  return *this;
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal literal;
  literal.shape_ = Shape::Tuple(std::move(shapes));
  literal.tuple_elements_ = std::move(elements);
  return literal;
}

namespace {

template <typename T>
T Load(const uint8_t* data, int64_t index) {
  T v;
  std::memcpy(&v, data + index * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Store(uint8_t* data, int64_t index, T v) {
  std::memcpy(data + index * sizeof(T), &v, sizeof(T));
}

// Keeps the low `bits` of a sub-byte integer, sign-extending signed ones.
int64_t WrapSubByte(PrimitiveType type, int64_t value) {
  int bits = BitWidth(type);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t low = static_cast<uint64_t>(value) & mask;
  if (IsSignedInteger(type) && (low >> (bits - 1)) & 1) return static_cast<int64_t>(low | ~mask);
  return static_cast<int64_t>(low);
}

}  // namespace

double Literal::GetAsDouble(int64_t i) const {
  const uint8_t* d = data_.get();
  switch (shape_.element_type()) {
    case xla::F32: return Load<float>(d, i);
    case xla::F64: return Load<double>(d, i);
    case xla::F16: return HalfToFloat(Load<uint16_t>(d, i));
    case xla::BF16: return BFloat16ToFloat(Load<uint16_t>(d, i));
    case xla::C64: return Load<std::complex<float>>(d, i).real();
    case xla::C128: return Load<std::complex<double>>(d, i).real();
    default:
      if (IsNarrowFloat(shape_.element_type())) {
        return NarrowFloatToDouble(shape_.element_type(), d[i]);
      }
      if (IsUnsignedInteger(shape_.element_type())) return static_cast<double>(GetAsUint64(i));
      return static_cast<double>(GetAsInt64(i));
  }
}

int64_t Literal::GetAsInt64(int64_t i) const {
  const uint8_t* d = data_.get();
  switch (shape_.element_type()) {
    case xla::PRED: return d[i] != 0;
    case xla::S1: case xla::S2: case xla::S4: case xla::S8: return Load<int8_t>(d, i);
    case xla::U1: case xla::U2: case xla::U4: case xla::U8: return d[i];
    case xla::S16: return Load<int16_t>(d, i);
    case xla::U16: return Load<uint16_t>(d, i);
    case xla::S32: return Load<int32_t>(d, i);
    case xla::U32: return Load<uint32_t>(d, i);
    case xla::S64: return Load<int64_t>(d, i);
    case xla::U64: return static_cast<int64_t>(Load<uint64_t>(d, i));
    default: return static_cast<int64_t>(GetAsDouble(i));
  }
}

uint64_t Literal::GetAsUint64(int64_t i) const {
  if (shape_.element_type() == xla::U64) return Load<uint64_t>(data_.get(), i);
  return static_cast<uint64_t>(GetAsInt64(i));
}

std::complex<double> Literal::GetAsComplex(int64_t i) const {
  switch (shape_.element_type()) {
    case xla::C64: {
      auto c = Load<std::complex<float>>(data_.get(), i);
      return {c.real(), c.imag()};
    }
    case xla::C128: return Load<std::complex<double>>(data_.get(), i);
    default: return {GetAsDouble(i), 0.0};
  }
}

void Literal::SetFromDouble(int64_t i, double v) {
  uint8_t* d = data_.get();
  PrimitiveType type = shape_.element_type();
  switch (type) {
    case xla::F32: Store<float>(d, i, static_cast<float>(v)); return;
    case xla::F64: Store<double>(d, i, v); return;
    case xla::F16: Store<uint16_t>(d, i, DoubleToHalf(v)); return;
    case xla::BF16: Store<uint16_t>(d, i, DoubleToBFloat16(v)); return;
    case xla::C64: Store<std::complex<float>>(d, i, {static_cast<float>(v), 0.f}); return;
    case xla::C128: Store<std::complex<double>>(d, i, {v, 0.0}); return;
    case xla::PRED: d[i] = v != 0; return;
    default:
      if (IsNarrowFloat(type)) {
        d[i] = DoubleToNarrowFloat(type, v);
      } else if (IsUnsignedInteger(type)) {
        SetFromUint64(i, static_cast<uint64_t>(v));
      } else {
        SetFromInt64(i, static_cast<int64_t>(v));
      }
  }
}

void Literal::SetFromInt64(int64_t i, int64_t v) {
  uint8_t* d = data_.get();
  PrimitiveType type = shape_.element_type();
  switch (type) {
    case xla::PRED: d[i] = v != 0; return;
    case xla::S8: Store<int8_t>(d, i, static_cast<int8_t>(v)); return;
    case xla::U8: d[i] = static_cast<uint8_t>(v); return;
    case xla::S16: Store<int16_t>(d, i, static_cast<int16_t>(v)); return;
    case xla::U16: Store<uint16_t>(d, i, static_cast<uint16_t>(v)); return;
    case xla::S32: Store<int32_t>(d, i, static_cast<int32_t>(v)); return;
    case xla::U32: Store<uint32_t>(d, i, static_cast<uint32_t>(v)); return;
    case xla::S64: Store<int64_t>(d, i, v); return;
    case xla::U64: Store<uint64_t>(d, i, static_cast<uint64_t>(v)); return;
    case xla::S1: case xla::S2: case xla::S4:
      Store<int8_t>(d, i, static_cast<int8_t>(WrapSubByte(type, v)));
      return;
    case xla::U1: case xla::U2: case xla::U4:
      d[i] = static_cast<uint8_t>(WrapSubByte(type, v));
      return;
    default: SetFromDouble(i, static_cast<double>(v));
  }
}

void Literal::SetFromUint64(int64_t i, uint64_t v) {
  if (shape_.element_type() == xla::U64) {
    Store<uint64_t>(data_.get(), i, v);
  } else if (IsFloatingPoint(shape_.element_type()) || IsComplex(shape_.element_type())) {
    SetFromDouble(i, static_cast<double>(v));
  } else {
    SetFromInt64(i, static_cast<int64_t>(v));
  }
}

void Literal::SetFromComplex(int64_t i, std::complex<double> v) {
  switch (shape_.element_type()) {
    case xla::C64:
      Store<std::complex<float>>(data_.get(), i,
                                 {static_cast<float>(v.real()), static_cast<float>(v.imag())});
      return;
    case xla::C128: Store<std::complex<double>>(data_.get(), i, v); return;
    default: SetFromDouble(i, v.real());
  }
}

bool Literal::operator==(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (shape_.IsTuple()) return tuple_elements_ == other.tuple_elements_;
  if (!data_ || !other.data_) return !data_ && !other.data_;
  return std::memcmp(data_.get(), other.data_.get(), size_bytes()) == 0;
}

void AppendShortestDouble(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append(std::signbit(value) ? "-nan" : "nan");
    return;
  }
  if (std::isinf(value)) {
    out->append(value < 0 ? "-inf" : "inf");
    return;
  }
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void AppendShortestFloat(float value, std::string* out) {
  if (std::isnan(value) || std::isinf(value)) {
    AppendShortestDouble(value, out);
    return;
  }
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void Literal::AppendElementTo(int64_t i, std::string* out) const {
  PrimitiveType type = shape_.element_type();
  const uint8_t* d = data_.get();
  switch (type) {
    case xla::PRED: out->append(d[i] ? "true" : "false"); return;
    case xla::F32: AppendShortestFloat(Load<float>(d, i), out); return;
    case xla::F64: AppendShortestDouble(Load<double>(d, i), out); return;
    case xla::F16: AppendShortestFloat(HalfToFloat(Load<uint16_t>(d, i)), out); return;
    case xla::BF16: AppendShortestFloat(BFloat16ToFloat(Load<uint16_t>(d, i)), out); return;
    case xla::C64:
    case xla::C128: {
      std::complex<double> c = GetAsComplex(i);
      out->push_back('(');
      if (type == xla::C64) {
        AppendShortestFloat(static_cast<float>(c.real()), out);
        out->append(", ");
        AppendShortestFloat(static_cast<float>(c.imag()), out);
      } else {
        AppendShortestDouble(c.real(), out);
        out->append(", ");
        AppendShortestDouble(c.imag(), out);
      }
      out->push_back(')');
      return;
    }
    case xla::U64: absl::StrAppend(out, Load<uint64_t>(d, i)); return;
    default:
      if (IsNarrowFloat(type)) {
        AppendShortestDouble(GetAsDouble(i), out);
      } else {
        absl::StrAppend(out, GetAsInt64(i));
      }
  }
}

namespace {

constexpr int64_t kMaxEmptyArrayGroups = 4096;

// The nested braces of an array with no elements: f32[2,0] is "{{}, {}}",
// braces repeat along the dimensions before the first zero-sized one.
void AppendEmptyArray(const std::vector<int64_t>& dims, size_t d, std::string* out) {
  out->push_back('{');
  if (dims[d] != 0) {
    for (int64_t i = 0; i < dims[d]; ++i) {
      if (i) out->append(", ");
      AppendEmptyArray(dims, d + 1, out);
    }
  }
  out->push_back('}');
}

}  // namespace

void Literal::AppendValueTo(std::string* out) const {
  if (shape_.IsTuple()) {
    out->push_back('(');
    for (size_t i = 0; i < tuple_elements_.size(); ++i) {
      if (i) out->append(", ");
      tuple_elements_[i].AppendValueTo(out);
    }
    out->push_back(')');
    return;
  }
  if (shape_.IsToken() || !data_) return;
  const int64_t rank = shape_.rank();
  if (rank == 0) {
    AppendElementTo(0, out);
    return;
  }
  // Walk the elements in row-major order, opening and closing one brace per
  // dimension whose index wraps.
  const std::vector<int64_t>& dims = shape_.dimensions();
  if (element_count_ == 0) {
    // The nested form has one "{}" per index of the dimensions before the
    // first zero-sized one: f32[60000,60000,0] would print 3.6e9 of them.
    // Past a few thousand, print the elided form, which for an array with
    // no elements says everything (the parser reads "{...}" as zeros).
    int64_t groups = 1;
    for (int64_t d : dims) {
      if (d == 0) break;
      groups = d > kMaxEmptyArrayGroups ? kMaxEmptyArrayGroups + 1 : groups * d;
      if (groups > kMaxEmptyArrayGroups) break;
    }
    if (groups > kMaxEmptyArrayGroups) {
      out->append("{...}");
    } else {
      AppendEmptyArray(dims, 0, out);
    }
    return;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t d = 0; d < rank; ++d) out->push_back('{');
  for (int64_t linear = 0; linear < element_count_; ++linear) {
    AppendElementTo(linear, out);
    int64_t d = rank - 1;
    int closed = 0;
    while (d >= 0 && ++index[d] == dims[d]) {
      index[d] = 0;
      out->push_back('}');
      ++closed;
      --d;
    }
    if (d < 0) break;
    out->append(", ");
    for (int c = 0; c < closed; ++c) out->push_back('{');
  }
}

std::string Literal::ToString() const {
  std::string out;
  if (shape_.IsTuple()) {
    out.push_back('(');
    for (size_t i = 0; i < tuple_elements_.size(); ++i) {
      if (i) out.append(", ");
      out.append(tuple_elements_[i].ToString());
    }
    out.push_back(')');
    return out;
  }
  shape_.AppendTo(&out, /*print_layout=*/false);
  out.push_back(' ');
  AppendValueTo(&out);
  return out;
}

}  // namespace hloc
