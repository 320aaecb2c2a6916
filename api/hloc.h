// hloc's C++ embedding API: what a framework backend calls. A Client compiles
// modules for one target into Executables, which run many times, from many
// threads at once, on Buffers.
//
//   auto client = hloc::api::Client::Create().value();
//   auto exe = client->Compile(hloc::api::ModuleSource::Text(hlo_text)).value();
//   std::vector<hloc::api::Buffer> args = {
//       hloc::api::Buffer::WrapHost(xla::F32, {8}, x).value(),
//       hloc::api::Buffer::WrapHost(xla::F32, {8}, y).value()};
//   std::vector<hloc::api::Buffer> out = exe->Execute(args).value();
//   const float* sum = static_cast<const float*>(out[0].data());
//
// Every module goes through one entry (Client::Compile): load, verify, then
// optimize and compile; a module the verifier rejects never reaches a pass,
// an emitter or the interpreter, and the error is the verifier's located
// message. Arguments are checked (count, element type, dimensions, alignment)
// before anything runs. Nothing a caller passes aborts the process.
//
// Values cross the API as the array leaves of the entry computation's
// parameters and result, depth-first (a module whose parameters are arrays
// and whose root is a tuple of arrays, as JAX and torch_xla emit, has one
// argument per parameter and one result per tuple element). Arrays are dense
// and row-major (C order) whatever layout the module declares, the order
// numpy, DLPack and hloc's runtime use.
#ifndef HLOC_API_HLOC_H_
#define HLOC_API_HLOC_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/custom_call_targets.h"
#include "hlo/module.h"
#include "hlo/primitive_type.h"
#include "hlo/shape.h"

namespace hloc {
namespace api {

// Where a compiled module runs. kAuto is kCuda when a CUDA driver loads and
// a device exists here, else kHost.
enum class Backend { kAuto, kHost, kCuda, kInterpreter };
absl::StatusOr<Backend> ParseBackend(absl::string_view name);  // "auto", "host", ...
const char* BackendName(Backend backend);
// Empty when `backend` can run here; else why not (e.g. no CUDA driver).
std::string BackendUnavailableReason(Backend backend);

// The module to compile: bytes (binary HloModuleProto, HloProto or
// HloSnapshot, or HLO text, told apart by their contents), a file, or an
// in-memory module (copied).
class ModuleSource {
 public:
  static ModuleSource Bytes(std::string bytes);
  static ModuleSource Text(std::string text) { return Bytes(std::move(text)); }
  static ModuleSource File(std::string path);
  static ModuleSource Module(const HloModule& module);

  enum class Kind { kBytes, kFile, kModule };
  Kind kind() const { return kind_; }
  const std::string& bytes_or_path() const { return data_; }
  const HloModule* module() const { return module_.get(); }

 private:
  Kind kind_ = Kind::kBytes;
  std::string data_;
  std::shared_ptr<const HloModule> module_;
};

struct CompileOptions {
  Backend backend = Backend::kAuto;
  // "default": simplification, library outlining, fusion (the target's own
  // pipeline); "no-fusion": the same without the fusion passes; "fallback":
  // fallback fusion (debugging, bisection); "none": compile as given.
  std::string pipeline = "default";
  // Pass names to skip (as `hloc opt --disable-pass` takes them).
  std::vector<std::string> disabled_passes;
  // Write the module after every pass, and the final one, into this folder.
  std::string dump_dir;
  // Ops with no kernel on the target run on the reference interpreter
  // (counted in Stats::interpreter_ops and named in Stats::interpreter_op_names).
  // false: such ops are compile errors.
  bool allow_interpreter_ops = true;
  // Devices to run on (host or interpreter: one thread each, collectives
  // through shared memory; cuda: one GPU each, collectives through NCCL,
  // loaded at run time); 0: as many as the module names. A module
  // holding a JAX shard_map runs on its mesh's devices whatever this says
  // (1 included) and must agree with it otherwise. With devices != 1 (or a
  // shard_map) the executable takes and returns *global* arrays, split and
  // gathered per device:
  //   - shard_map (Shardy, as JAX 0.10 lowers it): by its in/out shardings;
  //   - sharding annotations on global shapes (jax.jit over NamedSharding
  //     arguments; see passes/sharding/spmd_partitioner.h for which
  //     modules): partitioned by hloc's SPMD partitioner, then split and
  //     gathered by its parameters' and results' shardings; the report
  //     lists the collectives it made and any op it ran replicated;
  //   - num_partitions=N (SPMD-partitioned): parameters by their
  //     `sharding=` (replicated when absent); results by the root's
  //     sharding, else stacked;
  //   - replica_count=N (pmap style; a module naming one device gets
  //     replica_count=N): every argument and result stacked.
  // Stacked: one more, leading, dimension of size N; device d's is index d.
  // A count the module does not fit is an InvalidArgument error naming both.
  int devices = 1;
  // Custom-call targets for this executable only, over (and in place of
  // same-named) targets registered with the client: say the Python
  // callbacks of one JAX lowering (jax.debug.print, pure_callback), whose
  // target name every lowering shares. See Client::RegisterCustomCall for
  // what a function sees. A compile with any is never shared through the
  // cache (its functions have no fingerprint).
  std::vector<std::pair<std::string, ::hloc::CustomCallFunction>> custom_calls;
};

// Element type and dimensions of one argument or result.
struct ArraySpec {
  PrimitiveType type = xla::PRIMITIVE_TYPE_INVALID;
  std::vector<int64_t> dims;
  int64_t byte_size() const;
  std::string ToString() const;  // "f32[2,3]"
};

// Bytes per element as hloc stores them (pred and sub-byte integers one byte
// each); 0 for types with no array storage.
int64_t ElementByteSize(PrimitiveType type);

// An array in memory the caller manages, described without building a
// Buffer: for glue that already holds type, dimensions and pointer on every
// call (an XLA FFI handler, a PJRT plugin). `dims` must outlive the call.
struct ArrayView {
  PrimitiveType type = xla::PRIMITIVE_TYPE_INVALID;
  absl::Span<const int64_t> dims;
  void* data = nullptr;
};

class Client;

// Where a Buffer's memory is: host memory, or CUDA device `device`'s.
struct Location {
  enum class Kind { kHost, kCuda };
  Kind kind = Kind::kHost;
  int device = 0;  // The CUDA device ordinal (kCuda only).
  bool is_host() const { return kind == Kind::kHost; }
  std::string ToString() const;  // "host", "cuda:0"
  bool operator==(const Location& other) const {
    return kind == other.kind && (kind == Kind::kHost || device == other.device);
  }
  bool operator!=(const Location& other) const { return !(*this == other); }
};

// A dense row-major array in host memory or on a CUDA device. Copies share
// the memory. Host memory is either hloc's (AllocateHost, results) or the
// caller's (WrapHost: not copied; `release` runs when the last Buffer
// sharing it goes away). Device memory comes from the device's allocator
// (cuMemAlloc in the device's primary context, so other CUDA code in the
// process can use the pointer) and goes back to the client's cache for the
// device when the last Buffer sharing it goes away, for later results
// (ClientOptions::device_memory_cache_bytes); it is read and written only
// through explicit copies (ToHost, CopyToHost, ToDevice) or by running an
// executable on it.
//
// A cuda Executable takes host and device arguments alike; device ones are
// read on the device, never through the host (ExecuteOptions::results says
// where results go). Host and interpreter executables take host buffers
// only: a device buffer there is an InvalidArgument error naming it.
class Buffer {
 public:
  Buffer() = default;
  // Uninitialized device memory for `type[dims]` on CUDA device `device`.
  // FailedPrecondition when there is no such device (no driver, no GPU).
  static absl::StatusOr<Buffer> AllocateDevice(Client& client, PrimitiveType type,
                                               std::vector<int64_t> dims, int device = 0);
  // A device buffer holding a copy of `data` (byte_size() host bytes).
  static absl::StatusOr<Buffer> CopyToDevice(Client& client, PrimitiveType type,
                                             std::vector<int64_t> dims, const void* data,
                                             int device = 0);
  // The caller's device memory (another framework's CUDA array), not
  // copied: `pointer` is a CUdeviceptr on CUDA device `device`, aligned to
  // the element size, valid until `release` runs (when the last Buffer
  // sharing it goes away). hloc's streams do not follow the caller's: an
  // Execute or copy that uses such buffers first waits for all work queued
  // on the device by then (cuCtxSynchronize, once per call); the caller's
  // later writes must not overlap an Execute or copy using the memory.
  static absl::StatusOr<Buffer> WrapDevice(Client& client, PrimitiveType type,
                                           std::vector<int64_t> dims, uint64_t pointer,
                                           int device = 0,
                                           std::function<void()> release = nullptr);
  // A copy of this buffer (host or device) on CUDA device `device`.
  absl::StatusOr<Buffer> ToDevice(Client& client, int device = 0) const;
  // A host copy of this buffer (a host buffer is copied too).
  absl::StatusOr<Buffer> ToHost() const;
  // Copies the contents into byte_size() bytes of host memory; waits for
  // the copy.
  absl::Status CopyToHost(void* destination) const;
  static absl::StatusOr<Buffer> AllocateHost(PrimitiveType type, std::vector<int64_t> dims);
  // `data` must be aligned to the element size and hold byte_size() bytes.
  static absl::StatusOr<Buffer> WrapHost(PrimitiveType type, std::vector<int64_t> dims,
                                         void* data, std::function<void()> release = nullptr);
  static absl::StatusOr<Buffer> CopyFromHost(PrimitiveType type, std::vector<int64_t> dims,
                                             const void* data);

  bool valid() const { return storage_ != nullptr; }
  const ArraySpec& spec() const { return spec_; }
  PrimitiveType type() const { return spec_.type; }
  const std::vector<int64_t>& dims() const { return spec_.dims; }
  int64_t byte_size() const { return spec_.byte_size(); }
  // Host memory; null for a device buffer (see device_pointer()).
  void* data() const { return on_device_ ? nullptr : data_; }
  Location location() const;
  bool on_device() const { return on_device_; }
  // A device buffer's address (a CUdeviceptr, for interop with other CUDA
  // code; valid while a Buffer sharing the memory lives); 0 for host ones.
  uint64_t device_pointer() const {
    return on_device_ ? static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data_)) : 0;
  }
  // True when the memory is hloc's (not wrapped caller memory).
  bool owned_by_hloc() const;

 private:
  struct Storage;
  friend struct BufferAccess;
  Buffer(ArraySpec spec, std::shared_ptr<Storage> storage, void* data, bool on_device = false)
      : spec_(std::move(spec)), storage_(std::move(storage)), data_(data), on_device_(on_device) {}
  ArraySpec spec_;
  std::shared_ptr<Storage> storage_;
  void* data_ = nullptr;  // Host address, or a device buffer's CUdeviceptr.
  bool on_device_ = false;
};

struct Profile;  // api/profile.h

// Where an Executable's results go (ExecuteOptions::results).
enum class ResultLocation {
  // On the device when any argument is a device buffer, else on the host:
  // code that keeps its arrays on the GPU gets results there, and code that
  // passes host arrays reads results as before.
  kAuto,
  kHost,
  kDevice,  // The executable's device; cuda executables only.
};

struct ExecuteOptions {
  // Where Execute puts results (ExecuteInto writes where its result
  // Buffers are). A result computed in a donated argument's memory stays
  // there when that is where results go; otherwise it is a fresh buffer.
  ResultLocation results = ResultLocation::kAuto;
  // Arguments the caller gives up: a result the module aliases with one
  // (input_output_alias) is computed in its memory and returned sharing it.
  // A donated argument's contents are undefined afterwards.
  std::vector<int> donated_arguments;
  // A while loop running more iterations than this fails the run; 0: no limit.
  int64_t max_while_iterations = 0;
  // When set, the run is timed thunk by thunk and added to *profile, which
  // then summarizes every run recorded into it (api/profile.h; reuse one
  // Profile over repeated calls, after a warm-up call without it). Host
  // backend only; others fail with kUnimplemented. Null: no timing.
  Profile* profile = nullptr;
};

struct Stats {
  Backend backend = Backend::kHost;
  int64_t kernels = 0;        // Generated kernels (host JIT or CUDA).
  int64_t fused_kernels = 0;  // Of which compile a fusion.
  int64_t library_calls = 0;  // oneDNN / cuBLASLt / cuDNN / host routines.
  int64_t interpreter_ops = 0;
  std::vector<std::string> interpreter_op_names;
  // Bytes hloc holds while a run is in flight: temporaries' arena plus
  // constants (arguments and results not counted).
  int64_t peak_memory_bytes = 0;
  double compile_seconds = 0;
  // Host kernels read back from the disk cache (ClientOptions::disk_cache_dir)
  // instead of being compiled by LLVM, and kernels written to it.
  int64_t kernels_from_disk_cache = 0;
  int64_t kernels_to_disk_cache = 0;
  // Devices the executable runs on (CompileOptions::devices); the counts
  // above are one device's.
  int64_t devices = 1;
  std::string ToString() const;
};

// An executable compiled from a JAX shard_map, or from jax.jit over
// NamedSharding arguments on one Shardy mesh (CompileOptions::devices):
// its mesh, and for each parameter and result which mesh axes split each
// dimension, major first (JAX's PartitionSpec: {{0}, {}} is P("x", None) on
// a mesh whose axis 0 is "x"). Devices are in mesh order: device d has the
// row-major coordinates of d over the axes.
struct MeshShardings {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<std::vector<std::vector<int64_t>>> parameters;  // [param][dim] -> axes
  std::vector<std::vector<std::vector<int64_t>>> results;     // [result][dim] -> axes
};

class ExecutableImpl;

class Executable {
 public:
  ~Executable();
  // Runs once. `arguments` are the parameters' array leaves (see the top of
  // this file); the result is the root's array leaves. Arguments may be
  // device buffers on the executable's device when it is a cuda one (see
  // Buffer). Bounded dynamic shapes (f32[<=8]; every target): an argument
  // of a dynamic parameter may be smaller than parameters() along a dynamic
  // dimension (host memory), and a dynamic result comes back in host memory
  // at its runtime sizes (results() give the bounds, result_shape() the
  // dynamic dimensions). Thread-safe.
  absl::StatusOr<std::vector<Buffer>> Execute(absl::Span<const Buffer> arguments,
                                              const ExecuteOptions& options = {}) const;
  // Runs once, writing the results into the caller's `results` (one Buffer
  // per result, of its type and shape, e.g. memory a framework allocated).
  // A result may be exactly a donated argument's memory where the module
  // aliases the two (input_output_alias); any other overlap between results
  // and arguments, or between results, is an error. A result of runtime
  // size (or with runtime size checks) is refused: use Execute. Thread-safe.
  absl::Status ExecuteInto(absl::Span<const Buffer> arguments, absl::Span<const Buffer> results,
                           const ExecuteOptions& options = {}) const;
  // The same on views (host memory only), with the same checks and no
  // allocation per array.
  absl::Status ExecuteInto(absl::Span<const ArrayView> arguments,
                           absl::Span<const ArrayView> results,
                           const ExecuteOptions& options = {}) const;

  // The fixed-cost path for a caller that already holds arrays of exactly
  // parameters() and results() in host memory, results distinct from each
  // other and from the arguments except a result in the memory of its
  // AliasedArgument (what XLA guarantees a custom call): the run without
  // ExecuteInto's per-array checks, for a framework that calls a small
  // executable many times. An executable whose arguments are padded or
  // whose results are cut to runtime sizes (RunsOnPointers() false) refuses.
  bool RunsOnPointers() const;
  absl::Status ExecuteOnPointers(absl::Span<const void* const> arguments,
                                 absl::Span<void* const> results) const;

  const std::vector<ArraySpec>& parameters() const;
  const std::vector<ArraySpec>& results() const;
  // The argument whose memory result j is computed in when the caller
  // donates it (the module's input_output_alias, where the compiled program
  // allows it), or -1.
  int64_t AliasedArgument(int64_t result) const;
  // The entry computation's result shape (tuple structure of results()).
  const Shape& result_shape() const;
  // The optimized module as HLO text.
  std::string OptimizedHloText() const;
  // Every outlining, inlining and fusion decision with its rule.
  std::string Ledger() const;
  // The compiled program: thunks, kernels' strategies, library calls.
  std::string Report() const;
  const Stats& stats() const;
  // The mesh and shardings of a shard_map executable (or an SPMD-partitioned
  // one whose shardings are all on its Shardy mesh); null for others.
  const MeshShardings* mesh_shardings() const;
  // Hex fingerprint of module + options + target (the cache key).
  const std::string& fingerprint() const;
  // Where the executable runs: cuda:N for cuda executables, else host.
  Location location() const;

 private:
  friend class Client;
  explicit Executable(std::unique_ptr<ExecutableImpl> impl);
  std::unique_ptr<ExecutableImpl> impl_;
};

struct ClientOptions {
  // Threads that split one kernel's work (counting the caller); 0: all cores.
  int num_threads = 0;
  // Executables kept by the in-memory compile cache (least recently used
  // dropped first); 0: no cache.
  int compile_cache_capacity = 64;
  // Compiled host kernels are stored here and read back by later processes,
  // which then skip LLVM; empty: $HLOC_CACHE_DIR when set, else no disk cache.
  std::string disk_cache_dir;
  // Device memory of results the caller has let go of, kept per device for
  // the next results instead of freed (see runtime/cuda/device_memory_cache.h:
  // reuse waits for work other streams may still do on it); 0: every
  // release frees. Negative: $HLOC_DEVICE_CACHE_BYTES when set, else 1 GiB.
  int64_t device_memory_cache_bytes = -1;
  // cuda: seconds an NCCL collective may wait for its peers before the run
  // fails with DeadlineExceeded naming the op and its communicators are
  // aborted (runtime/cuda/nccl_clique.h); 0: no watchdog (NCCL may wait
  // forever; programs with collectives may then use CUDA graphs). < 0:
  // $HLOC_NCCL_TIMEOUT (seconds) when set, else 300.
  double collective_timeout_seconds = -1;
};

// Custom-call targets the embedder implements (hlo/custom_call_targets.h):
// `custom-call(...)`s whose custom_call_target names a registered function
// call it with their operands' and result's array leaves (type, dimensions,
// data; results to be written in full) and the instruction's backend_config.
// The host backend calls it from a library-call thunk, the interpreter from
// its evaluation, the cuda backend from a host step (operands copied to the
// host after the stream's earlier work, results copied back; no CUDA graph
// for such a program). It may run on
// several threads at once (concurrent Executes). An error it returns fails
// the run with its code and message, prefixed by the instruction and target.
using CustomCallArray = ::hloc::CustomCallArray;
using CustomCallFrame = ::hloc::CustomCallFrame;
using CustomCallFunction = ::hloc::CustomCallFunction;

class ClientState;

class Client {
 public:
  static absl::StatusOr<std::shared_ptr<Client>> Create(const ClientOptions& options = {});
  ~Client();
  // Load, verify, optimize, compile. Thread-safe; identical requests share
  // one Executable through the cache.
  absl::StatusOr<std::shared_ptr<Executable>> Compile(const ModuleSource& source,
                                                      const CompileOptions& options = {});
  // Registers (or replaces) the function for custom-call target `target`,
  // for this client's later compiles; executables compiled earlier keep
  // the function they were compiled with. Thread-safe, also while other
  // threads compile and run. A custom call whose target is neither
  // registered nor built into hloc ("TopK") fails the compile on the host
  // and interpreter backends.
  absl::Status RegisterCustomCall(std::string target, CustomCallFunction function);
  // Compile requests answered from the in-memory cache so far.
  int64_t cache_hits() const;

 private:
  friend struct ClientAccess;
  explicit Client(std::unique_ptr<ClientState> state);
  std::unique_ptr<ClientState> state_;
};

// The version of this API ("major.minor.patch").
const char* Version();

}  // namespace api
}  // namespace hloc

#endif  // HLOC_API_HLOC_H_
