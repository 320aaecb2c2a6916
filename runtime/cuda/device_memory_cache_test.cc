// DeviceMemoryCache's policy over a fake device: which requests reuse a
// block, when the cache waits for the device, what it gives back.
#include "runtime/cuda/device_memory_cache.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace hloc {
namespace cuda {
namespace {

// Addresses from a counter; records frees and synchronizes; can refuse
// allocations past a budget, as a full device does.
struct FakeDevice {
  uint64_t next = 0x10000;
  int64_t budget = int64_t{1} << 40;
  int64_t in_use = 0;
  std::set<uint64_t> live;
  std::vector<uint64_t> freed;
  int synchronizes = 0;
  std::map<uint64_t, int64_t> sizes;

  DeviceMemoryCache::Backend Backend() {
    DeviceMemoryCache::Backend backend;
    backend.allocate = [this](int64_t bytes) -> absl::StatusOr<uint64_t> {
      if (in_use + bytes > budget) return absl::ResourceExhaustedError("fake device is full");
      const uint64_t pointer = next;
      next += static_cast<uint64_t>(bytes) + 4096;
      live.insert(pointer);
      sizes[pointer] = bytes;
      in_use += bytes;
      return pointer;
    };
    backend.free = [this](uint64_t pointer) -> absl::Status {
      if (live.erase(pointer) == 0) return absl::InternalError("double free");
      in_use -= sizes[pointer];
      freed.push_back(pointer);
      return absl::OkStatus();
    };
    backend.synchronize = [this]() -> absl::Status {
      ++synchronizes;
      return absl::OkStatus();
    };
    return backend;
  }
};

TEST(DeviceMemoryCacheTest, AReleasedBlockIsReusedAfterOneSynchronize) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
  absl::StatusOr<uint64_t> a = cache.Allocate(1000);
  ASSERT_TRUE(a.ok()) << a.status();
  cache.Release(*a);
  EXPECT_TRUE(device.freed.empty());
  // Pending: another stream may still read it, so reuse waits for the device.
  absl::StatusOr<uint64_t> b = cache.Allocate(1000);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, *a);
  EXPECT_EQ(device.synchronizes, 1);
  EXPECT_EQ(cache.stats().reuses, 1);
  EXPECT_EQ(cache.stats().driver_allocations, 1);
}

TEST(DeviceMemoryCacheTest, ASynchronizeTheCallerRanMakesReleasedBlocksReadyWithoutAnother) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
  const uint64_t a = *cache.Allocate(512);
  cache.Release(a);
  const uint64_t token = cache.BeforeSynchronize();
  // The caller's own wait (an Execute that had to wait for another
  // framework's arguments) happens here.
  cache.NoteSynchronized(token);
  EXPECT_EQ(*cache.Allocate(512), a);
  EXPECT_EQ(device.synchronizes, 0);
}

TEST(DeviceMemoryCacheTest, ABlockReleasedDuringTheCallersWaitStaysPending) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
  const uint64_t a = *cache.Allocate(512);
  const uint64_t token = cache.BeforeSynchronize();
  cache.Release(a);  // After the wait began: its readers may not be done.
  cache.NoteSynchronized(token);
  EXPECT_EQ(cache.stats().pending_bytes, 512);
  EXPECT_EQ(*cache.Allocate(512), a);
  EXPECT_EQ(device.synchronizes, 1);
}

TEST(DeviceMemoryCacheTest, BestFitNeverHandsOutABlockTwiceTheRequest) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
  const uint64_t big = *cache.Allocate(1 << 20);
  const uint64_t mid = *cache.Allocate(3000);
  cache.Release(big);
  cache.Release(mid);
  cache.NoteSynchronized(cache.BeforeSynchronize());
  const uint64_t small = *cache.Allocate(256);  // Neither fits: fresh memory.
  EXPECT_NE(small, big);
  EXPECT_NE(small, mid);
  EXPECT_EQ(*cache.Allocate(2000), mid);  // 3072 in [2048, 4096).
  EXPECT_EQ(cache.stats().driver_allocations, 3);
}

TEST(DeviceMemoryCacheTest, ReleasesPastTheLimitGoBackToTheDriver) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), /*max_cached_bytes=*/4096);
  const uint64_t a = *cache.Allocate(4096);
  const uint64_t b = *cache.Allocate(4096);
  cache.Release(a);
  cache.Release(b);
  EXPECT_EQ(device.freed, std::vector<uint64_t>{b});
  EXPECT_EQ(cache.stats().cached_bytes, 4096);
}

TEST(DeviceMemoryCacheTest, ALimitOfZeroCachesNothing) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), 0);
  const uint64_t a = *cache.Allocate(100);
  cache.Release(a);
  EXPECT_EQ(device.freed, std::vector<uint64_t>{a});
  EXPECT_NE(*cache.Allocate(100), a);
  EXPECT_EQ(cache.stats().reuses, 0);
}

TEST(DeviceMemoryCacheTest, AFullDeviceGetsTheCachedBlocksBackBeforeTheRequestFails) {
  FakeDevice device;
  device.budget = 8192;
  DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
  const uint64_t a = *cache.Allocate(4096);
  const uint64_t b = *cache.Allocate(4096);
  cache.Release(a);
  cache.Release(b);
  // 8192 bytes fit neither cached block; the device is full until they go.
  absl::StatusOr<uint64_t> c = cache.Allocate(8192);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(device.freed.size(), 2u);
  EXPECT_EQ(device.synchronizes, 1);  // The pending ones were waited for first.
  EXPECT_EQ(cache.stats().cached_bytes, 0);
  // Still too large: the driver's error comes back.
  absl::StatusOr<uint64_t> d = cache.Allocate(1 << 20);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(DeviceMemoryCacheTest, DestructionAndTrimGiveEverythingBack) {
  FakeDevice device;
  {
    DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
    const uint64_t a = *cache.Allocate(100), b = *cache.Allocate(100), c = *cache.Allocate(100);
    cache.Release(a);
    ASSERT_TRUE(cache.Trim().ok());
    EXPECT_EQ(device.live.size(), 2u);
    cache.Release(b);
    cache.Release(c);
    cache.Release(0xdead);  // Not the cache's: ignored.
  }
  EXPECT_TRUE(device.live.empty());
  EXPECT_EQ(device.freed.size(), 3u);
}

TEST(DeviceMemoryCacheTest, ABlockReleasedTwiceIsHandedOutOnce) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
  const uint64_t a = *cache.Allocate(512);
  cache.Release(a);
  cache.Release(a);  // A caller's mistake: ignored.
  cache.NoteSynchronized(cache.BeforeSynchronize());
  const uint64_t first = *cache.Allocate(512), second = *cache.Allocate(512);
  EXPECT_EQ(first, a);
  EXPECT_NE(second, a);
  EXPECT_EQ(cache.stats().cached_bytes, 0);
}

TEST(DeviceMemoryCacheTest, BadRequestsAreErrors) {
  FakeDevice device;
  DeviceMemoryCache cache(device.Backend(), DeviceMemoryCache::kDefaultMaxCachedBytes);
  EXPECT_EQ(cache.Allocate(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.Allocate(-5).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DeviceMemoryCacheTest, ThreadsAllocatingAndReleasingNeverShareABlock) {
  FakeDevice device;
  std::mutex device_mu;  // The fake itself is not thread-safe.
  DeviceMemoryCache::Backend backend = device.Backend();
  DeviceMemoryCache::Backend locked;
  locked.allocate = [&](int64_t n) {
    std::lock_guard<std::mutex> lock(device_mu);
    return backend.allocate(n);
  };
  locked.free = [&](uint64_t p) {
    std::lock_guard<std::mutex> lock(device_mu);
    return backend.free(p);
  };
  locked.synchronize = [&] {
    std::lock_guard<std::mutex> lock(device_mu);
    return backend.synchronize();
  };
  DeviceMemoryCache cache(locked, DeviceMemoryCache::kDefaultMaxCachedBytes);
  std::mutex held_mu;
  std::set<uint64_t> held;
  std::atomic<bool> shared{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        absl::StatusOr<uint64_t> p = cache.Allocate(256 * (1 + (i + t) % 3));
        if (!p.ok()) continue;
        {
          std::lock_guard<std::mutex> lock(held_mu);
          if (!held.insert(*p).second) shared = true;
        }
        {
          std::lock_guard<std::mutex> lock(held_mu);
          held.erase(*p);
        }
        cache.Release(*p);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(shared);
  EXPECT_GT(cache.stats().reuses, 0);
}

}  // namespace
}  // namespace cuda
}  // namespace hloc
