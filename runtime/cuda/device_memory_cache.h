// DeviceMemoryCache: device memory that callers hold and let go of (the
// results an embedding API hands out, one or more per call), kept for the
// next request instead of going back to the driver.
//
// Why: a fresh cuMemAlloc per result and a cuMemFree when the caller drops
// it cost tens of microseconds a call, most of it cuMemFree, which waits for
// the whole device to go idle before it returns. That wait is also what made
// freeing safe: the caller may have handed the memory to another framework
// (DLPack) whose kernels, queued on its own stream, still read it when the
// last reference goes.
//
// The cache keeps that guarantee without paying it per block. A released
// block is *pending* until the device was seen idle after its release (a
// context-wide synchronize: every stream of the context, the other
// framework's included); only then is it *ready* to hand out again:
//
//   Release(p)        -> pending            (nothing waits)
//   NoteSynchronized  -> pending become ready   (the caller just waited for
//                                                the whole context anyway)
//   Allocate(n)       -> a ready block that fits, else: if a pending one
//                        fits, one synchronize turns all pending ready;
//                        else the driver (on failure: synchronize, give every
//                        cached block back, try once more)
//
// So a steady stream of calls pays at most one context synchronize per call
// (none where the embedder already synchronizes, e.g. for arguments written
// by another framework), instead of an allocation and a device-wide wait
// per result.
//
// A block fits a request of n bytes (rounded up to 256) when its size is in
// [n, 2n): best fit, so a small request never pins a large block. Cached
// bytes (ready + pending) stay under `max_cached_bytes`; a block released
// past that goes back to the driver at once. Zero disables caching (every
// release frees). Thread-safe. The backend's calls run under the cache's
// lock, so they must not call back into it.
#ifndef HLOC_RUNTIME_CUDA_DEVICE_MEMORY_CACHE_H_
#define HLOC_RUNTIME_CUDA_DEVICE_MEMORY_CACHE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

namespace hloc {
namespace cuda {

class CudaDevice;

class DeviceMemoryCache {
 public:
  // What the cache asks of the device (tests pass fakes).
  struct Backend {
    std::function<absl::StatusOr<uint64_t>(int64_t bytes)> allocate;
    std::function<absl::Status(uint64_t pointer)> free;
    // Returns once all work queued on the device, on every stream of the
    // context, has finished.
    std::function<absl::Status()> synchronize;
  };
  struct Stats {
    int64_t driver_allocations = 0;  // Requests the driver served.
    int64_t reuses = 0;              // Requests a cached block served.
    int64_t synchronizes = 0;        // Synchronizes the cache itself ran.
    int64_t driver_frees = 0;
    int64_t cached_bytes = 0;        // Ready + pending now.
    int64_t pending_bytes = 0;
  };

  static constexpr int64_t kDefaultMaxCachedBytes = int64_t{1} << 30;

  DeviceMemoryCache(Backend backend, int64_t max_cached_bytes);
  // Over `device` (its primary context; cuMemAlloc, cuMemFree,
  // cuCtxSynchronize), which the cache keeps alive.
  static std::shared_ptr<DeviceMemoryCache> ForDevice(std::shared_ptr<CudaDevice> device,
                                                      int64_t max_cached_bytes);
  // Waits for the device, then gives every cached block back.
  ~DeviceMemoryCache();
  DeviceMemoryCache(const DeviceMemoryCache&) = delete;
  DeviceMemoryCache& operator=(const DeviceMemoryCache&) = delete;

  // At least `bytes` (> 0) of device memory, 256-byte aligned.
  absl::StatusOr<uint64_t> Allocate(int64_t bytes);
  // Memory from Allocate, no longer used by the caller (others may still
  // have work queued on it: see the header comment). A pointer Allocate did
  // not return, or one already released, is ignored.
  void Release(uint64_t pointer);
  // Before a context-wide wait the caller runs itself: a token for
  // NoteSynchronized.
  uint64_t BeforeSynchronize() const;
  // That wait returned: blocks released before BeforeSynchronize gave
  // `token` are ready (one released while the wait ran may still be read by
  // work queued after the wait began).
  void NoteSynchronized(uint64_t token);
  // Gives every cached block back to the driver (waits for the device
  // first when some are pending).
  absl::Status Trim();
  Stats stats() const;

 private:
  absl::Status SynchronizeLocked();
  void MakeReadyLocked(uint64_t before_sequence);
  absl::Status TrimLocked();

  Backend backend_;
  const int64_t max_cached_bytes_;
  mutable std::mutex mu_;
  absl::flat_hash_map<uint64_t, int64_t> sizes_;  // Every block handed out or cached.
  absl::flat_hash_set<uint64_t> cached_;          // The cached ones (pending or ready).
  std::multimap<int64_t, uint64_t> ready_;        // By size.
  struct Pending {
    uint64_t sequence;  // Releases before this one.
    int64_t size;
    uint64_t pointer;
  };
  std::deque<Pending> pending_;  // In release order.
  uint64_t releases_ = 0;
  Stats stats_;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_DEVICE_MEMORY_CACHE_H_
