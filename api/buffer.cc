// Buffers and array specs of the embedding API (hloc.h).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/api_internal.h"
#include "api/hloc.h"
#include "hlo/literal.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/device_memory_cache.h"

namespace hloc {
namespace api {

// Either hloc's host memory (freed here), the caller's (release called
// here), or device memory (hloc's goes back to the client's cache for the
// device).
struct Buffer::Storage {
  void* memory = nullptr;
  bool owned = false;
  std::function<void()> release;
  std::shared_ptr<cuda::CudaDevice> device;  // Set for device memory.
  std::shared_ptr<cuda::DeviceMemoryCache> cache;  // Where owned device memory goes back.
  ~Storage() {
    if (device != nullptr && owned) {
      // Others may still read it on their streams: the cache reuses it
      // only after the device was idle (device_memory_cache.h).
      cache->Release(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(memory)));
    } else if (owned) {
      std::free(memory);
    }
    if (release) release();
  }
};

std::string Location::ToString() const {
  return kind == Kind::kHost ? std::string("host") : absl::StrCat("cuda:", device);
}

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

Location Buffer::location() const {
  if (!on_device_ || storage_ == nullptr || storage_->device == nullptr) return Location{};
  return Location{Location::Kind::kCuda, storage_->device->info().ordinal};
}

Buffer BufferSharing(const Buffer& donor, ArraySpec spec) {
  return BufferAccess::Make(std::move(spec), BufferAccess::storage(donor),
                            BufferAccess::address(donor), donor.on_device());
}

namespace {

CUdeviceptr DevicePointer(const void* address) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(address));
}

// Copies between host and device (either way) or on one device, waiting for
// the copy. `device` is the device side's (either one's when both are).
// `callers_memory`: a side is the caller's device memory (WrapDevice), so
// the copy waits for all work on the device first.
absl::Status Transfer(cuda::CudaDevice& device, void* destination, bool destination_on_device,
                      const void* source, bool source_on_device, int64_t bytes,
                      bool callers_memory = false) {
  if (bytes == 0) return absl::OkStatus();
  if (absl::Status current = device.MakeCurrent(); !current.ok()) return current;
  if (callers_memory) {
    if (absl::Status done = device.SynchronizeContext(); !done.ok()) return done;
  }
  absl::Status copied;
  if (destination_on_device && source_on_device) {
    copied = device.CopyOnDevice(DevicePointer(destination), DevicePointer(source), bytes);
  } else if (destination_on_device) {
    copied = device.CopyToDevice(DevicePointer(destination), source, bytes);
  } else {
    copied = device.CopyToHost(destination, DevicePointer(source), bytes);
  }
  if (!copied.ok()) return copied;
  return device.Synchronize();
}

}  // namespace

absl::Status ClientDevice::WaitForAllWork() const {
  const uint64_t token = memory->BeforeSynchronize();
  if (absl::Status current = device->MakeCurrent(); !current.ok()) return current;
  if (absl::Status done = device->SynchronizeContext(); !done.ok()) return done;
  memory->NoteSynchronized(token);
  return absl::OkStatus();
}

bool HoldsCallersDeviceMemory(const Buffer& buffer) {
  const auto& storage = BufferAccess::storage(buffer);
  return buffer.on_device() && storage != nullptr && !storage->owned;
}

absl::StatusOr<Buffer> AllocateOnDevice(const ClientDevice& device, ArraySpec spec) {
  if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
  // Never a zero-size request: every device buffer has an address of its
  // own.
  absl::StatusOr<uint64_t> memory = device.memory->Allocate(std::max<int64_t>(spec.byte_size(), 1));
  if (!memory.ok()) {
    return absl::Status(memory.status().code(),
                        absl::StrCat("allocating ", spec.ToString(), " on cuda:",
                                     device.device->info().ordinal, ": ",
                                     memory.status().message()));
  }
  auto storage = std::make_shared<BufferAccess::Storage>();
  storage->memory = reinterpret_cast<void*>(static_cast<uintptr_t>(*memory));
  storage->owned = true;
  storage->device = device.device;
  storage->cache = device.memory;
  void* address = storage->memory;
  return BufferAccess::Make(std::move(spec), std::move(storage), address, /*on_device=*/true);
}

absl::StatusOr<Buffer> Buffer::AllocateDevice(Client& client, PrimitiveType type,
                                              std::vector<int64_t> dims, int device) {
  ArraySpec spec{type, std::move(dims)};
  if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
  absl::StatusOr<ClientDevice> handle = ClientAccess::Device(client, device);
  if (!handle.ok()) return handle.status();
  return AllocateOnDevice(*handle, std::move(spec));
}

absl::StatusOr<Buffer> Buffer::CopyToDevice(Client& client, PrimitiveType type,
                                            std::vector<int64_t> dims, const void* data,
                                            int device) {
  ArraySpec spec{type, std::move(dims)};
  if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
  if (data == nullptr && spec.byte_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat("null data for ", spec.ToString()));
  }
  absl::StatusOr<Buffer> buffer = AllocateDevice(client, spec.type, spec.dims, device);
  if (!buffer.ok()) return buffer.status();
  const auto& storage = BufferAccess::storage(*buffer);
  if (absl::Status copied = Transfer(*storage->device, storage->memory, true, data, false,
                                     buffer->byte_size());
      !copied.ok()) {
    return copied;
  }
  return buffer;
}

absl::StatusOr<Buffer> Buffer::WrapDevice(Client& client, PrimitiveType type,
                                          std::vector<int64_t> dims, uint64_t pointer,
                                          int device, std::function<void()> release) {
  ArraySpec spec{type, std::move(dims)};
  if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
  if (pointer == 0 && spec.byte_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat("null device pointer for ", spec.ToString()));
  }
  const int64_t alignment = RequiredAlignment(type);
  if (alignment > 1 && pointer % alignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat("device memory for ", spec.ToString(), " at ",
                                                   absl::Hex(pointer), " is not aligned to ",
                                                   alignment, " bytes"));
  }
  absl::StatusOr<ClientDevice> handle = ClientAccess::Device(client, device);
  if (!handle.ok()) return handle.status();
  // hloc's streams do not wait for the caller's: whatever the caller queued
  // on the memory finishes before hloc touches it, which every reader (an
  // Execute once for all its arguments, a copy) waits for then.
  auto storage = std::make_shared<Storage>();
  storage->memory = reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
  storage->release = std::move(release);
  storage->device = handle->device;
  void* address = storage->memory;
  return Buffer(std::move(spec), std::move(storage), address, /*on_device=*/true);
}

absl::StatusOr<Buffer> Buffer::ToDevice(Client& client, int device) const {
  if (!valid()) return absl::InvalidArgumentError("ToDevice on an empty Buffer");
  absl::StatusOr<Buffer> copy = AllocateDevice(client, type(), dims(), device);
  if (!copy.ok()) return copy.status();
  const auto& storage = BufferAccess::storage(*copy);
  if (on_device_ && storage_->device->info().ordinal != device) {
    // Between two devices: through the host (no peer access is set up).
    absl::StatusOr<Buffer> staged = ToHost();
    if (!staged.ok()) return staged.status();
    if (absl::Status copied = Transfer(*storage->device, storage->memory, true, staged->data(),
                                       false, byte_size());
        !copied.ok()) {
      return copied;
    }
    return copy;
  }
  if (absl::Status copied = Transfer(*storage->device, storage->memory, true, data_, on_device_,
                                     byte_size(), HoldsCallersDeviceMemory(*this));
      !copied.ok()) {
    return copied;
  }
  return copy;
}

absl::StatusOr<Buffer> Buffer::ToHost() const {
  if (!valid()) return absl::InvalidArgumentError("ToHost on an empty Buffer");
  absl::StatusOr<Buffer> copy = AllocateHost(type(), dims());
  if (!copy.ok()) return copy.status();
  if (absl::Status copied = CopyToHost(copy->data()); !copied.ok()) return copied;
  return copy;
}

absl::Status Buffer::CopyToHost(void* destination) const {
  if (!valid()) return absl::InvalidArgumentError("CopyToHost on an empty Buffer");
  if (byte_size() == 0) return absl::OkStatus();
  if (destination == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("CopyToHost: null destination for ", spec_.ToString()));
  }
  if (!on_device_) {
    std::memmove(destination, data_, static_cast<size_t>(byte_size()));
    return absl::OkStatus();
  }
  return Transfer(*storage_->device, destination, false, data_, true, byte_size(),
                  HoldsCallersDeviceMemory(*this));
}

}  // namespace api
}  // namespace hloc
