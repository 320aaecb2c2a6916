// DeviceMemoryCache (see device_memory_cache.h).
#include "runtime/cuda/device_memory_cache.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_device.h"

namespace hloc {
namespace cuda {
namespace {

constexpr int64_t kGranule = 256;

int64_t RoundUp(int64_t bytes) { return (bytes + kGranule - 1) / kGranule * kGranule; }

// The smallest block in `blocks` of at least `bytes` and under twice that;
// end() when none.
std::multimap<int64_t, uint64_t>::iterator BestFit(std::multimap<int64_t, uint64_t>& blocks,
                                                   int64_t bytes) {
  auto it = blocks.lower_bound(bytes);
  if (it == blocks.end() || it->first >= 2 * bytes) return blocks.end();
  return it;
}

}  // namespace

DeviceMemoryCache::DeviceMemoryCache(Backend backend, int64_t max_cached_bytes)
    : backend_(std::move(backend)), max_cached_bytes_(std::max<int64_t>(max_cached_bytes, 0)) {}

std::shared_ptr<DeviceMemoryCache> DeviceMemoryCache::ForDevice(std::shared_ptr<CudaDevice> device,
                                                                int64_t max_cached_bytes) {
  Backend backend;
  backend.allocate = [device](int64_t bytes) -> absl::StatusOr<uint64_t> {
    if (absl::Status current = device->MakeCurrent(); !current.ok()) return current;
    absl::StatusOr<CUdeviceptr> pointer = device->Allocate(bytes);
    if (!pointer.ok()) return pointer.status();
    return static_cast<uint64_t>(*pointer);
  };
  backend.free = [device](uint64_t pointer) -> absl::Status {
    if (absl::Status current = device->MakeCurrent(); !current.ok()) return current;
    return device->Free(static_cast<CUdeviceptr>(pointer));
  };
  backend.synchronize = [device]() -> absl::Status {
    if (absl::Status current = device->MakeCurrent(); !current.ok()) return current;
    return device->SynchronizeContext();
  };
  return std::make_shared<DeviceMemoryCache>(std::move(backend), max_cached_bytes);
}

DeviceMemoryCache::~DeviceMemoryCache() {
  std::lock_guard<std::mutex> lock(mu_);
  // Nothing to report to from a destructor; memory still handed out stays
  // the holders' (they keep the cache alive, so there is none here).
  (void)TrimLocked();
}

void DeviceMemoryCache::MakeReadyLocked(uint64_t before_sequence) {
  while (!pending_.empty() && pending_.front().sequence < before_sequence) {
    const Pending& block = pending_.front();
    ready_.emplace(block.size, block.pointer);
    stats_.pending_bytes -= block.size;
    pending_.pop_front();
  }
}

// Under the lock no release can slip in while the device is waited for.
absl::Status DeviceMemoryCache::SynchronizeLocked() {
  if (absl::Status done = backend_.synchronize(); !done.ok()) return done;
  ++stats_.synchronizes;
  MakeReadyLocked(releases_);
  return absl::OkStatus();
}

absl::Status DeviceMemoryCache::TrimLocked() {
  if (!pending_.empty()) {
    if (absl::Status done = SynchronizeLocked(); !done.ok()) return done;
  }
  absl::Status first;
  for (const auto& [bytes, pointer] : ready_) {
    absl::Status freed = backend_.free(pointer);
    if (!freed.ok() && first.ok()) first = freed;
    ++stats_.driver_frees;
    stats_.cached_bytes -= bytes;
    sizes_.erase(pointer);
    cached_.erase(pointer);
  }
  ready_.clear();
  return first;
}

absl::StatusOr<uint64_t> DeviceMemoryCache::Allocate(int64_t bytes) {
  if (bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("device allocation of ", bytes, " bytes"));
  }
  const int64_t size = RoundUp(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto take = [&](std::multimap<int64_t, uint64_t>::iterator it) {
    const uint64_t pointer = it->second;
    stats_.cached_bytes -= it->first;
    ready_.erase(it);
    cached_.erase(pointer);
    ++stats_.reuses;
    return pointer;
  };
  if (auto it = BestFit(ready_, size); it != ready_.end()) return take(it);
  const bool pending_fits = std::any_of(pending_.begin(), pending_.end(), [&](const Pending& p) {
    return p.size >= size && p.size < 2 * size;
  });
  if (pending_fits) {
    if (absl::Status done = SynchronizeLocked(); !done.ok()) return done;
    return take(BestFit(ready_, size));
  }
  absl::StatusOr<uint64_t> fresh = backend_.allocate(size);
  if (!fresh.ok() && (!ready_.empty() || !pending_.empty())) {
    // Out of memory, perhaps because of what is cached here: give it back
    // and try once more.
    if (absl::Status trimmed = TrimLocked(); !trimmed.ok()) return trimmed;
    fresh = backend_.allocate(size);
  }
  if (!fresh.ok()) return fresh.status();
  ++stats_.driver_allocations;
  sizes_[*fresh] = size;
  return *fresh;
}

void DeviceMemoryCache::Release(uint64_t pointer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sizes_.find(pointer);
  if (it == sizes_.end() || cached_.contains(pointer)) return;
  const int64_t size = it->second;
  if (stats_.cached_bytes + size > max_cached_bytes_) {
    // cuMemFree waits for the device itself, so the block is safe to free.
    sizes_.erase(it);
    (void)backend_.free(pointer);
    ++stats_.driver_frees;
    return;
  }
  pending_.push_back(Pending{releases_++, size, pointer});
  cached_.insert(pointer);
  stats_.cached_bytes += size;
  stats_.pending_bytes += size;
}

uint64_t DeviceMemoryCache::BeforeSynchronize() const {
  std::lock_guard<std::mutex> lock(mu_);
  return releases_;
}

void DeviceMemoryCache::NoteSynchronized(uint64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  MakeReadyLocked(token);
}

absl::Status DeviceMemoryCache::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  return TrimLocked();
}

DeviceMemoryCache::Stats DeviceMemoryCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace cuda
}  // namespace hloc
