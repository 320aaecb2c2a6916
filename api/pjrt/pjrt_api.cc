// GetPjrtApi: the one symbol libhloc_pjrt.so exports (hloc_pjrt.lds). It
// returns the PJRT_Api table, PJRT C API 0.90 (torch_xla 2.9, built against
// 0.75, accepts plugins reporting minor versions 29 to 90). Every entry is
// set: functions hloc implements (pjrt_*.cc) and, for the rest, a stub that
// returns an Unimplemented PJRT error naming the function.
#include "api/pjrt/pjrt_objects.h"

// A captureless generic lambda converts to each entry's function type.
#define HLOC_PJRT_UNIMPLEMENTED(function) \
  api.function = [](auto*) -> PJRT_Error* { return ::hloc::pjrt::Unimplemented(#function); }

namespace hloc {
namespace pjrt {
namespace {

PJRT_Api MakeApi() {
  PJRT_Api api{};
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.extension_start = nullptr;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.extension_start = nullptr;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
  api.PJRT_Error_Destroy = ErrorDestroy;
  api.PJRT_Error_Message = ErrorMessage;
  api.PJRT_Error_GetCode = ErrorGetCode;
  api.PJRT_Plugin_Initialize = PluginInitialize;
  api.PJRT_Plugin_Attributes = PluginAttributes;
  api.PJRT_Event_Destroy = EventDestroy;
  api.PJRT_Event_IsReady = EventIsReady;
  api.PJRT_Event_Error = EventError;
  api.PJRT_Event_Await = EventAwait;
  api.PJRT_Event_OnReady = EventOnReady;
  api.PJRT_Client_Create = ClientCreate;
  api.PJRT_Client_Destroy = ClientDestroy;
  api.PJRT_Client_PlatformName = ClientPlatformName;
  api.PJRT_Client_ProcessIndex = ClientProcessIndex;
  api.PJRT_Client_PlatformVersion = ClientPlatformVersion;
  api.PJRT_Client_Devices = ClientDevices;
  api.PJRT_Client_AddressableDevices = ClientAddressableDevices;
  api.PJRT_Client_LookupDevice = ClientLookupDevice;
  api.PJRT_Client_LookupAddressableDevice = ClientLookupAddressableDevice;
  api.PJRT_Client_AddressableMemories = ClientAddressableMemories;
  api.PJRT_Client_Compile = ClientCompile;
  api.PJRT_Client_DefaultDeviceAssignment = ClientDefaultDeviceAssignment;
  api.PJRT_Client_BufferFromHostBuffer = ClientBufferFromHostBuffer;
  api.PJRT_DeviceDescription_Id = DeviceDescriptionId;
  api.PJRT_DeviceDescription_ProcessIndex = DeviceDescriptionProcessIndex;
  api.PJRT_DeviceDescription_Attributes = DeviceDescriptionAttributes;
  api.PJRT_DeviceDescription_Kind = DeviceDescriptionKind;
  api.PJRT_DeviceDescription_DebugString = DeviceDescriptionDebugString;
  api.PJRT_DeviceDescription_ToString = DeviceDescriptionToString;
  api.PJRT_Device_GetDescription = DeviceGetDescription;
  api.PJRT_Device_IsAddressable = DeviceIsAddressable;
  api.PJRT_Device_LocalHardwareId = DeviceLocalHardwareId;
  api.PJRT_Device_AddressableMemories = DeviceAddressableMemories;
  api.PJRT_Device_DefaultMemory = DeviceDefaultMemory;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Device_MemoryStats);
  api.PJRT_Memory_Id = MemoryId;
  api.PJRT_Memory_Kind = MemoryKind;
  api.PJRT_Memory_DebugString = MemoryDebugString;
  api.PJRT_Memory_ToString = MemoryToString;
  api.PJRT_Memory_AddressableByDevices = MemoryAddressableByDevices;
  api.PJRT_Executable_Destroy = ExecutableDestroy;
  api.PJRT_Executable_Name = ExecutableName;
  api.PJRT_Executable_NumReplicas = ExecutableNumReplicas;
  api.PJRT_Executable_NumPartitions = ExecutableNumPartitions;
  api.PJRT_Executable_NumOutputs = ExecutableNumOutputs;
  api.PJRT_Executable_SizeOfGeneratedCodeInBytes = ExecutableSizeOfGeneratedCodeInBytes;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Executable_GetCostAnalysis);
  api.PJRT_Executable_OutputMemoryKinds = ExecutableOutputMemoryKinds;
  api.PJRT_Executable_OptimizedProgram = ExecutableOptimizedProgram;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Executable_Serialize);
  api.PJRT_LoadedExecutable_Destroy = LoadedExecutableDestroy;
  api.PJRT_LoadedExecutable_GetExecutable = LoadedExecutableGetExecutable;
  api.PJRT_LoadedExecutable_AddressableDevices = LoadedExecutableAddressableDevices;
  api.PJRT_LoadedExecutable_Delete = LoadedExecutableDelete;
  api.PJRT_LoadedExecutable_IsDeleted = LoadedExecutableIsDeleted;
  api.PJRT_LoadedExecutable_Execute = LoadedExecutableExecute;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Executable_DeserializeAndLoad);
  api.PJRT_LoadedExecutable_Fingerprint = LoadedExecutableFingerprint;
  api.PJRT_Buffer_Destroy = BufferDestroy;
  api.PJRT_Buffer_ElementType = BufferElementType;
  api.PJRT_Buffer_Dimensions = BufferDimensions;
  api.PJRT_Buffer_UnpaddedDimensions = BufferUnpaddedDimensions;
  api.PJRT_Buffer_DynamicDimensionIndices = BufferDynamicDimensionIndices;
  api.PJRT_Buffer_GetMemoryLayout = BufferGetMemoryLayout;
  api.PJRT_Buffer_OnDeviceSizeInBytes = BufferOnDeviceSizeInBytes;
  api.PJRT_Buffer_Device = BufferDevice;
  api.PJRT_Buffer_Memory = BufferMemory;
  api.PJRT_Buffer_Delete = BufferDelete;
  api.PJRT_Buffer_IsDeleted = BufferIsDeleted;
  api.PJRT_Buffer_CopyToDevice = BufferCopyToDevice;
  api.PJRT_Buffer_ToHostBuffer = BufferToHostBuffer;
  api.PJRT_Buffer_IsOnCpu = BufferIsOnCpu;
  api.PJRT_Buffer_ReadyEvent = BufferReadyEvent;
  api.PJRT_Buffer_UnsafePointer = BufferUnsafePointer;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Buffer_IncreaseExternalReferenceCount);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Buffer_DecreaseExternalReferenceCount);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_CopyToDeviceStream_Destroy);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_CopyToDeviceStream_AddChunk);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_CopyToDeviceStream_TotalBytes);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_CopyToDeviceStream_GranuleSize);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_CopyToDeviceStream_CurrentBytes);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_Create);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_Destroy);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_PlatformName);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_PlatformVersion);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_GetDeviceDescriptions);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_Serialize);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_Attributes);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Compile);
  api.PJRT_Executable_OutputElementTypes = ExecutableOutputElementTypes;
  api.PJRT_Executable_OutputDimensions = ExecutableOutputDimensions;
  api.PJRT_Buffer_CopyToMemory = BufferCopyToMemory;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_CreateViewOfDeviceBuffer);
  api.PJRT_Executable_Fingerprint = ExecutableFingerprint;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_TopologyDescription);
  api.PJRT_Executable_GetCompiledMemoryStats = ExecutableGetCompiledMemoryStats;
  api.PJRT_Memory_Kind_Id = MemoryKindId;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_ExecuteContext_Create);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_ExecuteContext_Destroy);
  api.PJRT_Buffer_CopyRawToHost = BufferCopyRawToHost;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_Destroy);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_TransferData);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_CreateBuffersForAsyncHostToDevice);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_Device);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_BufferCount);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_BufferSize);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_SetBufferError);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_AddMetadata);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_DmaMap);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_DmaUnmap);
  api.PJRT_Client_CreateUninitializedBuffer = ClientCreateUninitializedBuffer;
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_UpdateGlobalProcessInfo);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_TopologyDescription_Deserialize);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_CreateAliasBuffer);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_FulfillAliasBuffer);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_LoadedExecutable_GetDeviceAssignment);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Client_CreateErrorBuffer);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Buffer_CopyRawToHostFuture);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Device_PoisonExecution);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Device_CreateAsyncTrackingEvent);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_AsyncTrackingEvent_Destroy);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Executable_GetCompileOptions);
  HLOC_PJRT_UNIMPLEMENTED(PJRT_Buffer_DonateWithControlDependency);
  api.PJRT_Event_Create = EventCreate;
  api.PJRT_Event_Set = EventSet;
  return api;
}

}  // namespace
}  // namespace pjrt
}  // namespace hloc

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = hloc::pjrt::MakeApi();
  return &api;
}
