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

class ExecutableTable {
 public:
  int64_t Add(std::shared_ptr<const Executable> executable) {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t handle = next_++;
    table_[handle] = std::move(executable);
    return handle;
  }
  void Remove(int64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    table_.erase(handle);
  }
  std::shared_ptr<const Executable> Find(int64_t handle) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = table_.find(handle);
    return it == table_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mu_;
  int64_t next_ = 1;
  absl::flat_hash_map<int64_t, std::shared_ptr<const Executable>> table_;
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

// Runs on every call: views of XLA's buffers, no allocation for the usual
// handful of arrays.
ffi::Error RunExecutable(int64_t handle, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  std::shared_ptr<const Executable> executable = Table().Find(handle);
  if (executable == nullptr) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      absl::StrCat("hloc: executable handle ", handle,
                                   " is gone (its hloc.jax.jit function was freed)"));
  }
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
  absl::Status ran = executable->ExecuteInto(arguments, results, options);
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
