// The objects behind the PJRT C API's opaque handles, and the functions of
// hloc's PJRT plugin (libhloc_pjrt.so) that pjrt_api.cc puts in the PJRT_Api
// table. Not installed: a framework sees only GetPjrtApi and the handles.
//
// What a handle is, in hloc's terms:
//
//   PJRT_Client             hloc::api::Client (host backend), one device, one memory
//   PJRT_Device / _Memory   parts of the client; live as long as it
//   PJRT_Buffer             hloc::api::Buffer (row-major host memory, shared)
//   PJRT_LoadedExecutable   hloc::api::Executable plus its PJRT views
//   PJRT_Executable         a view of the same compiled program (own handle)
//   PJRT_Event              ready at once for hloc's work (it runs on the
//                           calling thread); PJRT_Event_Create makes one that
//                           becomes ready on PJRT_Event_Set
//   PJRT_Error              absl::Status; codes are the same numbers
//
// Arrays are row-major on the "device" (hloc's runtime order); a caller that
// asks for another host layout gets the data permuted on the way in or out,
// and every layout the plugin reports (buffers, the optimized program's entry
// computation layout) is row-major.
#ifndef HLOC_API_PJRT_PJRT_OBJECTS_H_
#define HLOC_API_PJRT_PJRT_OBJECTS_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/hloc.h"
#include "xla/pjrt/c/pjrt_c_api.h"

struct PJRT_Error {
  absl::Status status;
};

// Shared by an event's handle and whoever makes it ready.
struct PJRT_EventState {
  std::mutex mu;
  bool ready = false;
  absl::Status status;
  std::vector<std::function<void(const absl::Status&)>> on_ready;
};

struct PJRT_Event {
  std::shared_ptr<PJRT_EventState> state;
};

struct PJRT_DeviceDescription {
  int id = 0;
  int process_index = 0;
  std::string kind;
  std::string debug_string;
  std::string to_string;
  std::vector<std::string> attribute_names;  // Backing of `attributes`.
  std::vector<std::string> attribute_values;
  std::vector<PJRT_NamedValue> attributes;
};

struct PJRT_Memory {
  int id = 0;
  std::string kind;
  std::string debug_string;
  std::string to_string;
  std::vector<PJRT_Device*> devices;
};

struct PJRT_Device {
  PJRT_DeviceDescription description;
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Memory*> memories;
};

struct PJRT_Client {
  std::shared_ptr<hloc::api::Client> hloc;
  hloc::api::Backend backend = hloc::api::Backend::kHost;
  std::string platform_name;
  std::string platform_version;
  PJRT_Device device;
  PJRT_Memory memory;
  std::vector<PJRT_Device*> devices;    // {&device}
  std::vector<PJRT_Memory*> memories;   // {&memory}
};

struct PJRT_Buffer {
  PJRT_Client* client = nullptr;
  hloc::api::Buffer value;  // Empty once deleted.
  hloc::api::ArraySpec spec;
  std::vector<int64_t> minor_to_major;  // Row-major: rank-1 .. 0.
  std::atomic<bool> deleted{false};
  std::mutex mu;  // Guards `value` against PJRT_Buffer_Delete during reads.

  // The array, or FailedPrecondition when deleted.
  absl::StatusOr<hloc::api::Buffer> Get();
};

// What a PJRT_Executable and its PJRT_LoadedExecutable share.
struct PJRT_CompiledProgram {
  std::shared_ptr<hloc::api::Executable> executable;
  std::string name;
  // HloModuleProtoWithConfig (format "hlo_with_config") for
  // PJRT_Executable_OptimizedProgram; see optimized_program.h.
  std::string optimized_program;
  std::vector<PJRT_Buffer_Type> output_types;
  std::vector<int64_t> output_dims;       // Concatenated.
  std::vector<size_t> output_dim_sizes;   // Rank of each output.
  std::vector<const char*> output_memory_kinds;
  std::vector<size_t> output_memory_kind_sizes;
};

struct PJRT_Executable {
  std::shared_ptr<const PJRT_CompiledProgram> program;
};

struct PJRT_LoadedExecutable {
  PJRT_Client* client = nullptr;
  std::shared_ptr<const PJRT_CompiledProgram> program;
  PJRT_Executable executable;  // Handed out by GetExecutable as copies.
  std::atomic<bool> deleted{false};
};

namespace hloc {
namespace pjrt {

// Errors. A null PJRT_Error* is success.
PJRT_Error* MakeError(absl::Status status);
PJRT_Error* Unimplemented(const char* function);
// The event for work already done (hloc runs on the calling thread).
PJRT_Event* MakeReadyEvent(absl::Status status = absl::OkStatus());

// Element types: PJRT_Buffer_Type <-> xla::PrimitiveType.
absl::StatusOr<PrimitiveType> FromPjrtType(PJRT_Buffer_Type type);
PJRT_Buffer_Type ToPjrtType(PrimitiveType type);

// True when the caller's struct (of `struct_size` bytes, maybe from an older
// header) holds the field ending at `end`.
inline bool Has(size_t struct_size, size_t field_end) { return struct_size >= field_end; }
#define HLOC_PJRT_HAS(args, type, field) \
  ::hloc::pjrt::Has((args)->struct_size, PJRT_STRUCT_SIZE(type, field))

// pjrt_errors_events.cc
void ErrorDestroy(PJRT_Error_Destroy_Args* args);
void ErrorMessage(PJRT_Error_Message_Args* args);
PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args);
PJRT_Error* EventDestroy(PJRT_Event_Destroy_Args* args);
PJRT_Error* EventIsReady(PJRT_Event_IsReady_Args* args);
PJRT_Error* EventError(PJRT_Event_Error_Args* args);
PJRT_Error* EventAwait(PJRT_Event_Await_Args* args);
PJRT_Error* EventOnReady(PJRT_Event_OnReady_Args* args);
PJRT_Error* EventCreate(PJRT_Event_Create_Args* args);
PJRT_Error* EventSet(PJRT_Event_Set_Args* args);

// pjrt_client.cc
PJRT_Error* PluginInitialize(PJRT_Plugin_Initialize_Args* args);
PJRT_Error* PluginAttributes(PJRT_Plugin_Attributes_Args* args);
PJRT_Error* ClientCreate(PJRT_Client_Create_Args* args);
PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* args);
PJRT_Error* ClientPlatformName(PJRT_Client_PlatformName_Args* args);
PJRT_Error* ClientProcessIndex(PJRT_Client_ProcessIndex_Args* args);
PJRT_Error* ClientPlatformVersion(PJRT_Client_PlatformVersion_Args* args);
PJRT_Error* ClientDevices(PJRT_Client_Devices_Args* args);
PJRT_Error* ClientAddressableDevices(PJRT_Client_AddressableDevices_Args* args);
PJRT_Error* ClientLookupDevice(PJRT_Client_LookupDevice_Args* args);
PJRT_Error* ClientLookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args* args);
PJRT_Error* ClientAddressableMemories(PJRT_Client_AddressableMemories_Args* args);
PJRT_Error* ClientDefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args* args);
PJRT_Error* DeviceDescriptionId(PJRT_DeviceDescription_Id_Args* args);
PJRT_Error* DeviceDescriptionProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args* args);
PJRT_Error* DeviceDescriptionAttributes(PJRT_DeviceDescription_Attributes_Args* args);
PJRT_Error* DeviceDescriptionKind(PJRT_DeviceDescription_Kind_Args* args);
PJRT_Error* DeviceDescriptionDebugString(PJRT_DeviceDescription_DebugString_Args* args);
PJRT_Error* DeviceDescriptionToString(PJRT_DeviceDescription_ToString_Args* args);
PJRT_Error* DeviceGetDescription(PJRT_Device_GetDescription_Args* args);
PJRT_Error* DeviceIsAddressable(PJRT_Device_IsAddressable_Args* args);
PJRT_Error* DeviceLocalHardwareId(PJRT_Device_LocalHardwareId_Args* args);
PJRT_Error* DeviceAddressableMemories(PJRT_Device_AddressableMemories_Args* args);
PJRT_Error* DeviceDefaultMemory(PJRT_Device_DefaultMemory_Args* args);
PJRT_Error* MemoryId(PJRT_Memory_Id_Args* args);
PJRT_Error* MemoryKind(PJRT_Memory_Kind_Args* args);
PJRT_Error* MemoryKindId(PJRT_Memory_Kind_Id_Args* args);
PJRT_Error* MemoryDebugString(PJRT_Memory_DebugString_Args* args);
PJRT_Error* MemoryToString(PJRT_Memory_ToString_Args* args);
PJRT_Error* MemoryAddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args);

// pjrt_buffer.cc
PJRT_Error* ClientBufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args* args);
PJRT_Error* ClientCreateUninitializedBuffer(PJRT_Client_CreateUninitializedBuffer_Args* args);
PJRT_Error* BufferDestroy(PJRT_Buffer_Destroy_Args* args);
PJRT_Error* BufferElementType(PJRT_Buffer_ElementType_Args* args);
PJRT_Error* BufferDimensions(PJRT_Buffer_Dimensions_Args* args);
PJRT_Error* BufferUnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args* args);
PJRT_Error* BufferDynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args* args);
PJRT_Error* BufferGetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args* args);
PJRT_Error* BufferOnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args* args);
PJRT_Error* BufferDevice(PJRT_Buffer_Device_Args* args);
PJRT_Error* BufferMemory(PJRT_Buffer_Memory_Args* args);
PJRT_Error* BufferDelete(PJRT_Buffer_Delete_Args* args);
PJRT_Error* BufferIsDeleted(PJRT_Buffer_IsDeleted_Args* args);
PJRT_Error* BufferCopyToDevice(PJRT_Buffer_CopyToDevice_Args* args);
PJRT_Error* BufferCopyToMemory(PJRT_Buffer_CopyToMemory_Args* args);
PJRT_Error* BufferToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args);
PJRT_Error* BufferCopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args);
PJRT_Error* BufferIsOnCpu(PJRT_Buffer_IsOnCpu_Args* args);
PJRT_Error* BufferReadyEvent(PJRT_Buffer_ReadyEvent_Args* args);
PJRT_Error* BufferUnsafePointer(PJRT_Buffer_UnsafePointer_Args* args);
// A buffer of the client holding `value`.
PJRT_Buffer* NewBuffer(PJRT_Client* client, hloc::api::Buffer value);

// pjrt_executable.cc
PJRT_Error* ClientCompile(PJRT_Client_Compile_Args* args);
PJRT_Error* ExecutableDestroy(PJRT_Executable_Destroy_Args* args);
PJRT_Error* ExecutableName(PJRT_Executable_Name_Args* args);
PJRT_Error* ExecutableNumReplicas(PJRT_Executable_NumReplicas_Args* args);
PJRT_Error* ExecutableNumPartitions(PJRT_Executable_NumPartitions_Args* args);
PJRT_Error* ExecutableNumOutputs(PJRT_Executable_NumOutputs_Args* args);
PJRT_Error* ExecutableSizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args);
PJRT_Error* ExecutableOutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args* args);
PJRT_Error* ExecutableOptimizedProgram(PJRT_Executable_OptimizedProgram_Args* args);
PJRT_Error* ExecutableOutputElementTypes(PJRT_Executable_OutputElementTypes_Args* args);
PJRT_Error* ExecutableOutputDimensions(PJRT_Executable_OutputDimensions_Args* args);
PJRT_Error* ExecutableFingerprint(PJRT_Executable_Fingerprint_Args* args);
PJRT_Error* ExecutableGetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args* args);
PJRT_Error* LoadedExecutableDestroy(PJRT_LoadedExecutable_Destroy_Args* args);
PJRT_Error* LoadedExecutableGetExecutable(PJRT_LoadedExecutable_GetExecutable_Args* args);
PJRT_Error* LoadedExecutableAddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args* args);
PJRT_Error* LoadedExecutableDelete(PJRT_LoadedExecutable_Delete_Args* args);
PJRT_Error* LoadedExecutableIsDeleted(PJRT_LoadedExecutable_IsDeleted_Args* args);
PJRT_Error* LoadedExecutableExecute(PJRT_LoadedExecutable_Execute_Args* args);
PJRT_Error* LoadedExecutableFingerprint(PJRT_LoadedExecutable_Fingerprint_Args* args);

}  // namespace pjrt
}  // namespace hloc

#endif  // HLOC_API_PJRT_PJRT_OBJECTS_H_
