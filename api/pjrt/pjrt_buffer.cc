// PJRT buffers: hloc::api::Buffers (dense, row-major, in host memory) behind
// a handle. Transfers are copies done on the calling thread, so their events
// are ready when the call returns; the caller's host layout (strides or a
// minor-to-major order) is honored in both directions (host_layout.h).
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pjrt/host_layout.h"
#include "api/pjrt/pjrt_objects.h"

absl::StatusOr<hloc::api::Buffer> PJRT_Buffer::Get() {
  std::lock_guard<std::mutex> lock(mu);
  if (deleted.load()) {
    return absl::FailedPreconditionError(
        absl::StrCat("buffer ", spec.ToString(), " has been deleted or donated"));
  }
  return value;
}

namespace hloc {
namespace pjrt {
namespace {

absl::Status CheckMemory(PJRT_Client* client, PJRT_Device* device, PJRT_Memory* memory) {
  if (memory != nullptr && memory != &client->memory) {
    return absl::InvalidArgumentError("memory does not belong to this hloc client");
  }
  if (device != nullptr && device != &client->device) {
    return absl::InvalidArgumentError("device does not belong to this hloc client");
  }
  return absl::OkStatus();
}

// hloc keeps arrays row-major; a device layout that asks for anything else
// is refused rather than silently ignored.
absl::Status CheckDeviceLayout(const PJRT_Buffer_MemoryLayout* layout,
                               absl::Span<const int64_t> dims, int64_t element_size) {
  if (layout == nullptr) return absl::OkStatus();
  absl::StatusOr<std::vector<int64_t>> strides = ByteStridesForLayout(layout, dims, element_size);
  if (!strides.ok()) return strides.status();
  std::vector<int64_t> row_major = RowMajorByteStrides(dims, element_size);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > 1 && (*strides)[i] != row_major[i]) {
      return absl::UnimplementedError("hloc keeps device buffers row-major");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ElementSize(PrimitiveType type) {
  const int64_t size = hloc::api::ElementByteSize(type);
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("element type ", PrimitiveTypeName(type), " has no array storage"));
  }
  return size;
}

}  // namespace

PJRT_Buffer* NewBuffer(PJRT_Client* client, hloc::api::Buffer value) {
  auto* buffer = new PJRT_Buffer;
  buffer->client = client;
  buffer->spec = value.spec();
  const int64_t rank = static_cast<int64_t>(buffer->spec.dims.size());
  for (int64_t d = rank - 1; d >= 0; --d) buffer->minor_to_major.push_back(d);
  buffer->value = std::move(value);
  return buffer;
}

PJRT_Error* ClientBufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args* args) {
  PJRT_Client* client = args->client;
  if (absl::Status ok = CheckMemory(client, args->device, args->memory); !ok.ok()) {
    return MakeError(ok);
  }
  absl::StatusOr<PrimitiveType> type = FromPjrtType(args->type);
  if (!type.ok()) return MakeError(type.status());
  absl::StatusOr<int64_t> element_size = ElementSize(*type);
  if (!element_size.ok()) return MakeError(element_size.status());
  std::vector<int64_t> dims(args->dims, args->dims + args->num_dims);
  if (absl::Status ok = CheckDeviceLayout(args->device_layout, dims, *element_size); !ok.ok()) {
    return MakeError(ok);
  }
  std::vector<int64_t> src_strides;
  if (args->num_byte_strides == 0) {
    src_strides = RowMajorByteStrides(dims, *element_size);
  } else if (args->num_byte_strides != dims.size()) {
    return MakeError(absl::InvalidArgumentError(absl::StrCat(
        args->num_byte_strides, " byte strides for an array of rank ", dims.size())));
  } else {
    src_strides.assign(args->byte_strides, args->byte_strides + args->num_byte_strides);
    for (int64_t stride : src_strides) {
      if (stride < 0) {
        return MakeError(absl::InvalidArgumentError("negative byte strides are not supported"));
      }
    }
  }
  absl::StatusOr<hloc::api::Buffer> value = hloc::api::Buffer::AllocateHost(*type, dims);
  if (!value.ok()) return MakeError(value.status());
  if (value->byte_size() > 0 && args->data == nullptr) {
    return MakeError(absl::InvalidArgumentError(
        absl::StrCat("null data for ", value->spec().ToString())));
  }
  CopyStrided(args->data, src_strides, value->data(), RowMajorByteStrides(dims, *element_size),
              dims, *element_size);
  // Copied: the caller may free its data now, whatever the semantics asked.
  args->done_with_host_buffer = MakeReadyEvent();
  args->buffer = NewBuffer(client, *std::move(value));
  return nullptr;
}

PJRT_Error* ClientCreateUninitializedBuffer(PJRT_Client_CreateUninitializedBuffer_Args* args) {
  if (absl::Status ok = CheckMemory(args->client, args->device, args->memory); !ok.ok()) {
    return MakeError(ok);
  }
  absl::StatusOr<PrimitiveType> type = FromPjrtType(args->shape_element_type);
  if (!type.ok()) return MakeError(type.status());
  absl::StatusOr<int64_t> element_size = ElementSize(*type);
  if (!element_size.ok()) return MakeError(element_size.status());
  std::vector<int64_t> dims(args->shape_dims, args->shape_dims + args->shape_num_dims);
  if (absl::Status ok = CheckDeviceLayout(args->shape_layout, dims, *element_size); !ok.ok()) {
    return MakeError(ok);
  }
  absl::StatusOr<hloc::api::Buffer> value = hloc::api::Buffer::AllocateHost(*type, dims);
  if (!value.ok()) return MakeError(value.status());
  std::memset(value->data(), 0, static_cast<size_t>(value->byte_size()));
  args->buffer = NewBuffer(args->client, *std::move(value));
  return nullptr;
}

PJRT_Error* BufferDestroy(PJRT_Buffer_Destroy_Args* args) {
  delete args->buffer;
  return nullptr;
}

PJRT_Error* BufferElementType(PJRT_Buffer_ElementType_Args* args) {
  args->type = ToPjrtType(args->buffer->spec.type);
  return nullptr;
}

PJRT_Error* BufferDimensions(PJRT_Buffer_Dimensions_Args* args) {
  args->dims = args->buffer->spec.dims.data();
  args->num_dims = args->buffer->spec.dims.size();
  return nullptr;
}

PJRT_Error* BufferUnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args* args) {
  args->unpadded_dims = args->buffer->spec.dims.data();
  args->num_dims = args->buffer->spec.dims.size();
  return nullptr;
}

PJRT_Error* BufferDynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args* args) {
  args->dynamic_dim_indices = nullptr;
  args->num_dynamic_dims = 0;
  return nullptr;
}

PJRT_Error* BufferGetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args* args) {
  PJRT_Buffer_MemoryLayout& layout = args->layout;
  layout = PJRT_Buffer_MemoryLayout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = args->buffer->minor_to_major.data();
  layout.tiled.minor_to_major_size = args->buffer->minor_to_major.size();
  layout.tiled.tile_dims = nullptr;
  layout.tiled.tile_dim_sizes = nullptr;
  layout.tiled.num_tiles = 0;
  return nullptr;
}

PJRT_Error* BufferOnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args* args) {
  args->on_device_size_in_bytes = static_cast<size_t>(args->buffer->spec.byte_size());
  return nullptr;
}

PJRT_Error* BufferDevice(PJRT_Buffer_Device_Args* args) {
  args->device = &args->buffer->client->device;
  return nullptr;
}

PJRT_Error* BufferMemory(PJRT_Buffer_Memory_Args* args) {
  args->memory = &args->buffer->client->memory;
  return nullptr;
}

PJRT_Error* BufferDelete(PJRT_Buffer_Delete_Args* args) {
  PJRT_Buffer* buffer = args->buffer;
  hloc::api::Buffer released;
  {
    std::lock_guard<std::mutex> lock(buffer->mu);
    released = std::move(buffer->value);
    buffer->value = hloc::api::Buffer();
    buffer->deleted = true;
  }
  return nullptr;
}

PJRT_Error* BufferIsDeleted(PJRT_Buffer_IsDeleted_Args* args) {
  args->is_deleted = args->buffer->deleted.load();
  return nullptr;
}

namespace {

// Buffers are immutable once made, so a copy on the one device shares memory.
PJRT_Error* CopyWithinClient(PJRT_Buffer* buffer, PJRT_Buffer** out) {
  absl::StatusOr<hloc::api::Buffer> value = buffer->Get();
  if (!value.ok()) return MakeError(value.status());
  *out = NewBuffer(buffer->client, *std::move(value));
  return nullptr;
}

}  // namespace

PJRT_Error* BufferCopyToDevice(PJRT_Buffer_CopyToDevice_Args* args) {
  if (absl::Status ok = CheckMemory(args->buffer->client, args->dst_device, nullptr); !ok.ok()) {
    return MakeError(ok);
  }
  return CopyWithinClient(args->buffer, &args->dst_buffer);
}

PJRT_Error* BufferCopyToMemory(PJRT_Buffer_CopyToMemory_Args* args) {
  if (absl::Status ok = CheckMemory(args->buffer->client, nullptr, args->dst_memory); !ok.ok()) {
    return MakeError(ok);
  }
  return CopyWithinClient(args->buffer, &args->dst_buffer);
}

PJRT_Error* BufferToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args) {
  PJRT_Buffer* buffer = args->src;
  const hloc::api::ArraySpec& spec = buffer->spec;
  const int64_t element_size = hloc::api::ElementByteSize(spec.type);
  absl::StatusOr<std::vector<int64_t>> dst_strides =
      ByteStridesForLayout(args->host_layout, spec.dims, element_size);
  if (!dst_strides.ok()) return MakeError(dst_strides.status());
  const int64_t needed = SpannedBytes(spec.dims, *dst_strides, element_size);
  if (args->dst == nullptr) {
    args->dst_size = static_cast<size_t>(needed);
    return nullptr;
  }
  if (args->dst_size < static_cast<size_t>(needed)) {
    return MakeError(absl::InvalidArgumentError(absl::StrCat(
        "destination of ", args->dst_size, " bytes is too small for ", spec.ToString(), " (",
        needed, " bytes)")));
  }
  absl::StatusOr<hloc::api::Buffer> value = buffer->Get();
  if (!value.ok()) return MakeError(value.status());
  CopyStrided(value->data(), RowMajorByteStrides(spec.dims, element_size), args->dst,
              *dst_strides, spec.dims, element_size);
  args->event = MakeReadyEvent();
  return nullptr;
}

PJRT_Error* BufferCopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args) {
  absl::StatusOr<hloc::api::Buffer> value = args->buffer->Get();
  if (!value.ok()) return MakeError(value.status());
  if (args->offset < 0 || args->transfer_size < 0 ||
      args->offset + args->transfer_size > value->byte_size()) {
    return MakeError(absl::InvalidArgumentError(
        absl::StrCat("raw copy of bytes [", args->offset, ", ", args->offset + args->transfer_size,
                     ") is outside the ", value->byte_size(), "-byte buffer")));
  }
  std::memcpy(args->dst, static_cast<const char*>(value->data()) + args->offset,
              static_cast<size_t>(args->transfer_size));
  args->event = MakeReadyEvent();
  return nullptr;
}

PJRT_Error* BufferIsOnCpu(PJRT_Buffer_IsOnCpu_Args* args) {
  args->is_on_cpu = true;
  return nullptr;
}

PJRT_Error* BufferReadyEvent(PJRT_Buffer_ReadyEvent_Args* args) {
  args->event = MakeReadyEvent();
  return nullptr;
}

PJRT_Error* BufferUnsafePointer(PJRT_Buffer_UnsafePointer_Args* args) {
  absl::StatusOr<hloc::api::Buffer> value = args->buffer->Get();
  if (!value.ok()) return MakeError(value.status());
  args->buffer_pointer = reinterpret_cast<uintptr_t>(value->data());
  return nullptr;
}

}  // namespace pjrt
}  // namespace hloc
