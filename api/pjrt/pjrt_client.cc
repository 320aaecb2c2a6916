// The plugin, its client, the client's one device and one memory.
//
// hloc's host backend runs a program on the calling thread over host memory,
// so the client has exactly one device ("HLOC:0" to torch_xla) and one memory
// (kind "device", where every buffer lives). Client_Create options:
//   backend      string  "host" (default) or "interpreter"
//   num_threads  int64   threads per kernel, counting the caller; 0 = all cores
#include <dlfcn.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/pjrt/pjrt_objects.h"

namespace hloc {
namespace pjrt {
namespace {

PJRT_NamedValue StringValue(const std::string& name, const std::string& value) {
  PJRT_NamedValue named{};
  named.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  named.name = name.c_str();
  named.name_size = name.size();
  named.type = PJRT_NamedValue_kString;
  named.string_value = value.c_str();
  named.value_size = value.size();
  return named;
}

absl::string_view NameOf(const PJRT_NamedValue& value) {
  return absl::string_view(value.name, value.name_size);
}

// hloc's host JIT resolves the compiler's runtime helpers (__udivti3 for
// 128-bit division, ...) in the process's global symbol scope. A framework
// that loads libraries RTLD_LOCAL (Python does) leaves libgcc_s out of it, so
// the plugin promotes it once.
void MakeCompilerRuntimeGlobal() {
  static const bool done = [] {
    dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) ||
        dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
    return true;
  }();
  (void)done;
}

}  // namespace

PJRT_Error* PluginInitialize(PJRT_Plugin_Initialize_Args*) {
  MakeCompilerRuntimeGlobal();
  return nullptr;
}

PJRT_Error* PluginAttributes(PJRT_Plugin_Attributes_Args* args) {
  // Process lifetime, as the API asks.
  static const std::string* kName = new std::string("hloc_version");
  static const std::string* kValue = new std::string(hloc::api::Version());
  static const PJRT_NamedValue* kAttributes = new PJRT_NamedValue(StringValue(*kName, *kValue));
  args->attributes = kAttributes;
  args->num_attributes = 1;
  return nullptr;
}

PJRT_Error* ClientCreate(PJRT_Client_Create_Args* args) {
  MakeCompilerRuntimeGlobal();
  hloc::api::ClientOptions options;
  hloc::api::Backend backend = hloc::api::Backend::kHost;
  for (size_t i = 0; i < args->num_options; ++i) {
    const PJRT_NamedValue& option = args->create_options[i];
    absl::string_view name = NameOf(option);
    if (name == "backend" && option.type == PJRT_NamedValue_kString) {
      absl::StatusOr<hloc::api::Backend> parsed = hloc::api::ParseBackend(
          absl::string_view(option.string_value, option.value_size));
      if (!parsed.ok()) return MakeError(parsed.status());
      if (*parsed != hloc::api::Backend::kHost && *parsed != hloc::api::Backend::kInterpreter) {
        return MakeError(absl::InvalidArgumentError(
            "hloc's PJRT plugin keeps buffers in host memory: backend must be host or "
            "interpreter"));
      }
      backend = *parsed;
    } else if (name == "num_threads" && option.type == PJRT_NamedValue_kInt64) {
      options.num_threads = static_cast<int>(option.int64_value);
    }
    // Other options (torch_xla's, JAX's) do not concern hloc.
  }
  absl::StatusOr<std::shared_ptr<hloc::api::Client>> hloc_client =
      hloc::api::Client::Create(options);
  if (!hloc_client.ok()) return MakeError(hloc_client.status());

  auto* client = new PJRT_Client;
  client->hloc = std::move(*hloc_client);
  client->backend = backend;
  client->platform_name = "hloc";
  client->platform_version =
      absl::StrCat("hloc ", hloc::api::Version(), " (", hloc::api::BackendName(backend), ")");

  PJRT_Device& device = client->device;
  device.client = client;
  PJRT_DeviceDescription& description = device.description;
  description.id = 0;
  description.process_index = 0;
  description.kind = absl::StrCat("hloc ", hloc::api::BackendName(backend));
  description.to_string = "HlocDevice(id=0)";
  description.debug_string = "HLOC_0";
  description.attribute_names = {"backend", "hloc_version"};
  description.attribute_values = {hloc::api::BackendName(backend), hloc::api::Version()};
  for (size_t i = 0; i < description.attribute_names.size(); ++i) {
    description.attributes.push_back(
        StringValue(description.attribute_names[i], description.attribute_values[i]));
  }

  PJRT_Memory& memory = client->memory;
  memory.id = 0;
  memory.kind = "device";
  memory.to_string = "HlocMemory(id=0, kind=device)";
  memory.debug_string = "HLOC_0:device";
  memory.devices = {&device};
  device.memories = {&memory};
  client->devices = {&device};
  client->memories = {&memory};
  args->client = client;
  return nullptr;
}

PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* args) {
  delete args->client;
  return nullptr;
}

PJRT_Error* ClientPlatformName(PJRT_Client_PlatformName_Args* args) {
  args->platform_name = args->client->platform_name.c_str();
  args->platform_name_size = args->client->platform_name.size();
  return nullptr;
}

PJRT_Error* ClientProcessIndex(PJRT_Client_ProcessIndex_Args* args) {
  args->process_index = 0;
  return nullptr;
}

PJRT_Error* ClientPlatformVersion(PJRT_Client_PlatformVersion_Args* args) {
  args->platform_version = args->client->platform_version.c_str();
  args->platform_version_size = args->client->platform_version.size();
  return nullptr;
}

PJRT_Error* ClientDevices(PJRT_Client_Devices_Args* args) {
  args->devices = args->client->devices.data();
  args->num_devices = args->client->devices.size();
  return nullptr;
}

PJRT_Error* ClientAddressableDevices(PJRT_Client_AddressableDevices_Args* args) {
  args->addressable_devices = args->client->devices.data();
  args->num_addressable_devices = args->client->devices.size();
  return nullptr;
}

PJRT_Error* ClientLookupDevice(PJRT_Client_LookupDevice_Args* args) {
  if (args->id != 0) {
    return MakeError(absl::InvalidArgumentError(
        absl::StrCat("no device with id ", args->id, " (hloc has device 0)")));
  }
  args->device = &args->client->device;
  return nullptr;
}

PJRT_Error* ClientLookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args* args) {
  if (args->local_hardware_id != 0) {
    return MakeError(absl::InvalidArgumentError(absl::StrCat(
        "no device with local hardware id ", args->local_hardware_id, " (hloc has device 0)")));
  }
  args->addressable_device = &args->client->device;
  return nullptr;
}

PJRT_Error* ClientAddressableMemories(PJRT_Client_AddressableMemories_Args* args) {
  args->addressable_memories = args->client->memories.data();
  args->num_addressable_memories = args->client->memories.size();
  return nullptr;
}

PJRT_Error* ClientDefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args* args) {
  if (args->num_replicas != 1 || args->num_partitions != 1) {
    return MakeError(absl::InvalidArgumentError(
        absl::StrCat("hloc has one device: cannot assign ", args->num_replicas, " replicas x ",
                     args->num_partitions, " partitions")));
  }
  if (args->default_assignment_size < 1) {
    return MakeError(absl::InvalidArgumentError("default_assignment has no room for one device"));
  }
  args->default_assignment[0] = 0;
  return nullptr;
}

PJRT_Error* DeviceDescriptionId(PJRT_DeviceDescription_Id_Args* args) {
  args->id = args->device_description->id;
  return nullptr;
}

PJRT_Error* DeviceDescriptionProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args* args) {
  args->process_index = args->device_description->process_index;
  return nullptr;
}

PJRT_Error* DeviceDescriptionAttributes(PJRT_DeviceDescription_Attributes_Args* args) {
  args->attributes = args->device_description->attributes.data();
  args->num_attributes = args->device_description->attributes.size();
  return nullptr;
}

PJRT_Error* DeviceDescriptionKind(PJRT_DeviceDescription_Kind_Args* args) {
  args->device_kind = args->device_description->kind.c_str();
  args->device_kind_size = args->device_description->kind.size();
  return nullptr;
}

PJRT_Error* DeviceDescriptionDebugString(PJRT_DeviceDescription_DebugString_Args* args) {
  args->debug_string = args->device_description->debug_string.c_str();
  args->debug_string_size = args->device_description->debug_string.size();
  return nullptr;
}

PJRT_Error* DeviceDescriptionToString(PJRT_DeviceDescription_ToString_Args* args) {
  args->to_string = args->device_description->to_string.c_str();
  args->to_string_size = args->device_description->to_string.size();
  return nullptr;
}

PJRT_Error* DeviceGetDescription(PJRT_Device_GetDescription_Args* args) {
  args->device_description = &args->device->description;
  return nullptr;
}

PJRT_Error* DeviceIsAddressable(PJRT_Device_IsAddressable_Args* args) {
  args->is_addressable = true;
  return nullptr;
}

PJRT_Error* DeviceLocalHardwareId(PJRT_Device_LocalHardwareId_Args* args) {
  args->local_hardware_id = args->device->description.id;
  return nullptr;
}

PJRT_Error* DeviceAddressableMemories(PJRT_Device_AddressableMemories_Args* args) {
  args->memories = args->device->memories.data();
  args->num_memories = args->device->memories.size();
  return nullptr;
}

PJRT_Error* DeviceDefaultMemory(PJRT_Device_DefaultMemory_Args* args) {
  args->memory = args->device->memories.front();
  return nullptr;
}

PJRT_Error* MemoryId(PJRT_Memory_Id_Args* args) {
  args->id = args->memory->id;
  return nullptr;
}

PJRT_Error* MemoryKind(PJRT_Memory_Kind_Args* args) {
  args->kind = args->memory->kind.c_str();
  args->kind_size = args->memory->kind.size();
  return nullptr;
}

PJRT_Error* MemoryKindId(PJRT_Memory_Kind_Id_Args* args) {
  args->kind_id = 0;
  return nullptr;
}

PJRT_Error* MemoryDebugString(PJRT_Memory_DebugString_Args* args) {
  args->debug_string = args->memory->debug_string.c_str();
  args->debug_string_size = args->memory->debug_string.size();
  return nullptr;
}

PJRT_Error* MemoryToString(PJRT_Memory_ToString_Args* args) {
  args->to_string = args->memory->to_string.c_str();
  args->to_string_size = args->memory->to_string.size();
  return nullptr;
}

PJRT_Error* MemoryAddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args) {
  args->devices = args->memory->devices.data();
  args->num_devices = args->memory->devices.size();
  return nullptr;
}

}  // namespace pjrt
}  // namespace hloc
