// All-reduce bandwidth of the shared-memory communicator
// (runtime/shared_memory_communicator.h) against a memcpy of the same bytes.
//
// For each device count and message size, N threads run the all-reduce
// (f32 sum, out of place) `iterations` times; the time per op is the
// slowest thread's. Bandwidth is message bytes / time (the "algorithm
// bandwidth": what one device's data costs). memcpy is one thread copying
// the same bytes between two buffers, the floor a single device pays to
// move its message at all.
//
//   allreduce_bandwidth [--devices=2,4] [--max_bytes=67108864]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "runtime/shared_memory_communicator.h"

namespace hloc {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

int64_t IterationsFor(int64_t bytes) {
  return std::max<int64_t>(5, std::min<int64_t>(2000, (int64_t{256} << 20) / std::max<int64_t>(bytes, 1)));
}

// Seconds per all-reduce of `bytes` on `n` devices; 0 on error.
double TimeAllReduce(int64_t n, int64_t bytes) {
  const int64_t count = bytes / 4;
  const int64_t iterations = IterationsFor(bytes);
  runtime::SharedMemoryWorld world(n);
  std::vector<double> seconds(n, 0);
  std::vector<bool> ok(n, true);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::shared_ptr<runtime::Communicator> comm = world.CommunicatorFor(r);
      std::vector<float> in(count, 1.0f + r), out(count);
      std::vector<int64_t> group(n);
      for (int64_t i = 0; i < n; ++i) group[i] = i;
      // Warm-up (pages touched) and a common start.
      for (int64_t w = 0; w < 2; ++w) {
        ok[r] = ok[r] && comm->AllReduce({"warm", w}, group, runtime::ElementType::kF32,
                                         runtime::ReductionKind::kSum, in.data(), out.data(),
                                         count).ok();
      }
      const Clock::time_point start = Clock::now();
      for (int64_t i = 0; i < iterations; ++i) {
        ok[r] = ok[r] && comm->AllReduce({"ar", i}, group, runtime::ElementType::kF32,
                                         runtime::ReductionKind::kSum, in.data(), out.data(),
                                         count).ok();
      }
      seconds[r] = Seconds(Clock::now() - start) / static_cast<double>(iterations);
      ok[r] = ok[r] && out[0] == static_cast<float>(n * (n + 1) / 2);
    });
  }
  for (std::thread& t : threads) t.join();
  for (bool b : ok) {
    if (!b) return 0;
  }
  return *std::max_element(seconds.begin(), seconds.end());
}

double TimeMemcpy(int64_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  const int64_t iterations = IterationsFor(bytes);
  std::memcpy(b.data(), a.data(), bytes);
  const Clock::time_point start = Clock::now();
  for (int64_t i = 0; i < iterations; ++i) {
    a[i % bytes] = static_cast<char>(i);  // Keeps the copies from being merged.
    std::memcpy(b.data(), a.data(), bytes);
  }
  const double s = Seconds(Clock::now() - start) / static_cast<double>(iterations);
  volatile char sink = b[static_cast<size_t>(bytes) - 1];  // The copies are read.
  (void)sink;
  return s;
}

std::string Size(int64_t bytes) {
  char text[32];
  if (bytes >= (1 << 20)) {
    std::snprintf(text, sizeof(text), "%lld MiB", static_cast<long long>(bytes >> 20));
  } else {
    std::snprintf(text, sizeof(text), "%lld KiB", static_cast<long long>(bytes >> 10));
  }
  return text;
}

}  // namespace
}  // namespace hloc

int main(int argc, char** argv) {
  std::vector<int64_t> devices = {2, 4};
  int64_t max_bytes = int64_t{64} << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--devices=", 0) == 0) {
      devices.clear();
      for (absl::string_view part : absl::StrSplit(arg.substr(10), ',')) {
        int64_t n;
        if (!absl::SimpleAtoi(part, &n) || n < 1) {
          std::fprintf(stderr, "bad --devices: %s\n", arg.c_str());
          return 2;
        }
        devices.push_back(n);
      }
    } else if (arg.rfind("--max_bytes=", 0) == 0) {
      if (!absl::SimpleAtoi(arg.substr(12), &max_bytes)) {
        std::fprintf(stderr, "bad --max_bytes: %s\n", arg.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: allreduce_bandwidth [--devices=2,4] [--max_bytes=N]\n");
      return 2;
    }
  }
  std::printf("| message | memcpy | memcpy GB/s |");
  for (int64_t n : devices) std::printf(" all-reduce %lld dev | GB/s | x memcpy |", static_cast<long long>(n));
  std::printf("\n|---|---|---|");
  for (size_t i = 0; i < devices.size(); ++i) std::printf("---|---|---|");
  std::printf("\n");
  for (int64_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
    const double copy = hloc::TimeMemcpy(bytes);
    std::printf("| %s | %.2f us | %.2f |", hloc::Size(bytes).c_str(), copy * 1e6, bytes / copy / 1e9);
    for (int64_t n : devices) {
      const double t = hloc::TimeAllReduce(n, bytes);
      if (t == 0) {
        std::printf(" error | | |");
        continue;
      }
      std::printf(" %.2f us | %.2f | %.2f |", t * 1e6, bytes / t / 1e9, t / copy);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
