// The C API (hloc_c.h) over the C++ API (hloc.h). Each entry point catches
// every exception (an allocation failure becomes a resource-exhausted
// error), checks its pointers, and turns absl::Status into hloc_error.
#include "api/hloc_c.h"
#include "api/hloc_c_custom_calls.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/api_internal.h"
#include "api/hloc.h"

struct hloc_error {
  hloc_error_code code;
  std::string message;
};

struct hloc_client {
  std::shared_ptr<hloc::api::Client> client;
};

struct hloc_executable {
  std::shared_ptr<hloc::api::Executable> executable;
  std::string optimized_hlo, ledger, report;  // Filled on first use.
};

struct hloc_buffer {
  hloc::api::Buffer buffer;
};

namespace {

using hloc::api::Buffer;

hloc_error* MakeError(hloc_error_code code, std::string message) {
  // Allocation failures here would leave nothing to report; new(nothrow)
  // returns null, which callers read as success only if the original call
  // succeeded, so an error is never lost silently except under OOM.
  hloc_error* error = new (std::nothrow) hloc_error;
  if (error == nullptr) return nullptr;
  error->code = code;
  try {
    error->message = std::move(message);
  } catch (...) {
  }
  return error;
}

hloc_error* FromStatus(const absl::Status& status) {
  if (status.ok()) return nullptr;
  hloc_error_code code = HLOC_ERROR_INTERNAL;
  if (hloc::api::IsCompileError(status)) {
    code = HLOC_ERROR_COMPILE;
  } else {
    switch (status.code()) {
      case absl::StatusCode::kInvalidArgument:
      case absl::StatusCode::kOutOfRange:
      case absl::StatusCode::kNotFound:
        code = HLOC_ERROR_INVALID_ARGUMENT;
        break;
      case absl::StatusCode::kFailedPrecondition:
      case absl::StatusCode::kUnavailable:
        code = HLOC_ERROR_UNAVAILABLE;
        break;
      case absl::StatusCode::kResourceExhausted:
        code = HLOC_ERROR_RESOURCE_EXHAUSTED;
        break;
      case absl::StatusCode::kUnimplemented:
        code = HLOC_ERROR_UNIMPLEMENTED;
        break;
      default:
        break;
    }
  }
  return MakeError(code, std::string(status.message()));
}

hloc_error* NullArgument(const char* function, const char* name) {
  return MakeError(HLOC_ERROR_INVALID_ARGUMENT, absl::StrCat(function, ": ", name, " is NULL"));
}

// Runs `body` (returning hloc_error*), turning exceptions into errors.
template <typename Body>
hloc_error* Guard(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return MakeError(HLOC_ERROR_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return MakeError(HLOC_ERROR_INTERNAL, absl::StrCat("internal error: ", e.what()));
  } catch (...) {
    return MakeError(HLOC_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

// True when the caller's option struct is long enough to hold `field`.
#define HLOC_HAS(options, Struct, field) \
  ((options) != nullptr &&              \
   (options)->struct_size >= offsetof(Struct, field) + sizeof((options)->field))

hloc_error* Dims(const int64_t* dims, size_t rank, std::vector<int64_t>* out) {
  if (rank > 0 && dims == nullptr) return NullArgument("buffer", "dims");
  if (rank > 64) {
    return MakeError(HLOC_ERROR_INVALID_ARGUMENT, absl::StrCat("rank ", rank, " is over 64"));
  }
  out->assign(dims, dims + rank);
  return nullptr;
}

void FillSpec(const hloc::api::ArraySpec& from, hloc_array_spec* to) {
  hloc_array_spec spec;
  spec.struct_size = sizeof(spec);
  spec.type = static_cast<hloc_element_type>(from.type);
  spec.rank = from.dims.size();
  spec.dims = from.dims.data();
  std::memcpy(to, &spec, std::min(to->struct_size, sizeof(spec)));
}

absl::StatusCode StatusCodeOf(hloc_error_code code) {
  switch (code) {
    case HLOC_OK: return absl::StatusCode::kUnknown;  // An error object must say what failed.
    case HLOC_ERROR_INVALID_ARGUMENT: return absl::StatusCode::kInvalidArgument;
    case HLOC_ERROR_UNAVAILABLE: return absl::StatusCode::kFailedPrecondition;
    case HLOC_ERROR_RESOURCE_EXHAUSTED: return absl::StatusCode::kResourceExhausted;
    case HLOC_ERROR_UNIMPLEMENTED: return absl::StatusCode::kUnimplemented;
    case HLOC_ERROR_COMPILE:
    case HLOC_ERROR_INTERNAL: break;
  }
  return absl::StatusCode::kInternal;
}

void FillArrays(absl::Span<const hloc::api::CustomCallArray> from,
                std::vector<hloc_custom_call_array>* to) {
  to->reserve(from.size());
  for (const hloc::api::CustomCallArray& array : from) {
    hloc_custom_call_array c;
    c.struct_size = sizeof(c);
    c.type = static_cast<hloc_element_type>(array.type);
    c.rank = array.dims.size();
    c.dims = array.dims.data();
    c.data = array.data;
    to->push_back(c);
  }
}


}  // namespace

absl::Status hloc::api::CallCustomCallFunction(hloc_custom_call_function function, void* user_data,
                                    const hloc::api::CustomCallFrame& frame) {
  const std::string target(frame.target), instruction(frame.instruction),
      config(frame.backend_config);
  std::vector<hloc_custom_call_array> operands, results;
  FillArrays(frame.operands, &operands);
  FillArrays(frame.results, &results);
  hloc_custom_call_frame c;
  c.struct_size = sizeof(c);
  c.target = target.c_str();
  c.instruction = instruction.c_str();
  c.backend_config = config.c_str();
  c.backend_config_size = config.size();
  c.operands = operands.data();
  c.num_operands = operands.size();
  c.results = results.data();
  c.num_results = results.size();
  hloc_error* error = function(user_data, &c);
  if (error == nullptr) return absl::OkStatus();
  absl::Status status(StatusCodeOf(error->code), error->message);
  delete error;
  return status;
}

extern "C" {

void hloc_version(int* major, int* minor) {
  if (major != nullptr) *major = HLOC_C_API_MAJOR;
  if (minor != nullptr) *minor = HLOC_C_API_MINOR;
}

const char* hloc_version_string(void) { return hloc::api::Version(); }

hloc_error_code hloc_error_get_code(const hloc_error* error) {
  return error == nullptr ? HLOC_OK : error->code;
}

const char* hloc_error_message(const hloc_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

void hloc_error_destroy(hloc_error* error) { delete error; }

hloc_error* hloc_error_create(hloc_error_code code, const char* message) {
  return Guard([&]() -> hloc_error* {
    return MakeError(code, message == nullptr ? std::string() : std::string(message));
  });
}

hloc_error* hloc_client_register_custom_call(hloc_client* client, const char* target,
                                             hloc_custom_call_function function, void* user_data,
                                             void (*release)(void* user_data)) {
  // From here on the user data is ours: released when the last function
  // copy goes, or at once if registration fails.
  std::shared_ptr<void> user;
  hloc_error* guarded = Guard([&]() -> hloc_error* {
    user = std::shared_ptr<void>(user_data, [release](void* data) {
      if (release != nullptr) release(data);
    });
    return nullptr;
  });
  if (guarded != nullptr) {
    if (release != nullptr) release(user_data);
    return guarded;
  }
  return Guard([&]() -> hloc_error* {
    if (client == nullptr) return NullArgument("hloc_client_register_custom_call", "client");
    if (target == nullptr) return NullArgument("hloc_client_register_custom_call", "target");
    if (function == nullptr) {
      return NullArgument("hloc_client_register_custom_call", "function");
    }
    return FromStatus(client->client->RegisterCustomCall(
        target, [function, user = std::move(user)](const hloc::api::CustomCallFrame& frame) {
          return hloc::api::CallCustomCallFunction(function, user.get(), frame);
        }));
  });
}

hloc_error* hloc_client_create(const hloc_client_options* options, hloc_client** client) {
  return Guard([&]() -> hloc_error* {
    if (client == nullptr) return NullArgument("hloc_client_create", "client");
    *client = nullptr;
    hloc::api::ClientOptions cpp;
    if (HLOC_HAS(options, hloc_client_options, num_threads)) cpp.num_threads = options->num_threads;
    if (HLOC_HAS(options, hloc_client_options, compile_cache_capacity) &&
        options->compile_cache_capacity != 0) {
      cpp.compile_cache_capacity = std::max(options->compile_cache_capacity, 0);
    }
    if (HLOC_HAS(options, hloc_client_options, disk_cache_dir) && options->disk_cache_dir != nullptr) {
      cpp.disk_cache_dir = options->disk_cache_dir;
    }
    if (HLOC_HAS(options, hloc_client_options, device_memory_cache_bytes) &&
        options->device_memory_cache_bytes != 0) {
      cpp.device_memory_cache_bytes =
          std::max<long long>(options->device_memory_cache_bytes, 0);
    }
    if (HLOC_HAS(options, hloc_client_options, collective_timeout_seconds) &&
        options->collective_timeout_seconds != 0) {
      // C's 0 is the default (a zeroed struct); C++'s is "no watchdog".
      const double seconds = options->collective_timeout_seconds;
      cpp.collective_timeout_seconds = seconds < 0 ? 0 : seconds;  // NaN: refused by Create.
    }
    absl::StatusOr<std::shared_ptr<hloc::api::Client>> created = hloc::api::Client::Create(cpp);
    if (!created.ok()) return FromStatus(created.status());
    *client = new hloc_client{*std::move(created)};
    return nullptr;
  });
}

void hloc_client_destroy(hloc_client* client) { delete client; }

static hloc_error* Compile(hloc_client* client, const hloc::api::ModuleSource& source,
                           const hloc_compile_options* options, hloc_executable** executable) {
  hloc::api::CompileOptions cpp;
  if (HLOC_HAS(options, hloc_compile_options, backend)) {
    switch (options->backend) {
      case HLOC_BACKEND_AUTO: cpp.backend = hloc::api::Backend::kAuto; break;
      case HLOC_BACKEND_HOST: cpp.backend = hloc::api::Backend::kHost; break;
      case HLOC_BACKEND_CUDA: cpp.backend = hloc::api::Backend::kCuda; break;
      case HLOC_BACKEND_INTERPRETER: cpp.backend = hloc::api::Backend::kInterpreter; break;
      default:
        return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                         absl::StrCat("unknown backend ", static_cast<int>(options->backend)));
    }
  }
  if (HLOC_HAS(options, hloc_compile_options, pipeline) && options->pipeline != nullptr) {
    cpp.pipeline = options->pipeline;
  }
  if (HLOC_HAS(options, hloc_compile_options, dump_dir) && options->dump_dir != nullptr) {
    cpp.dump_dir = options->dump_dir;
  }
  if (HLOC_HAS(options, hloc_compile_options, allow_interpreter_ops)) {
    cpp.allow_interpreter_ops = options->allow_interpreter_ops != 0;
  }
  if (HLOC_HAS(options, hloc_compile_options, devices)) {
    // C's zero-filled default is one device; -1 is the C++ API's 0.
    cpp.devices = options->devices == 0 ? 1 : options->devices == -1 ? 0 : options->devices;
    if (options->devices < -1) {
      return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                       absl::StrCat("devices must be -1 (as the module says) or >= 0, got ",
                                    options->devices));
    }
  }
  if (HLOC_HAS(options, hloc_compile_options, num_custom_calls) &&
      options->num_custom_calls > 0) {
    if (options->custom_calls == nullptr) {
      return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                       absl::StrCat("custom_calls is NULL but num_custom_calls is ",
                                    options->num_custom_calls));
    }
    for (size_t j = 0; j < options->num_custom_calls; ++j) {
      const hloc_custom_call_binding* binding = &options->custom_calls[j];
      if (!HLOC_HAS(binding, hloc_custom_call_binding, user_data) ||
          binding->target == nullptr || binding->function == nullptr) {
        return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                         absl::StrCat("custom_calls[", j, "] needs struct_size, a target and "
                                      "a function"));
      }
      hloc_custom_call_function function = binding->function;
      void* user = binding->user_data;
      cpp.custom_calls.emplace_back(binding->target,
                                    [function, user](const hloc::api::CustomCallFrame& frame) {
                                      return hloc::api::CallCustomCallFunction(function, user,
                                                                               frame);
                                    });
    }
  }
  absl::StatusOr<std::shared_ptr<hloc::api::Executable>> compiled =
      client->client->Compile(source, cpp);
  if (!compiled.ok()) return FromStatus(compiled.status());
  *executable = new hloc_executable{*std::move(compiled), "", "", ""};
  return nullptr;
}

hloc_error* hloc_compile(hloc_client* client, const void* module, size_t size,
                         const hloc_compile_options* options, hloc_executable** executable) {
  return Guard([&]() -> hloc_error* {
    if (executable == nullptr) return NullArgument("hloc_compile", "executable");
    *executable = nullptr;
    if (client == nullptr) return NullArgument("hloc_compile", "client");
    if (module == nullptr && size > 0) return NullArgument("hloc_compile", "module");
    std::string bytes(static_cast<const char*>(module), size);
    return Compile(client, hloc::api::ModuleSource::Bytes(std::move(bytes)), options, executable);
  });
}

hloc_error* hloc_compile_file(hloc_client* client, const char* path,
                              const hloc_compile_options* options, hloc_executable** executable) {
  return Guard([&]() -> hloc_error* {
    if (executable == nullptr) return NullArgument("hloc_compile_file", "executable");
    *executable = nullptr;
    if (client == nullptr) return NullArgument("hloc_compile_file", "client");
    if (path == nullptr) return NullArgument("hloc_compile_file", "path");
    return Compile(client, hloc::api::ModuleSource::File(path), options, executable);
  });
}

void hloc_executable_destroy(hloc_executable* executable) { delete executable; }

size_t hloc_executable_num_parameters(const hloc_executable* executable) {
  return executable == nullptr ? 0 : executable->executable->parameters().size();
}

size_t hloc_executable_num_results(const hloc_executable* executable) {
  return executable == nullptr ? 0 : executable->executable->results().size();
}

static hloc_error* Spec(const char* function, const hloc_executable* executable, size_t index,
                        hloc_array_spec* spec, bool parameter) {
  if (executable == nullptr) return NullArgument(function, "executable");
  if (spec == nullptr) return NullArgument(function, "spec");
  const auto& list = parameter ? executable->executable->parameters()
                               : executable->executable->results();
  if (index >= list.size()) {
    return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                     absl::StrCat(function, ": index ", index, " is out of range (",
                                  list.size(), ")"));
  }
  FillSpec(list[index], spec);
  return nullptr;
}

hloc_error* hloc_executable_parameter(const hloc_executable* executable, size_t index,
                                      hloc_array_spec* spec) {
  return Guard([&] { return Spec("hloc_executable_parameter", executable, index, spec, true); });
}

hloc_error* hloc_executable_result(const hloc_executable* executable, size_t index,
                                   hloc_array_spec* spec) {
  return Guard([&] { return Spec("hloc_executable_result", executable, index, spec, false); });
}

// Texts are made on first use and kept in the handle. Not synchronized:
// like every getter of one handle, call them from one thread at a time.
const char* hloc_executable_optimized_hlo(const hloc_executable* executable) {
  if (executable == nullptr) return "";
  auto* mutable_handle = const_cast<hloc_executable*>(executable);
  try {
    if (mutable_handle->optimized_hlo.empty()) {
      mutable_handle->optimized_hlo = executable->executable->OptimizedHloText();
    }
  } catch (...) {
    return "";
  }
  return executable->optimized_hlo.c_str();
}

const char* hloc_executable_ledger(const hloc_executable* executable) {
  if (executable == nullptr) return "";
  auto* mutable_handle = const_cast<hloc_executable*>(executable);
  try {
    if (mutable_handle->ledger.empty()) mutable_handle->ledger = executable->executable->Ledger();
  } catch (...) {
    return "";
  }
  return executable->ledger.c_str();
}

const char* hloc_executable_report(const hloc_executable* executable) {
  if (executable == nullptr) return "";
  auto* mutable_handle = const_cast<hloc_executable*>(executable);
  try {
    if (mutable_handle->report.empty()) mutable_handle->report = executable->executable->Report();
  } catch (...) {
    return "";
  }
  return executable->report.c_str();
}

hloc_error* hloc_executable_stats(const hloc_executable* executable, hloc_stats* stats) {
  return Guard([&]() -> hloc_error* {
    if (executable == nullptr) return NullArgument("hloc_executable_stats", "executable");
    if (stats == nullptr) return NullArgument("hloc_executable_stats", "stats");
    const hloc::api::Stats& from = executable->executable->stats();
    hloc_stats out;
    out.struct_size = sizeof(out);
    out.kernels = from.kernels;
    out.fused_kernels = from.fused_kernels;
    out.library_calls = from.library_calls;
    out.interpreter_ops = from.interpreter_ops;
    out.peak_memory_bytes = from.peak_memory_bytes;
    out.compile_seconds = from.compile_seconds;
    out.devices = from.devices;
    std::memcpy(stats, &out, std::min(stats->struct_size, sizeof(out)));
    return nullptr;
  });
}

hloc_error* hloc_buffer_wrap_host(hloc_element_type type, const int64_t* dims, size_t rank,
                                  void* data, void (*release)(void* user), void* user,
                                  hloc_buffer** buffer) {
  return Guard([&]() -> hloc_error* {
    if (buffer == nullptr) return NullArgument("hloc_buffer_wrap_host", "buffer");
    *buffer = nullptr;
    std::vector<int64_t> shape;
    if (hloc_error* error = Dims(dims, rank, &shape)) return error;
    std::function<void()> on_release;
    if (release != nullptr) on_release = [release, user] { release(user); };
    absl::StatusOr<Buffer> wrapped = Buffer::WrapHost(
        static_cast<hloc::PrimitiveType>(type), std::move(shape), data, std::move(on_release));
    if (!wrapped.ok()) return FromStatus(wrapped.status());
    *buffer = new hloc_buffer{*std::move(wrapped)};
    return nullptr;
  });
}

hloc_error* hloc_buffer_copy_from_host(hloc_element_type type, const int64_t* dims, size_t rank,
                                       const void* data, hloc_buffer** buffer) {
  return Guard([&]() -> hloc_error* {
    if (buffer == nullptr) return NullArgument("hloc_buffer_copy_from_host", "buffer");
    *buffer = nullptr;
    std::vector<int64_t> shape;
    if (hloc_error* error = Dims(dims, rank, &shape)) return error;
    absl::StatusOr<Buffer> copied =
        Buffer::CopyFromHost(static_cast<hloc::PrimitiveType>(type), std::move(shape), data);
    if (!copied.ok()) return FromStatus(copied.status());
    *buffer = new hloc_buffer{*std::move(copied)};
    return nullptr;
  });
}

void hloc_buffer_destroy(hloc_buffer* buffer) { delete buffer; }

void* hloc_buffer_data(const hloc_buffer* buffer) {
  return buffer == nullptr ? nullptr : buffer->buffer.data();
}

size_t hloc_buffer_byte_size(const hloc_buffer* buffer) {
  return buffer == nullptr ? 0 : static_cast<size_t>(buffer->buffer.byte_size());
}

hloc_error* hloc_buffer_allocate_device(hloc_client* client, hloc_element_type type,
                                        const int64_t* dims, size_t rank, int device,
                                        hloc_buffer** buffer) {
  return Guard([&]() -> hloc_error* {
    if (buffer == nullptr) return NullArgument("hloc_buffer_allocate_device", "buffer");
    *buffer = nullptr;
    if (client == nullptr) return NullArgument("hloc_buffer_allocate_device", "client");
    std::vector<int64_t> shape;
    if (hloc_error* error = Dims(dims, rank, &shape)) return error;
    absl::StatusOr<Buffer> allocated = Buffer::AllocateDevice(
        *client->client, static_cast<hloc::PrimitiveType>(type), std::move(shape), device);
    if (!allocated.ok()) return FromStatus(allocated.status());
    *buffer = new hloc_buffer{*std::move(allocated)};
    return nullptr;
  });
}

hloc_error* hloc_buffer_copy_to_device(hloc_client* client, const hloc_buffer* source,
                                       int device, hloc_buffer** copy) {
  return Guard([&]() -> hloc_error* {
    if (copy == nullptr) return NullArgument("hloc_buffer_copy_to_device", "copy");
    *copy = nullptr;
    if (client == nullptr) return NullArgument("hloc_buffer_copy_to_device", "client");
    if (source == nullptr) return NullArgument("hloc_buffer_copy_to_device", "source");
    absl::StatusOr<Buffer> copied = source->buffer.ToDevice(*client->client, device);
    if (!copied.ok()) return FromStatus(copied.status());
    *copy = new hloc_buffer{*std::move(copied)};
    return nullptr;
  });
}

hloc_error* hloc_buffer_to_host(const hloc_buffer* source, hloc_buffer** copy) {
  return Guard([&]() -> hloc_error* {
    if (copy == nullptr) return NullArgument("hloc_buffer_to_host", "copy");
    *copy = nullptr;
    if (source == nullptr) return NullArgument("hloc_buffer_to_host", "source");
    absl::StatusOr<Buffer> copied = source->buffer.ToHost();
    if (!copied.ok()) return FromStatus(copied.status());
    *copy = new hloc_buffer{*std::move(copied)};
    return nullptr;
  });
}

hloc_error* hloc_buffer_copy_to_host(const hloc_buffer* buffer, void* destination, size_t size) {
  return Guard([&]() -> hloc_error* {
    if (buffer == nullptr) return NullArgument("hloc_buffer_copy_to_host", "buffer");
    const size_t bytes = static_cast<size_t>(buffer->buffer.byte_size());
    if (size != bytes) {
      return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                       absl::StrCat("hloc_buffer_copy_to_host: size is ", size, ", the buffer ",
                                    buffer->buffer.spec().ToString(), " holds ", bytes,
                                    " bytes"));
    }
    if (destination == nullptr && bytes > 0) {
      return NullArgument("hloc_buffer_copy_to_host", "destination");
    }
    return FromStatus(buffer->buffer.CopyToHost(destination));
  });
}

hloc_error* hloc_buffer_location(const hloc_buffer* buffer, hloc_location* location) {
  return Guard([&]() -> hloc_error* {
    if (buffer == nullptr) return NullArgument("hloc_buffer_location", "buffer");
    if (location == nullptr) return NullArgument("hloc_buffer_location", "location");
    const hloc::api::Location where = buffer->buffer.location();
    hloc_location out;
    out.struct_size = sizeof(out);
    out.kind = where.is_host() ? HLOC_LOCATION_HOST : HLOC_LOCATION_CUDA;
    out.device = where.is_host() ? 0 : where.device;
    std::memcpy(location, &out, std::min(location->struct_size, sizeof(out)));
    return nullptr;
  });
}

uint64_t hloc_buffer_device_pointer(const hloc_buffer* buffer) {
  return buffer == nullptr ? 0 : buffer->buffer.device_pointer();
}

hloc_error* hloc_buffer_spec(const hloc_buffer* buffer, hloc_array_spec* spec) {
  return Guard([&]() -> hloc_error* {
    if (buffer == nullptr) return NullArgument("hloc_buffer_spec", "buffer");
    if (spec == nullptr) return NullArgument("hloc_buffer_spec", "spec");
    FillSpec(buffer->buffer.spec(), spec);
    return nullptr;
  });
}

}  // extern "C"

namespace {

// What hloc_execute and hloc_execute_into share: the argument handles and
// the options, checked and turned into C++ values (`caller` names the call in
// errors).
hloc_error* DecodeExecute(const char* caller, hloc_buffer* const* arguments,
                          size_t num_arguments, const hloc_execute_options* options,
                          std::vector<Buffer>* buffers, hloc::api::ExecuteOptions* cpp) {
  if (arguments == nullptr && num_arguments > 0) return NullArgument(caller, "arguments");
  buffers->reserve(num_arguments);
  for (size_t i = 0; i < num_arguments; ++i) {
    if (arguments[i] == nullptr) {
      return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                       absl::StrCat(caller, ": argument ", i, " is NULL"));
    }
    buffers->push_back(arguments[i]->buffer);
  }
  if (HLOC_HAS(options, hloc_execute_options, donated_arguments) &&
      HLOC_HAS(options, hloc_execute_options, num_donated_arguments) &&
      options->num_donated_arguments > 0) {
    if (options->donated_arguments == nullptr) {
      return NullArgument(caller, "options->donated_arguments");
    }
    for (size_t k = 0; k < options->num_donated_arguments; ++k) {
      if (options->donated_arguments[k] >= num_arguments) {
        return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                         absl::StrCat(caller, ": donated argument ",
                                      options->donated_arguments[k], " is out of range"));
      }
      cpp->donated_arguments.push_back(static_cast<int>(options->donated_arguments[k]));
    }
  }
  if (HLOC_HAS(options, hloc_execute_options, max_while_iterations)) {
    cpp->max_while_iterations = options->max_while_iterations;
  }
  if (HLOC_HAS(options, hloc_execute_options, results)) {
    switch (options->results) {
      case HLOC_RESULTS_AUTO: cpp->results = hloc::api::ResultLocation::kAuto; break;
      case HLOC_RESULTS_HOST: cpp->results = hloc::api::ResultLocation::kHost; break;
      case HLOC_RESULTS_DEVICE: cpp->results = hloc::api::ResultLocation::kDevice; break;
      default:
        return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                         absl::StrCat(caller, ": options->results is ",
                                      static_cast<int>(options->results),
                                      " (have: 0 auto, 1 host, 2 device)"));
    }
  }
  return nullptr;
}

}  // namespace

extern "C" {

hloc_error* hloc_execute(const hloc_executable* executable, hloc_buffer* const* arguments,
                         size_t num_arguments, const hloc_execute_options* options,
                         hloc_buffer** results, size_t num_results) {
  return Guard([&]() -> hloc_error* {
    if (executable == nullptr) return NullArgument("hloc_execute", "executable");
    if (results == nullptr && num_results > 0) return NullArgument("hloc_execute", "results");
    const size_t expected = executable->executable->results().size();
    if (num_results != expected) {
      return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                       absl::StrCat("hloc_execute: the executable has ", expected,
                                    " results, room was given for ", num_results));
    }
    for (size_t j = 0; j < num_results; ++j) results[j] = nullptr;
    std::vector<Buffer> buffers;
    hloc::api::ExecuteOptions cpp;
    if (hloc_error* bad = DecodeExecute("hloc_execute", arguments, num_arguments, options,
                                        &buffers, &cpp)) {
      return bad;
    }
    absl::StatusOr<std::vector<Buffer>> out = executable->executable->Execute(buffers, cpp);
    if (!out.ok()) return FromStatus(out.status());
    for (size_t j = 0; j < num_results; ++j) results[j] = new hloc_buffer{std::move((*out)[j])};
    return nullptr;
  });
}

hloc_error* hloc_execute_into(const hloc_executable* executable, hloc_buffer* const* arguments,
                              size_t num_arguments, const hloc_execute_options* options,
                              hloc_buffer* const* results, size_t num_results) {
  return Guard([&]() -> hloc_error* {
    if (executable == nullptr) return NullArgument("hloc_execute_into", "executable");
    if (results == nullptr && num_results > 0) {
      return NullArgument("hloc_execute_into", "results");
    }
    std::vector<Buffer> buffers;
    hloc::api::ExecuteOptions cpp;
    if (hloc_error* bad = DecodeExecute("hloc_execute_into", arguments, num_arguments, options,
                                        &buffers, &cpp)) {
      return bad;
    }
    std::vector<Buffer> outputs;
    outputs.reserve(num_results);
    for (size_t j = 0; j < num_results; ++j) {
      if (results[j] == nullptr) {
        return MakeError(HLOC_ERROR_INVALID_ARGUMENT,
                         absl::StrCat("hloc_execute_into: result ", j, " is NULL"));
      }
      outputs.push_back(results[j]->buffer);
    }
    return FromStatus(executable->executable->ExecuteInto(buffers, outputs, cpp));
  });
}

}  // extern "C"
