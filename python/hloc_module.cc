// hloc._hloc: the C++ API (api/hloc.h) for Python, through nanobind. The
// public surface is python/src/hloc/__init__.py; this module does the
// crossings: arrays in without a copy (anything nanobind takes as an ndarray:
// numpy, the buffer protocol, __dlpack__ producers on the CPU), results out
// as numpy arrays owning hloc's memory, the GIL released while compiling and
// running, statuses turned into exceptions.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/api_internal.h"
#include "api/hloc.h"
#include "api/profile.h"
#include "nanobind/nanobind.h"
#include "nanobind/ndarray.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/vector.h"
#include "nanobind/stl/pair.h"
#include "nanobind/stl/shared_ptr.h"
#include "python/xla_ffi_handler.h"

namespace nb = nanobind;

namespace hloc {
namespace api {
namespace {

// Mapped to hloc.Error, hloc.CompileError and hloc.BackendUnavailableError.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CompileError : Error {
  using Error::Error;
};
struct UnavailableError : Error {
  using Error::Error;
};

[[noreturn]] void Raise(const absl::Status& status) {
  std::string message(status.message());
  if (IsCompileError(status)) throw CompileError(message);
  if (absl::IsFailedPrecondition(status)) throw UnavailableError(message);
  if (absl::IsInvalidArgument(status) || absl::IsOutOfRange(status)) {
    throw nb::value_error(message.c_str());
  }
  if (absl::IsResourceExhausted(status)) throw std::bad_alloc();
  throw Error(message);
}

template <typename T>
T Unwrap(absl::StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return *std::move(value);
}

// Read-only arrays are taken too (jax arrays are); only donation writes,
// and the Python side donates writable arrays only. CPU arrays are wrapped
// as host buffers, CUDA ones (kDLCUDA) as device buffers.
using AnyArray = nb::ndarray<nb::ro>;

nb::list Specs(const std::vector<ArraySpec>& specs) {
  nb::list out;
  for (const ArraySpec& spec : specs) {
    out.append(nb::make_tuple(std::string(PrimitiveTypeName(spec.type)), spec.dims));
  }
  return out;
}

// The DLPack dtype an array of `type` crosses as. Types numpy has no DLPack
// code for travel as unsigned integers of their width; the Python side
// views them as the ml_dtypes type.
nb::dlpack::dtype DlpackType(PrimitiveType type) {
  const auto bits = static_cast<uint8_t>(8 * ElementByteSize(type));
  auto code = nb::dlpack::dtype_code::UInt;
  switch (type) {
    case xla::PRED: return nb::dtype<bool>();
    case xla::S8: case xla::S16: case xla::S32: case xla::S64:
      code = nb::dlpack::dtype_code::Int;
      break;
    case xla::F16: case xla::F32: case xla::F64:
      code = nb::dlpack::dtype_code::Float;
      break;
    case xla::C64: case xla::C128:
      code = nb::dlpack::dtype_code::Complex;
      break;
    default: break;
  }
  return {static_cast<uint8_t>(code), bits, 1};
}

// A numpy array over a result's memory; the array's base owns the Buffer.
nb::object ToNumpy(Buffer buffer) {
  auto* owner = new Buffer(std::move(buffer));
  nb::capsule keep(owner, [](void* p) noexcept { delete static_cast<Buffer*>(p); });
  std::vector<size_t> shape(owner->dims().begin(), owner->dims().end());
  return nb::cast(nb::ndarray<nb::numpy>(owner->data(), shape.size(), shape.data(), keep,
                                         nullptr, DlpackType(owner->type())));
}

// A device result as a DLPack-exporting array (nanobind's ndarray object:
// __dlpack__ and __dlpack_device__ on kDLCUDA); it owns the Buffer.
nb::object ToDeviceArray(Buffer buffer) {
  auto* owner = new Buffer(std::move(buffer));
  nb::capsule keep(owner, [](void* p) noexcept { delete static_cast<Buffer*>(p); });
  std::vector<size_t> shape(owner->dims().begin(), owner->dims().end());
  void* address = reinterpret_cast<void*>(static_cast<uintptr_t>(owner->device_pointer()));
  // nb::array_api: nanobind's own array object, which implements the DLPack
  // protocol (JAX's from_dlpack takes nothing else); a plain nb::ndarray<>
  // would come out as a bare DLPack capsule.
  return nb::cast(nb::ndarray<nb::array_api>(address, shape.size(), shape.data(), keep,
                                             nullptr, DlpackType(owner->type()),
                                             nb::device::cuda::value, owner->location().device));
}

ResultLocation ParseResultLocation(const std::string& where) {
  if (where == "auto") return ResultLocation::kAuto;
  if (where == "host") return ResultLocation::kHost;
  if (where == "device") return ResultLocation::kDevice;
  throw nb::value_error(
      absl::StrCat("results='", where, "' (have: 'auto', 'host', 'device')").c_str());
}

class PyExecutable {
 public:
  PyExecutable(std::shared_ptr<Client> client, std::shared_ptr<Executable> executable)
      : client_(std::move(client)), executable_(std::move(executable)) {}

  // `arguments[i]` is argument i: anything nanobind takes as a CPU ndarray
  // (numpy, the buffer protocol, __dlpack__), C-contiguous, of the
  // parameter's dtype and shape — except that types numpy has no DLPack
  // code for (bf16, f8, s4/u4) come as unsigned integers of their width
  // (the Python side views them so). Anything else raises TypeError or
  // ValueError naming the argument; the Python side then converts what it
  // can and words the error.
  // `results`: "auto" (on the device when any argument is a CUDA array),
  // "host" or "device"; device results come back as DLPack arrays on the GPU.
  nb::list Run(nb::handle arguments, const std::vector<int>& donated,
               const std::string& results_at) {
    ExecuteOptions options;
    options.results = ParseResultLocation(results_at);
    std::vector<Buffer> buffers = WrapArguments(arguments);
    options.donated_arguments = donated;
    absl::StatusOr<std::vector<Buffer>> results;
    {
      nb::gil_scoped_release no_gil;
      results = executable_->Execute(buffers, options);
    }
    if (!results.ok()) Raise(results.status());
    nb::list out;
    for (Buffer& result : *results) {
      out.append(result.on_device() ? ToDeviceArray(std::move(result))
                                    : ToNumpy(std::move(result)));
    }
    return out;
  }

  // `warmup` untimed runs, then `repeats` runs timed thunk by thunk
  // (api/profile.h): the profile's table and its JSON.
  std::pair<std::string, std::string> Profile(nb::handle arguments, int repeats, int warmup,
                                              int rows) {
    if (repeats < 1) throw nb::value_error("repeats must be at least 1");
    if (warmup < 0) throw nb::value_error("warmup must not be negative");
    std::vector<Buffer> buffers = WrapArguments(arguments);
    api::Profile profile;
    ExecuteOptions options;
    absl::Status status;
    {
      nb::gil_scoped_release no_gil;
      for (int i = 0; i < warmup + repeats && status.ok(); ++i) {
        options.profile = i < warmup ? nullptr : &profile;
        status = executable_->Execute(buffers, options).status();
      }
    }
    if (!status.ok()) Raise(status);
    return {profile.ToString(rows), profile.ToJson()};
  }

 private:
  std::vector<Buffer> WrapArguments(nb::handle arguments) {
    const auto& parameters = executable_->parameters();
    const size_t count = nb::len(arguments);
    if (count != parameters.size()) {
      throw nb::type_error(absl::StrCat("the executable takes ", parameters.size(),
                                        " arguments, got ", count).c_str());
    }
    std::vector<Buffer> buffers;
    buffers.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      nb::object item = arguments[i];
      AnyArray array;
      if (!nb::try_cast<AnyArray>(item, array)) {
        throw nb::type_error(absl::StrCat("argument ", i, ": not an array").c_str());
      }
      const bool on_cuda = array.device_type() == nb::device::cuda::value;
      if (!on_cuda && array.device_type() != nb::device::cpu::value) {
        throw nb::type_error(absl::StrCat("argument ", i,
                                          ": not an array on the CPU or a CUDA device")
                                 .c_str());
      }
      const ArraySpec& spec = parameters[i];
      if (array.dtype() != DlpackType(spec.type)) {
        throw nb::type_error(absl::StrCat("argument ", i, ": dtype does not match the parameter ",
                                          spec.ToString()).c_str());
      }
      std::vector<int64_t> dims(array.ndim());
      int64_t stride = 1;
      bool contiguous = true;
      for (size_t d = array.ndim(); d-- > 0;) {
        dims[d] = static_cast<int64_t>(array.shape(d));
        if (dims[d] != 1 && array.stride(d) != stride) contiguous = false;
        stride *= dims[d];
      }
      // The shape is checked by Execute, which knows a dynamic parameter's
      // dimensions may be below their bound and names the argument.
      if (!contiguous && stride != 0) {  // Strides of an empty array say nothing.
        throw nb::value_error(absl::StrCat("argument ", i, " is not C-contiguous").c_str());
      }
      // The array object stays referenced until hloc lets go of the memory.
      PyObject* handle = nb::cast(array).release().ptr();
      auto release = [handle] {
        nb::gil_scoped_acquire gil;
        Py_DECREF(handle);
      };
      absl::StatusOr<Buffer> wrapped =
          on_cuda ? Buffer::WrapDevice(*client_, spec.type, std::move(dims),
                                       static_cast<uint64_t>(reinterpret_cast<uintptr_t>(
                                           array.data())),
                                       static_cast<int>(array.device_id()), release)
                  : Buffer::WrapHost(spec.type, std::move(dims), const_cast<void*>(array.data()),
                                     release);
      if (!wrapped.ok()) {
        Py_DECREF(handle);  // Never wrapped: nothing else lets go of it.
        if (absl::IsFailedPrecondition(wrapped.status())) Raise(wrapped.status());
        throw nb::value_error(
            absl::StrCat("argument ", i, ": ", wrapped.status().message()).c_str());
      }
      buffers.push_back(*std::move(wrapped));
    }
    return buffers;
  }

 public:
  nb::dict Stats() const {
    const api::Stats& stats = executable_->stats();
    nb::dict out;
    out["backend"] = BackendName(stats.backend);
    out["kernels"] = stats.kernels;
    out["fused_kernels"] = stats.fused_kernels;
    out["library_calls"] = stats.library_calls;
    out["interpreter_ops"] = stats.interpreter_ops;
    out["interpreter_op_names"] = stats.interpreter_op_names;
    out["peak_memory_bytes"] = stats.peak_memory_bytes;
    out["compile_seconds"] = stats.compile_seconds;
    out["devices"] = stats.devices;
    out["kernels_from_disk_cache"] = stats.kernels_from_disk_cache;
    out["kernels_to_disk_cache"] = stats.kernels_to_disk_cache;
    return out;
  }

  const Executable& executable() const { return *executable_; }
  std::shared_ptr<const Executable> shared() const { return executable_; }

 private:
  std::shared_ptr<Client> client_;  // Device arrays are wrapped through it.
  std::shared_ptr<Executable> executable_;
};

// A Python custom-call function kept by C++ code (registries, compiled
// thunks), which may drop it without the GIL (an executable destroyed on
// another thread). Python's collector cannot see these references, so a
// function whose globals hold an executable that holds the function is a
// cycle nothing frees; at exit (ReleasePythonFunctions, from atexit) every
// kept function is let go, and later calls fail instead.
struct PythonFunction {
  PyObject* object = nullptr;  // Null once released; read and written with the GIL.
  ~PythonFunction() {
    if (object == nullptr || !Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    Py_DECREF(object);
  }
};

// Every PythonFunction alive; touched with the GIL only.
std::vector<std::weak_ptr<PythonFunction>>& PythonFunctions() {
  static auto* functions = new std::vector<std::weak_ptr<PythonFunction>>();
  return *functions;
}

std::shared_ptr<PythonFunction> KeepPythonFunction(nb::handle callable) {
  auto kept = std::make_shared<PythonFunction>();
  kept->object = callable.inc_ref().ptr();
  auto& all = PythonFunctions();
  all.erase(std::remove_if(all.begin(), all.end(),
                           [](const std::weak_ptr<PythonFunction>& f) { return f.expired(); }),
            all.end());
  all.push_back(kept);
  return kept;
}

void ReleasePythonFunctions() {
  for (const std::weak_ptr<PythonFunction>& weak : PythonFunctions()) {
    if (std::shared_ptr<PythonFunction> function = weak.lock()) {
      PyObject* object = function->object;
      function->object = nullptr;
      Py_XDECREF(object);
    }
  }
  PythonFunctions().clear();
}

// A read-only numpy view of a custom call's operand, valid during the call.
nb::object OperandView(const CustomCallArray& array) {
  std::vector<size_t> shape(array.dims.begin(), array.dims.end());
  // rv_policy::reference: a view of the memory (ownerless arrays are
  // otherwise copied).
  return nb::cast(nb::ndarray<nb::numpy, nb::ro>(array.data, shape.size(), shape.data(),
                                                 nb::handle(), nullptr, DlpackType(array.type)),
                  nb::rv_policy::reference);
}

// Copies what the Python side returned for result `j` into its buffer,
// after checking it is a C-contiguous CPU array of the result's dtype and
// shape (the Python side converts what it can first).
absl::Status CopyResult(size_t j, nb::handle value, const CustomCallArray& result) {
  AnyArray array;
  if (!nb::try_cast<AnyArray>(value, array) || array.device_type() != nb::device::cpu::value) {
    return absl::UnknownError(absl::StrCat("result ", j, " is not a CPU array"));
  }
  bool same = array.dtype() == DlpackType(result.type) && array.ndim() == result.dims.size();
  int64_t stride = 1;
  for (size_t d = array.ndim(); same && d-- > 0;) {
    same = static_cast<int64_t>(array.shape(d)) == result.dims[d] &&
           (result.dims[d] == 1 || array.stride(d) == stride);
    stride *= result.dims[d];
  }
  if (!same) {
    ArraySpec spec{result.type, {result.dims.begin(), result.dims.end()}};
    return absl::UnknownError(absl::StrCat(
        "result ", j, " does not match ", spec.ToString(), " (or is not C-contiguous)"));
  }
  if (result.byte_size() > 0) std::memcpy(result.data, array.data(), result.byte_size());
  return absl::OkStatus();
}

// Runs a Python custom-call function: `call(operands, operand_types,
// backend_config, result_specs)`
// (python/src/hloc/__init__.py wraps the user's function) returns one
// array per result. Called on whatever thread runs the executable, with
// the GIL released by the run: it takes the GIL here. A Python exception
// becomes the status, never a crash.
absl::Status CallPython(const PythonFunction& call, const CustomCallFrame& frame) {
  if (!Py_IsInitialized()) return absl::UnknownError("the Python interpreter is gone");
  nb::gil_scoped_acquire gil;
  if (call.object == nullptr) {
    return absl::UnknownError("the Python function was released at interpreter exit");
  }
  try {
    nb::list operands, operand_types, specs;
    for (const CustomCallArray& operand : frame.operands) {
      operands.append(OperandView(operand));
      operand_types.append(std::string(PrimitiveTypeName(operand.type)));
    }
    for (const CustomCallArray& result : frame.results) {
      specs.append(nb::make_tuple(std::string(PrimitiveTypeName(result.type)),
                                  std::vector<int64_t>(result.dims.begin(), result.dims.end())));
    }
    nb::object returned = nb::handle(call.object)(
        operands, operand_types, std::string(frame.backend_config), specs);
    nb::sequence values = nb::cast<nb::sequence>(returned);
    if (nb::len(values) != frame.results.size()) {
      return absl::UnknownError(absl::StrCat("the function returned ", nb::len(values),
                                                     " arrays for ", frame.results.size(),
                                                     " results"));
    }
    for (size_t j = 0; j < frame.results.size(); ++j) {
      if (absl::Status ok = CopyResult(j, values[j], frame.results[j]); !ok.ok()) return ok;
    }
    return absl::OkStatus();
  } catch (nb::python_error& e) {
    // python_error has taken the exception out of the interpreter; the run
    // reports it by type and text ("ValueError: ...").
    std::string message;
    try {
      message = absl::StrCat(nb::cast<std::string>(e.type().attr("__name__")), ": ",
                             nb::cast<std::string>(nb::str(e.value())));
    } catch (...) {
      message = e.what();
    }
    return absl::UnknownError(absl::StrCat("the Python function raised ", message));
  } catch (const std::exception& e) {
    return absl::UnknownError(absl::StrCat("Python function failed: ", e.what()));
  }
}

class PyClient {
 public:
  PyClient(int num_threads, int cache_capacity, std::string disk_cache_dir,
           double collective_timeout_seconds) {
    ClientOptions options;
    options.num_threads = num_threads;
    options.collective_timeout_seconds = collective_timeout_seconds;
    options.compile_cache_capacity = cache_capacity;
    options.disk_cache_dir = std::move(disk_cache_dir);
    client_ = Unwrap(Client::Create(options));
  }

  std::shared_ptr<PyExecutable> Compile(nb::bytes module, bool is_path, const std::string& backend,
                                        const std::string& pipeline,
                                        std::vector<std::string> disabled_passes,
                                        const std::string& dump_dir, bool allow_interpreter_ops,
                                        int devices,
                                        std::vector<std::pair<std::string, nb::callable>> calls) {
    CompileOptions options;
    options.devices = devices;
    // The executable's own targets: `call` as RegisterCustomCall takes it.
    for (auto& [target, call] : calls) {
      std::shared_ptr<PythonFunction> kept = KeepPythonFunction(call);
      options.custom_calls.emplace_back(
          target, [kept](const CustomCallFrame& frame) { return CallPython(*kept, frame); });
    }
    options.backend = Unwrap(ParseBackend(backend));
    options.pipeline = pipeline;
    options.disabled_passes = std::move(disabled_passes);
    options.dump_dir = dump_dir;
    options.allow_interpreter_ops = allow_interpreter_ops;
    std::string data(module.c_str(), module.size());
    absl::StatusOr<std::shared_ptr<Executable>> compiled;
    {
      nb::gil_scoped_release no_gil;
      compiled = client_->Compile(
          is_path ? ModuleSource::File(std::move(data)) : ModuleSource::Bytes(std::move(data)),
          options);
    }
    return std::make_shared<PyExecutable>(client_, Unwrap(std::move(compiled)));
  }

  int64_t cache_hits() const { return client_->cache_hits(); }

  // `call(operands, operand_types, backend_config, result_specs) -> [arrays]`
  // (see CallPython).
  void RegisterCustomCall(const std::string& target, nb::callable call) {
    std::shared_ptr<PythonFunction> kept = KeepPythonFunction(call);
    absl::Status status = client_->RegisterCustomCall(
        target, [kept](const CustomCallFrame& frame) { return CallPython(*kept, frame); });
    if (!status.ok()) Raise(status);
  }

 private:
  std::shared_ptr<Client> client_;
};

}  // namespace
}  // namespace api
}  // namespace hloc

NB_MODULE(_hloc, m) {
  using namespace hloc::api;
  m.doc() = "hloc's compiler and runtime (private: use the hloc package)";
  nb::exception<Error> error(m, "Error");
  nb::exception<CompileError>(m, "CompileError", error);
  nb::exception<UnavailableError>(m, "BackendUnavailableError", error);
  m.attr("__version__") = Version();
  m.def("_release_custom_call_functions", &ReleasePythonFunctions);
  m.def("backend_unavailable_reason", [](const std::string& backend) {
    return BackendUnavailableReason(Unwrap(ParseBackend(backend)));
  });

  nb::class_<PyExecutable>(m, "_Executable")
      .def("run", &PyExecutable::Run, nb::arg("arguments"), nb::arg("donated"),
           nb::arg("results") = "auto")
      .def("profile", &PyExecutable::Profile, nb::arg("arguments"), nb::arg("repeats"),
           nb::arg("warmup"), nb::arg("rows"))
      .def_prop_ro("parameters", [](const PyExecutable& e) { return Specs(e.executable().parameters()); })
      .def_prop_ro("results", [](const PyExecutable& e) { return Specs(e.executable().results()); })
      .def_prop_ro("optimized_hlo", [](const PyExecutable& e) { return e.executable().OptimizedHloText(); })
      .def_prop_ro("ledger", [](const PyExecutable& e) { return e.executable().Ledger(); })
      .def_prop_ro("report", [](const PyExecutable& e) { return e.executable().Report(); })
      .def_prop_ro("fingerprint", [](const PyExecutable& e) { return e.executable().fingerprint(); })
      .def_prop_ro("stats", &PyExecutable::Stats)
      .def_prop_ro("mesh_shardings",
                   [](const PyExecutable& e) -> nb::object {
                     const MeshShardings* mesh = e.executable().mesh_shardings();
                     if (mesh == nullptr) return nb::none();
                     return nb::make_tuple(mesh->axis_names, mesh->axis_sizes, mesh->parameters,
                                           mesh->results);
                   })
      .def_prop_ro("aliased_arguments",
                   [](const PyExecutable& e) {
                     std::vector<int64_t> out;
                     for (size_t j = 0; j < e.executable().results().size(); ++j) {
                       out.push_back(e.executable().AliasedArgument(static_cast<int64_t>(j)));
                     }
                     return out;
                   })
      .def("xla_ffi_register",
           [](const PyExecutable& e) { return RegisterXlaFfiExecutable(e.shared()); });

  // hloc.jax.jit's path through JAX's dispatch (python/xla_ffi_handler.h).
  m.def("xla_ffi_handler", []() -> nb::object {
    void* handler = XlaFfiHandler();
    if (handler == nullptr) return nb::none();
    return nb::capsule(handler);
  });
  m.def("xla_ffi_unregister", &UnregisterXlaFfiExecutable, nb::arg("handle"));

  nb::class_<PyClient>(m, "_Client")
      .def(nb::init<int, int, std::string, double>(), nb::arg("num_threads"),
           nb::arg("cache_capacity"), nb::arg("disk_cache_dir"),
           nb::arg("collective_timeout_seconds") = -1.0)
      .def("compile", &PyClient::Compile, nb::arg("module"), nb::arg("is_path"),
           nb::arg("backend"), nb::arg("pipeline"), nb::arg("disabled_passes"),
           nb::arg("dump_dir"), nb::arg("allow_interpreter_ops"),
           nb::arg("devices") = 1,
           nb::arg("custom_calls") = std::vector<std::pair<std::string, nb::callable>>())
      .def("register_custom_call", &PyClient::RegisterCustomCall, nb::arg("target"),
           nb::arg("call"))
      .def_prop_ro("cache_hits", &PyClient::cache_hits);
}
