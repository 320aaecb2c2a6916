// See xla_ffi_handler.h.
#include "python/xla_ffi_handler.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

#ifdef HLOC_HAVE_XLA_FFI
#include "xla/ffi/api/ffi.h"
#endif

namespace hloc {
namespace api {
namespace {

// One registered executable, with what each call needs at hand.
struct FfiEntry {
  std::shared_ptr<const Executable> executable;
  // Whether calls take the fixed-cost path (Executable::ExecuteOnPointers).
  bool on_pointers = false;
  // Per result: the argument whose memory XLA may hand it (donation), or -1.
  std::vector<int64_t> aliased;
};

class ExecutableTable {
 public:
  int64_t Add(std::shared_ptr<const Executable> executable) {
    auto entry = std::make_shared<FfiEntry>();
    entry->on_pointers = executable->RunsOnPointers();
    for (size_t j = 0; j < executable->results().size(); ++j) {
      entry->aliased.push_back(executable->AliasedArgument(static_cast<int64_t>(j)));
    }
    entry->executable = std::move(executable);
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t handle = next_++;
    table_[handle] = std::move(entry);
    return handle;
  }
  void Remove(int64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    table_.erase(handle);
  }
  std::shared_ptr<const FfiEntry> Find(int64_t handle) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = table_.find(handle);
    return it == table_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mu_;
  int64_t next_ = 1;
  absl::flat_hash_map<int64_t, std::shared_ptr<const FfiEntry>> table_;
};

ExecutableTable& Table() {
  static ExecutableTable* table = new ExecutableTable();
  return *table;
}

}  // namespace

int64_t RegisterXlaFfiExecutable(std::shared_ptr<const Executable> executable) {
  return Table().Add(std::move(executable));
}

void UnregisterXlaFfiExecutable(int64_t handle) { Table().Remove(handle); }

#ifdef HLOC_HAVE_XLA_FFI
namespace {

namespace ffi = xla::ffi;

// XLA's FFI data types carry PrimitiveType's numbers.
ArrayView View(const ffi::AnyBuffer& buffer) {
  const ffi::AnyBuffer::Dimensions dims = buffer.dimensions();
  return ArrayView{static_cast<PrimitiveType>(buffer.element_type()),
                   absl::Span<const int64_t>(dims.begin(), dims.size()), buffer.untyped_data()};
}

bool SameDims(const ffi::AnyBuffer::Dimensions& dims, const std::vector<int64_t>& expected) {
  if (dims.size() != expected.size()) return false;
  for (size_t d = 0; d < expected.size(); ++d) {
    if (dims[d] != expected[d]) return false;
  }
  return true;
}

ffi::Error Mismatch(const char* what, size_t index, const ffi::AnyBuffer& buffer,
                    const ArraySpec& spec) {
  const ffi::AnyBuffer::Dimensions dims = buffer.dimensions();
  const ArraySpec got{static_cast<PrimitiveType>(buffer.element_type()),
                      std::vector<int64_t>(dims.begin(), dims.end())};
  return ffi::Error::InvalidArgument(absl::StrCat("hloc: ", what, " ", index, " is ",
                                                  got.ToString(), ", the executable's is ",
                                                  spec.ToString()));
}

// The fixed-cost path: XLA hands buffers of the custom call's declared
// shapes, distinct except where the call declared an alias; each is checked
// against the executable's arrays (types and dims) and the run goes
// straight to the program.
ffi::Error RunOnPointers(const FfiEntry& entry, ffi::RemainingArgs args,
                         ffi::RemainingRets rets) {
  const Executable& executable = *entry.executable;
  const std::vector<ArraySpec>& parameters = executable.parameters();
  const std::vector<ArraySpec>& results = executable.results();
  if (args.size() != parameters.size() || rets.size() != results.size()) {
    return ffi::Error::InvalidArgument(absl::StrCat(
        "hloc: the executable takes ", parameters.size(), " arguments and ", results.size(),
        " results, the custom call has ", args.size(), " and ", rets.size()));
  }
  absl::InlinedVector<const void*, 8> arguments(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    ffi::ErrorOr<ffi::AnyBuffer> arg = args.get<ffi::AnyBuffer>(i);
    if (arg.has_error()) return arg.error();
    if (static_cast<PrimitiveType>(arg->element_type()) != parameters[i].type ||
        !SameDims(arg->dimensions(), parameters[i].dims)) {
      return Mismatch("argument", i, *arg, parameters[i]);
    }
    arguments[i] = arg->untyped_data();
  }
  absl::InlinedVector<void*, 8> outputs(rets.size());
  for (size_t j = 0; j < rets.size(); ++j) {
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> ret = rets.get<ffi::AnyBuffer>(j);
    if (ret.has_error()) return ret.error();
    const ffi::AnyBuffer& buffer = **ret;
    if (static_cast<PrimitiveType>(buffer.element_type()) != results[j].type ||
        !SameDims(buffer.dimensions(), results[j].dims)) {
      return Mismatch("result", j, buffer, results[j]);
    }
    outputs[j] = buffer.untyped_data();
    // Only a declared alias shares an argument's memory.
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (outputs[j] != nullptr && arguments[i] == outputs[j] &&
          static_cast<int64_t>(i) != entry.aliased[j]) {
        return ffi::Error::InvalidArgument(absl::StrCat(
            "hloc: result ", j, " was handed argument ", i,
            "'s memory, which the executable does not alias with it"));
      }
    }
  }
  absl::Status ran = executable.ExecuteOnPointers(arguments, outputs);
  if (!ran.ok()) return ffi::Error::Internal(absl::StrCat("hloc: ", ran.ToString()));
  return ffi::Error::Success();
}

// Runs on every call: no allocation for the usual handful of arrays.
ffi::Error RunExecutable(int64_t handle, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  std::shared_ptr<const FfiEntry> entry = Table().Find(handle);
  if (entry == nullptr) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      absl::StrCat("hloc: executable handle ", handle,
                                   " is gone (its hloc.jax.jit function was freed)"));
  }
  if (entry->on_pointers) return RunOnPointers(*entry, args, rets);
  // Executables that pad arguments: ExecuteInto on views of XLA's buffers.
  absl::InlinedVector<ArrayView, 8> arguments;
  arguments.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    ffi::ErrorOr<ffi::AnyBuffer> arg = args.get<ffi::AnyBuffer>(i);
    if (arg.has_error()) return arg.error();
    arguments.push_back(View(*arg));
  }
  absl::InlinedVector<ArrayView, 8> results;
  results.reserve(rets.size());
  ExecuteOptions options;
  for (size_t j = 0; j < rets.size(); ++j) {
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> ret = rets.get<ffi::AnyBuffer>(j);
    if (ret.has_error()) return ret.error();
    results.push_back(View(**ret));
    // XLA hands a result the memory of an argument only where the call
    // declared the two aliased (donation): pass that on as donation.
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (results.back().data != nullptr && arguments[i].data == results.back().data) {
        options.donated_arguments.push_back(static_cast<int>(i));
      }
    }
  }
  absl::Status ran = entry->executable->ExecuteInto(arguments, results, options);
  if (!ran.ok()) return ffi::Error::Internal(absl::StrCat("hloc: ", ran.ToString()));
  return ffi::Error::Success();
}

}  // namespace
}  // namespace api
}  // namespace hloc

XLA_FFI_DEFINE_HANDLER_SYMBOL(HlocXlaFfiRunExecutable, hloc::api::RunExecutable,
                              xla::ffi::Ffi::Bind()
                                  .Attr<int64_t>("executable")
                                  .RemainingArgs()
                                  .RemainingRets());

namespace hloc {
namespace api {

bool XlaFfiHandlerAvailable() { return true; }
void* XlaFfiHandler() { return reinterpret_cast<void*>(&HlocXlaFfiRunExecutable); }

#else

bool XlaFfiHandlerAvailable() { return false; }
void* XlaFfiHandler() { return nullptr; }

#endif  // HLOC_HAVE_XLA_FFI

}  // namespace api
}  // namespace hloc
