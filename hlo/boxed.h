// Boxed<T>: a value of type T kept out of line and allocated only once it is
// written. Reading an unwritten Boxed gives a shared default-constructed T, so
// it behaves like a plain T member that was never set, at the cost of one
// pointer. Used for the large, rarely set members of HloAttributes (protobuf
// messages such as the convolution window or gather dimension numbers).
// BoxedOptional<T> is the same for members that are std::optional-like (set or
// not): it has std::optional's reading and writing interface.
#ifndef HLOC_HLO_BOXED_H_
#define HLOC_HLO_BOXED_H_

#include <memory>
#include <optional>
#include <utility>

namespace hloc {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed(const T& value) : value_(std::make_unique<T>(value)) {}  // NOLINT: implicit
  Boxed(T&& value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: implicit

  Boxed& operator=(const Boxed& other) {
    if (this == &other) return *this;
    if (!other.value_) {
      value_.reset();
    } else if (value_) {
      *value_ = *other.value_;
    } else {
      value_ = std::make_unique<T>(*other.value_);
    }
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(const T& value) {
    *mutable_value() = value;
    return *this;
  }
  Boxed& operator=(T&& value) {
    *mutable_value() = std::move(value);
    return *this;
  }

  // True once written (through assignment or a mutable access); an unwritten
  // value reads as T's default.
  bool has_value() const { return value_ != nullptr; }
  const T& value() const { return value_ ? *value_ : Default(); }
  T* mutable_value() {
    if (!value_) value_ = std::make_unique<T>();
    return value_.get();
  }
  // Back to unwritten (reads as the default again).
  void reset() { value_.reset(); }

  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  // Mutable access allocates: use value() / a const reference to only read.
  T* operator->() { return mutable_value(); }
  operator const T&() const { return value(); }  // NOLINT: implicit, reads like a T member

 private:
  static const T& Default() {
    static const T* const kDefault = new T();
    return *kDefault;
  }

  std::unique_ptr<T> value_;
};

// An optional T kept out of line: one pointer while unset.
template <typename T>
class BoxedOptional {
 public:
  BoxedOptional() = default;
  BoxedOptional(std::nullopt_t) {}  // NOLINT: implicit, as std::optional
  BoxedOptional(const BoxedOptional& other)
      : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  BoxedOptional(BoxedOptional&&) noexcept = default;
  BoxedOptional& operator=(const BoxedOptional& other) {
    if (this != &other) *this = other.value_ ? BoxedOptional(*other.value_) : BoxedOptional();
    return *this;
  }
  BoxedOptional& operator=(BoxedOptional&&) noexcept = default;
  BoxedOptional(const T& value) : value_(std::make_unique<T>(value)) {}  // NOLINT: implicit
  BoxedOptional(T&& value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: implicit
  BoxedOptional& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }
  BoxedOptional& operator=(const T& value) { return *this = BoxedOptional(value); }
  BoxedOptional& operator=(T&& value) { return *this = BoxedOptional(std::move(value)); }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  void reset() { value_.reset(); }
  // As for std::optional, reading an unset value is the caller's error.
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return value_.get(); }
  T* operator->() { return value_.get(); }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace hloc

#endif  // HLOC_HLO_BOXED_H_
