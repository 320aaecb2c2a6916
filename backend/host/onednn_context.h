// The oneDNN side of a host program: one CPU engine per program, the
// primitives its library calls run (created at compile time, shared by every
// call of the same shape; each execution uses a stream of its own), and the
// thread discipline around them.
//
// Threads. Debian builds oneDNN with the OpenMP runtime, whose parallel
// regions split work statically over a fixed team: on a machine shared with
// other processes one descheduled thread stalls the whole primitive. So the
// host splits large operations itself, over hloc's runtime::ThreadPool
// (dynamic chunks, the calling thread working too): a matmul into row
// blocks of M per batch, a convolution into slices of its batch. Each piece
// runs a primitive created single-threaded (OpenMP thread count 1 around
// creation and execution, with a user-managed scratchpad so pieces can run
// at once). A matmul too small to split runs on the calling thread alone. A
// convolution that is not split (batch 1, or small) runs as one primitive on
// OpenMP threads: the calling thread's OpenMP thread count is set to the
// pool's size for the call and restored after it. The two pools never work
// at once: thunks run one after another and the pool's workers sleep on a
// condition variable while a oneDNN call runs (OpenMP's idle threads may
// still spin briefly after a call, per libgomp's wait policy).
#ifndef HLOC_BACKEND_HOST_ONEDNN_CONTEXT_H_
#define HLOC_BACKEND_HOST_ONEDNN_CONTEXT_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/primitive_type.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/thread_pool.h"

namespace hloc {
namespace host {

// One primitive (or a small plan of primitives: pieces of a split problem,
// reorders around a convolution) ready to run on a library call's buffers
// (operand leaves, then the result). Run may be called from several threads
// at once.
class OneDnnOperation {
 public:
  virtual ~OneDnnOperation() = default;
  virtual absl::Status Run(absl::Span<void* const> buffers, const dnnl::engine& engine,
                           runtime::ThreadPool* pool) const = 0;
  // oneDNN's implementation name ("brg:avx512_core", ...) and plan notes.
  virtual std::string Describe() const = 0;
};

using OneDnnBuilder =
    std::function<absl::StatusOr<std::shared_ptr<const OneDnnOperation>>(const dnnl::engine&)>;

class OneDnnContext {
 public:
  static absl::StatusOr<std::shared_ptr<OneDnnContext>> Create();

  // The operation for `key` (a description of everything it depends on),
  // built by `build` on first use; library calls of the same shape share it.
  absl::StatusOr<std::shared_ptr<const OneDnnOperation>> GetOrBuild(const std::string& key,
                                                                    const OneDnnBuilder& build);

  // A library-call function running `operation`.
  static std::function<absl::Status(absl::Span<void* const>, runtime::ThreadPool*)> MakeCall(
      std::shared_ptr<OneDnnContext> context, std::string key,
      std::shared_ptr<const OneDnnOperation> operation);

  // Threads compile time plans for: what runtime::ThreadPool(0) uses.
  static int DefaultThreads();

 private:
  OneDnnContext() = default;
  dnnl::engine engine_;
  std::mutex cache_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const OneDnnOperation>> cache_;
};

// A dnnl::memory of `desc` over `handle` for argument `arg` of the
// primitive call that `owner` (an object living as long as the operation,
// e.g. its piece) stands for. The calling thread keeps it and the next call
// with the same owner, argument, desc and engine only moves its data
// handle: a memory object created and destroyed per call is a dnnl_memory
// and its storage through malloc and free each time, which cost more than
// executing the small matmuls of a scan body (gru_scan_grad: ~20% of a run
// in dnnl_memory_create/destroy and malloc, against ~6% in the primitives).
// The desc is compared on every hit, so an owner address reused by a later
// operation gets a fresh object.
dnnl::memory ThreadMemory(const void* owner, int arg, const dnnl::memory::desc& desc,
                          const dnnl::engine& engine, void* handle);

// Scratch memory for one primitive execution in scratchpad_mode::user: a
// buffer per thread, grown as needed and kept for the thread's next call
// (its memory object through ThreadMemory, owned by `desc`'s address).
dnnl::memory ThreadScratchpad(const dnnl::memory::desc& desc, const dnnl::engine& engine);

// Runs fn(i) for the pieces i in [0, n) of a split operation over `pool`
// (inline without one), each thread with one OpenMP thread; returns the
// first oneDNN error.
absl::Status ForEachPiece(int64_t n, runtime::ThreadPool* pool,
                          const std::function<void(int64_t)>& fn);

// Sets the calling thread's OpenMP thread count for the scope.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
};

// oneDNN's data type for an HLO element type; undef for types it lacks.
dnnl::memory::data_type OneDnnType(PrimitiveType type);

// A oneDNN exception as a status naming `what` was being done.
absl::Status OneDnnError(const dnnl::error& error, absl::string_view what);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_ONEDNN_CONTEXT_H_
