// Buffers and array specs of the embedding API (hloc.h).
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/api_internal.h"
#include "api/hloc.h"
#include "hlo/literal.h"

namespace hloc {
namespace api {

// Either hloc's memory (freed here) or the caller's (release called here).
struct Buffer::Storage {
  void* memory = nullptr;
  bool owned = false;
  std::function<void()> release;
  ~Storage() {
    if (owned) std::free(memory);
    if (release) release();
  }
};

int64_t ElementByteSize(PrimitiveType type) {
  if (!IsArrayType(type)) return 0;
  return ByteWidth(type);
}

int64_t ArraySpec::byte_size() const {
  int64_t n = ElementByteSize(type);
  for (int64_t d : dims) n *= d;
  return n;
}

std::string ArraySpec::ToString() const {
  return absl::StrCat(PrimitiveTypeName(type), "[", absl::StrJoin(dims, ","), "]");
}

namespace {

// The type is an array type, dimensions are non-negative, and the size fits
// the limit hloc allocates from untrusted input.
absl::Status CheckSpec(const ArraySpec& spec) {
  if (ElementByteSize(spec.type) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("element type ", PrimitiveTypeName(spec.type), " has no array storage"));
  }
  int64_t bytes = ElementByteSize(spec.type);
  for (int64_t d : spec.dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension in ", spec.ToString()));
    }
    if (d != 0 && bytes > Literal::kMaxBytes / d) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "array ", spec.ToString(), " is larger than hloc's limit of ", Literal::kMaxBytes,
          " bytes"));
    }
    bytes *= d;
  }
  return absl::OkStatus();
}

}  // namespace

int64_t RequiredAlignment(PrimitiveType type) {
  if (IsComplex(type)) return ByteWidth(ComplexComponentType(type));
  return ElementByteSize(type);
}

absl::StatusOr<Buffer> Buffer::AllocateHost(PrimitiveType type, std::vector<int64_t> dims) {
  ArraySpec spec{type, std::move(dims)};
  if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
  // 64-byte aligned (a cache line, every vector width), never a zero-size
  // request.
  const int64_t bytes = (std::max<int64_t>(spec.byte_size(), 1) + 63) / 64 * 64;
  void* memory = std::aligned_alloc(64, static_cast<size_t>(bytes));
  if (memory == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", bytes, " bytes for ", spec.ToString()));
  }
  auto storage = std::make_shared<Storage>();
  storage->memory = memory;
  storage->owned = true;
  return Buffer(std::move(spec), std::move(storage), memory);
}

absl::StatusOr<Buffer> Buffer::WrapHost(PrimitiveType type, std::vector<int64_t> dims, void* data,
                                        std::function<void()> release) {
  ArraySpec spec{type, std::move(dims)};
  if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
  if (data == nullptr && spec.byte_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat("null data for ", spec.ToString()));
  }
  const int64_t alignment = RequiredAlignment(type);
  if (alignment > 1 && reinterpret_cast<uintptr_t>(data) % alignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat("data for ", spec.ToString(), " at ",
                                                   absl::Hex(reinterpret_cast<uintptr_t>(data)),
                                                   " is not aligned to ", alignment, " bytes"));
  }
  auto storage = std::make_shared<Storage>();
  storage->memory = data;
  storage->release = std::move(release);
  return Buffer(std::move(spec), std::move(storage), data);
}

absl::StatusOr<Buffer> Buffer::CopyFromHost(PrimitiveType type, std::vector<int64_t> dims,
                                            const void* data) {
  absl::StatusOr<Buffer> buffer = AllocateHost(type, std::move(dims));
  if (!buffer.ok()) return buffer.status();
  if (buffer->byte_size() > 0) {
    if (data == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("null data for ", buffer->spec().ToString()));
    }
    std::memcpy(buffer->data(), data, static_cast<size_t>(buffer->byte_size()));
  }
  return buffer;
}

bool Buffer::owned_by_hloc() const { return storage_ != nullptr && storage_->owned; }

Buffer BufferSharing(const Buffer& donor, ArraySpec spec) {
  return BufferAccess::Make(std::move(spec), BufferAccess::storage(donor), donor.data());
}

}  // namespace api
}  // namespace hloc
