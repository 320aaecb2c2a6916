// hloc's PJRT plugin driven the way a framework drives it, with nothing of
// hloc linked in: dlopen libhloc_pjrt.so, GetPjrtApi, then create a client,
// compile a serialized HloModuleProto (testdata/affine.hlo, converted by the
// hloc CLI at build time), move buffers in, execute, read results back (in
// the layout the caller asks for), and check every error path answers with a
// PJRT error instead of a crash.
//
// Usage (Bazel passes both): pjrt_plugin_test PLUGIN.so AFFINE.pb
#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

std::string g_plugin_path;
std::string g_module_path;

using ::testing::HasSubstr;

// Zero-initialized args with struct_size set.
template <typename Args>
Args Make(size_t size) {
  Args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = size;
  return args;
}
#define ARGS(type) Make<type>(type##_STRUCT_SIZE)

class PjrtPluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    handle_ = dlopen(g_plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    using GetApi = const PJRT_Api* (*)();
    auto get_api = reinterpret_cast<GetApi>(dlsym(handle_, "GetPjrtApi"));
    ASSERT_NE(get_api, nullptr) << dlerror();
    api_ = get_api();
    ASSERT_NE(api_, nullptr);
    auto init = ARGS(PJRT_Plugin_Initialize_Args);
    ASSERT_EQ(api_->PJRT_Plugin_Initialize(&init), nullptr);
  }

  void SetUp() override {
    auto create = ARGS(PJRT_Client_Create_Args);
    ASSERT_EQ(api_->PJRT_Client_Create(&create), nullptr);
    client_ = create.client;
    auto devices = ARGS(PJRT_Client_AddressableDevices_Args);
    devices.client = client_;
    ASSERT_EQ(api_->PJRT_Client_AddressableDevices(&devices), nullptr);
    ASSERT_EQ(devices.num_addressable_devices, 1u);
    device_ = devices.addressable_devices[0];
    auto memory = ARGS(PJRT_Device_DefaultMemory_Args);
    memory.device = device_;
    ASSERT_EQ(api_->PJRT_Device_DefaultMemory(&memory), nullptr);
    memory_ = memory.memory;
  }

  void TearDown() override {
    auto destroy = ARGS(PJRT_Client_Destroy_Args);
    destroy.client = client_;
    EXPECT_EQ(api_->PJRT_Client_Destroy(&destroy), nullptr);
  }

  // The error's code and message; destroys it. Code OK for no error.
  std::pair<PJRT_Error_Code, std::string> Consume(PJRT_Error* error) {
    if (error == nullptr) return {PJRT_Error_Code_OK, ""};
    auto message = ARGS(PJRT_Error_Message_Args);
    message.error = error;
    api_->PJRT_Error_Message(&message);
    std::string text(message.message, message.message_size);
    auto code = ARGS(PJRT_Error_GetCode_Args);
    code.error = error;
    EXPECT_EQ(api_->PJRT_Error_GetCode(&code), nullptr);
    auto destroy = ARGS(PJRT_Error_Destroy_Args);
    destroy.error = error;
    api_->PJRT_Error_Destroy(&destroy);
    return {code.code, text};
  }

  void DestroyEvent(PJRT_Event* event) {
    ASSERT_NE(event, nullptr);
    auto await = ARGS(PJRT_Event_Await_Args);
    await.event = event;
    EXPECT_EQ(api_->PJRT_Event_Await(&await), nullptr);
    auto destroy = ARGS(PJRT_Event_Destroy_Args);
    destroy.event = event;
    EXPECT_EQ(api_->PJRT_Event_Destroy(&destroy), nullptr);
  }

  static std::string ReadModule() {
    std::ifstream in(g_module_path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  PJRT_Error* Compile(std::string code, const char* format, PJRT_LoadedExecutable** out) {
    PJRT_Program program;
    std::memset(&program, 0, sizeof(program));
    program.struct_size = PJRT_Program_STRUCT_SIZE;
    program.code = code.data();
    program.code_size = code.size();
    program.format = format;
    program.format_size = std::strlen(format);
    auto compile = ARGS(PJRT_Client_Compile_Args);
    compile.client = client_;
    compile.program = &program;
    PJRT_Error* error = api_->PJRT_Client_Compile(&compile);
    *out = compile.executable;
    return error;
  }

  PJRT_Buffer* FromHost(const std::vector<float>& data, std::vector<int64_t> dims,
                        std::vector<int64_t> byte_strides = {}) {
    auto args = ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_;
    args.data = data.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.byte_strides = byte_strides.empty() ? nullptr : byte_strides.data();
    args.num_byte_strides = byte_strides.size();
    args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    args.memory = memory_;
    EXPECT_EQ(Consume(api_->PJRT_Client_BufferFromHostBuffer(&args)).second, "");
    DestroyEvent(args.done_with_host_buffer);
    return args.buffer;
  }

  // The buffer's floats, laid out by `minor_to_major` (empty: no host layout).
  std::vector<float> ToHost(PJRT_Buffer* buffer, std::vector<int64_t> minor_to_major = {}) {
    PJRT_Buffer_MemoryLayout layout;
    std::memset(&layout, 0, sizeof(layout));
    layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
    layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
    layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
    layout.tiled.minor_to_major = minor_to_major.data();
    layout.tiled.minor_to_major_size = minor_to_major.size();
    auto args = ARGS(PJRT_Buffer_ToHostBuffer_Args);
    args.src = buffer;
    args.host_layout = minor_to_major.empty() ? nullptr : &layout;
    EXPECT_EQ(api_->PJRT_Buffer_ToHostBuffer(&args), nullptr);  // Size query.
    std::vector<float> out(args.dst_size / sizeof(float));
    args.dst = out.data();
    EXPECT_EQ(Consume(api_->PJRT_Buffer_ToHostBuffer(&args)).second, "");
    DestroyEvent(args.event);
    return out;
  }

  void DestroyBuffer(PJRT_Buffer* buffer) {
    auto args = ARGS(PJRT_Buffer_Destroy_Args);
    args.buffer = buffer;
    EXPECT_EQ(api_->PJRT_Buffer_Destroy(&args), nullptr);
  }

  void DestroyExecutable(PJRT_LoadedExecutable* executable) {
    auto args = ARGS(PJRT_LoadedExecutable_Destroy_Args);
    args.executable = executable;
    EXPECT_EQ(api_->PJRT_LoadedExecutable_Destroy(&args), nullptr);
  }

  // Runs with `arguments`; on success `outputs` holds num_outputs buffers.
  PJRT_Error* Execute(PJRT_LoadedExecutable* executable, std::vector<PJRT_Buffer*> arguments,
                      std::vector<PJRT_Buffer*>& outputs) {
    outputs.assign(8, nullptr);
    PJRT_Buffer* const* argument_list = arguments.data();
    PJRT_Buffer** output_list = outputs.data();
    PJRT_Event* complete = nullptr;
    auto options = ARGS(PJRT_ExecuteOptions);
    auto args = ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = executable;
    args.options = &options;
    args.argument_lists = &argument_list;
    args.num_devices = 1;
    args.num_args = arguments.size();
    args.output_lists = &output_list;
    args.device_complete_events = &complete;
    PJRT_Error* error = api_->PJRT_LoadedExecutable_Execute(&args);
    if (error == nullptr) DestroyEvent(complete);
    return error;
  }

  static void* handle_;
  static const PJRT_Api* api_;
  PJRT_Client* client_ = nullptr;
  PJRT_Device* device_ = nullptr;
  PJRT_Memory* memory_ = nullptr;
};

void* PjrtPluginTest::handle_ = nullptr;
const PJRT_Api* PjrtPluginTest::api_ = nullptr;

TEST_F(PjrtPluginTest, ReportsVersionAndSetsEveryFunction) {
  EXPECT_EQ(api_->pjrt_api_version.major_version, 0);
  EXPECT_GE(api_->pjrt_api_version.minor_version, 29);  // torch_xla 2.9's range.
  EXPECT_LE(api_->pjrt_api_version.minor_version, 90);
  ASSERT_EQ(api_->struct_size, PJRT_Api_STRUCT_SIZE);
  // Every slot after the version is a function pointer, none null.
  const size_t first = offsetof(PJRT_Api, PJRT_Error_Destroy);
  int slots = 0;
  for (size_t offset = first; offset + sizeof(void*) <= api_->struct_size;
       offset += sizeof(void*), ++slots) {
    void* fn;
    std::memcpy(&fn, reinterpret_cast<const char*>(api_) + offset, sizeof(fn));
    EXPECT_NE(fn, nullptr) << "function slot " << slots;
  }
  EXPECT_GE(slots, 115);
}

TEST_F(PjrtPluginTest, DescribesPlatformDeviceAndMemory) {
  auto name = ARGS(PJRT_Client_PlatformName_Args);
  name.client = client_;
  ASSERT_EQ(api_->PJRT_Client_PlatformName(&name), nullptr);
  EXPECT_EQ(std::string(name.platform_name, name.platform_name_size), "hloc");

  auto description = ARGS(PJRT_Device_GetDescription_Args);
  description.device = device_;
  ASSERT_EQ(api_->PJRT_Device_GetDescription(&description), nullptr);
  auto id = ARGS(PJRT_DeviceDescription_Id_Args);
  id.device_description = description.device_description;
  ASSERT_EQ(api_->PJRT_DeviceDescription_Id(&id), nullptr);
  EXPECT_EQ(id.id, 0);
  auto attributes = ARGS(PJRT_DeviceDescription_Attributes_Args);
  attributes.device_description = description.device_description;
  ASSERT_EQ(api_->PJRT_DeviceDescription_Attributes(&attributes), nullptr);
  ASSERT_GE(attributes.num_attributes, 1u);
  EXPECT_EQ(std::string(attributes.attributes[0].name, attributes.attributes[0].name_size),
            "backend");

  auto memories = ARGS(PJRT_Device_AddressableMemories_Args);
  memories.device = device_;
  ASSERT_EQ(api_->PJRT_Device_AddressableMemories(&memories), nullptr);
  ASSERT_EQ(memories.num_memories, 1u);
  EXPECT_EQ(memories.memories[0], memory_);
  auto by_devices = ARGS(PJRT_Memory_AddressableByDevices_Args);
  by_devices.memory = memory_;
  ASSERT_EQ(api_->PJRT_Memory_AddressableByDevices(&by_devices), nullptr);
  ASSERT_EQ(by_devices.num_devices, 1u);
  EXPECT_EQ(by_devices.devices[0], device_);
}

TEST_F(PjrtPluginTest, CompilesExecutesAndReturnsResults) {
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_EQ(Consume(Compile(ReadModule(), "hlo", &executable)).second, "");

  auto devices = ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
  devices.executable = executable;
  ASSERT_EQ(api_->PJRT_LoadedExecutable_AddressableDevices(&devices), nullptr);
  ASSERT_EQ(devices.num_addressable_devices, 1u);
  EXPECT_EQ(devices.addressable_devices[0], device_);

  auto get = ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = executable;
  ASSERT_EQ(api_->PJRT_LoadedExecutable_GetExecutable(&get), nullptr);
  auto outputs_count = ARGS(PJRT_Executable_NumOutputs_Args);
  outputs_count.executable = get.executable;
  ASSERT_EQ(api_->PJRT_Executable_NumOutputs(&outputs_count), nullptr);
  EXPECT_EQ(outputs_count.num_outputs, 2u);

  // The optimized program: two-call protocol, format hlo_with_config.
  PJRT_Program program;
  std::memset(&program, 0, sizeof(program));
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  auto optimized = ARGS(PJRT_Executable_OptimizedProgram_Args);
  optimized.executable = get.executable;
  optimized.program = &program;
  ASSERT_EQ(api_->PJRT_Executable_OptimizedProgram(&optimized), nullptr);
  EXPECT_EQ(std::string(program.format, program.format_size), "hlo_with_config");
  ASSERT_GT(program.code_size, 0u);
  std::string code(program.code_size, '\0');
  program.code = &code[0];
  ASSERT_EQ(api_->PJRT_Executable_OptimizedProgram(&optimized), nullptr);
  // The config (field 2) follows the module (field 1) and is not empty.
  EXPECT_EQ(code[0], '\x0a');
  EXPECT_NE(code.find("main"), std::string::npos);
  auto destroy_executable = ARGS(PJRT_Executable_Destroy_Args);
  destroy_executable.executable = get.executable;
  ASSERT_EQ(api_->PJRT_Executable_Destroy(&destroy_executable), nullptr);

  // x = [[1,2,3],[4,5,6]] given column-major through byte strides.
  PJRT_Buffer* x = FromHost({1, 4, 2, 5, 3, 6}, {2, 3}, /*byte_strides=*/{4, 8});
  PJRT_Buffer* bias = FromHost({10, 20, 30}, {3});
  EXPECT_EQ(ToHost(x), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  auto dims = ARGS(PJRT_Buffer_Dimensions_Args);
  dims.buffer = x;
  ASSERT_EQ(api_->PJRT_Buffer_Dimensions(&dims), nullptr);
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims),
            (std::vector<int64_t>{2, 3}));

  std::vector<PJRT_Buffer*> outputs;
  ASSERT_EQ(Consume(Execute(executable, {x, bias}, outputs)).second, "");
  ASSERT_NE(outputs[0], nullptr);
  ASSERT_NE(outputs[1], nullptr);
  // y = 2x + bias, reported row-major and read back row-major or column-major.
  EXPECT_EQ(ToHost(outputs[0]), (std::vector<float>{12, 24, 36, 18, 30, 42}));
  EXPECT_EQ(ToHost(outputs[0], {1, 0}), (std::vector<float>{12, 24, 36, 18, 30, 42}));
  EXPECT_EQ(ToHost(outputs[0], {0, 1}), (std::vector<float>{12, 18, 24, 30, 36, 42}));
  EXPECT_EQ(ToHost(outputs[1]), (std::vector<float>{21}));

  auto layout = ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  layout.buffer = outputs[0];
  ASSERT_EQ(api_->PJRT_Buffer_GetMemoryLayout(&layout), nullptr);
  ASSERT_EQ(layout.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  EXPECT_EQ(std::vector<int64_t>(layout.layout.tiled.minor_to_major,
                                 layout.layout.tiled.minor_to_major +
                                     layout.layout.tiled.minor_to_major_size),
            (std::vector<int64_t>{1, 0}));

  // Arguments stay usable: run again on an output.
  std::vector<PJRT_Buffer*> again;
  ASSERT_EQ(Consume(Execute(executable, {outputs[0], bias}, again)).second, "");
  EXPECT_EQ(ToHost(again[0]), (std::vector<float>{34, 68, 102, 46, 80, 114}));

  for (PJRT_Buffer* buffer : {x, bias, outputs[0], outputs[1], again[0], again[1]}) {
    DestroyBuffer(buffer);
  }
  DestroyExecutable(executable);
}

TEST_F(PjrtPluginTest, BadModulesAreCompileErrors) {
  PJRT_LoadedExecutable* executable = nullptr;
  auto [code, message] = Consume(Compile("this is no module", "hlo", &executable));
  EXPECT_NE(code, PJRT_Error_Code_OK);
  EXPECT_FALSE(message.empty());

  std::tie(code, message) = Consume(Compile(ReadModule(), "mlir", &executable));
  EXPECT_EQ(code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_THAT(message, HasSubstr("mlir"));

  // A module the verifier rejects: its bytes cut short.
  std::string truncated = ReadModule();
  truncated.resize(truncated.size() / 2);
  std::tie(code, message) = Consume(Compile(truncated, "hlo", &executable));
  EXPECT_NE(code, PJRT_Error_Code_OK);
}

TEST_F(PjrtPluginTest, WrongArgumentsAreErrors) {
  PJRT_LoadedExecutable* executable = nullptr;
  ASSERT_EQ(Consume(Compile(ReadModule(), "hlo", &executable)).second, "");
  PJRT_Buffer* x = FromHost({1, 2, 3, 4, 5, 6}, {2, 3});
  PJRT_Buffer* wrong = FromHost({1, 2}, {2});
  std::vector<PJRT_Buffer*> outputs;

  auto [code, message] = Consume(Execute(executable, {x}, outputs));
  EXPECT_EQ(code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("2 arguments"));

  std::tie(code, message) = Consume(Execute(executable, {x, wrong}, outputs));
  EXPECT_EQ(code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("f32[2]"));

  // A deleted buffer is refused, and says so.
  auto remove = ARGS(PJRT_Buffer_Delete_Args);
  remove.buffer = wrong;
  ASSERT_EQ(api_->PJRT_Buffer_Delete(&remove), nullptr);
  auto deleted = ARGS(PJRT_Buffer_IsDeleted_Args);
  deleted.buffer = wrong;
  ASSERT_EQ(api_->PJRT_Buffer_IsDeleted(&deleted), nullptr);
  EXPECT_TRUE(deleted.is_deleted);
  std::tie(code, message) = Consume(Execute(executable, {x, wrong}, outputs));
  EXPECT_EQ(code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_THAT(message, HasSubstr("deleted"));

  // A host layout that is no permutation.
  std::vector<int64_t> bad_layout = {0, 0};
  PJRT_Buffer_MemoryLayout layout;
  std::memset(&layout, 0, sizeof(layout));
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.minor_to_major = bad_layout.data();
  layout.tiled.minor_to_major_size = bad_layout.size();
  std::vector<float> out(6);
  auto to_host = ARGS(PJRT_Buffer_ToHostBuffer_Args);
  to_host.src = x;
  to_host.host_layout = &layout;
  to_host.dst = out.data();
  to_host.dst_size = out.size() * sizeof(float);
  std::tie(code, message) = Consume(api_->PJRT_Buffer_ToHostBuffer(&to_host));
  EXPECT_EQ(code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("permutation"));

  DestroyBuffer(x);
  DestroyBuffer(wrong);
  DestroyExecutable(executable);
}

TEST_F(PjrtPluginTest, UnsupportedCallsAreUnimplementedErrors) {
  auto topology = ARGS(PJRT_Client_TopologyDescription_Args);
  topology.client = client_;
  auto [code, message] = Consume(api_->PJRT_Client_TopologyDescription(&topology));
  EXPECT_EQ(code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_THAT(message, HasSubstr("PJRT_Client_TopologyDescription"));

  auto dma = ARGS(PJRT_Client_DmaMap_Args);
  dma.client = client_;
  std::tie(code, message) = Consume(api_->PJRT_Client_DmaMap(&dma));
  EXPECT_EQ(code, PJRT_Error_Code_UNIMPLEMENTED);
}

TEST_F(PjrtPluginTest, EventsCreatedBySetBecomeReady) {
  auto create = ARGS(PJRT_Event_Create_Args);
  ASSERT_EQ(api_->PJRT_Event_Create(&create), nullptr);
  auto ready = ARGS(PJRT_Event_IsReady_Args);
  ready.event = create.event;
  ASSERT_EQ(api_->PJRT_Event_IsReady(&ready), nullptr);
  EXPECT_FALSE(ready.is_ready);
  int calls = 0;
  auto on_ready = ARGS(PJRT_Event_OnReady_Args);
  on_ready.event = create.event;
  on_ready.callback = [](PJRT_Error* error, void* user_arg) {
    ++*static_cast<int*>(user_arg);
    ASSERT_NE(error, nullptr);  // Set with an error below; the callback owns it.
    auto destroy = ARGS(PJRT_Error_Destroy_Args);
    destroy.error = error;
    api_->PJRT_Error_Destroy(&destroy);
  };
  on_ready.user_arg = &calls;
  ASSERT_EQ(api_->PJRT_Event_OnReady(&on_ready), nullptr);
  EXPECT_EQ(calls, 0);
  auto set = ARGS(PJRT_Event_Set_Args);
  set.event = create.event;
  set.error_code = PJRT_Error_Code_ABORTED;
  set.error_message = "stopped";
  set.error_message_size = 7;
  ASSERT_EQ(api_->PJRT_Event_Set(&set), nullptr);
  EXPECT_EQ(calls, 1);
  auto error = ARGS(PJRT_Event_Error_Args);
  error.event = create.event;
  auto [code, message] = Consume(api_->PJRT_Event_Error(&error));
  EXPECT_EQ(code, PJRT_Error_Code_ABORTED);
  EXPECT_EQ(message, "stopped");
  auto destroy = ARGS(PJRT_Event_Destroy_Args);
  destroy.event = create.event;
  EXPECT_EQ(api_->PJRT_Event_Destroy(&destroy), nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 3) {
    fprintf(stderr, "usage: %s PLUGIN.so MODULE.pb\n", argv[0]);
    return 2;
  }
  g_plugin_path = argv[1];
  g_module_path = argv[2];
  return RUN_ALL_TESTS();
}
