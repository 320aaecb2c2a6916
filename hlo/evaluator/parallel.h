// A minimal fork-join helper: splits [0, n) into contiguous chunks and runs
// them on short-lived std::threads. Ops call it only for work large enough
// that starting a thread (tens of microseconds) is noise.
#ifndef HLOC_HLO_EVALUATOR_PARALLEL_H_
#define HLOC_HLO_EVALUATOR_PARALLEL_H_

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace hloc {
namespace eval {

// Runs fn(begin, end) over chunks of [0, n). `cost_per_item` is a rough count
// of elementary operations per item; with less than ~1M operations in all
// everything runs on the calling thread.
template <typename Fn>
void ParallelFor(int num_threads, int64_t n, int64_t cost_per_item, Fn&& fn) {
  if (n <= 0) return;
  const int64_t total_cost = n * std::max<int64_t>(cost_per_item, 1);
  int64_t threads = std::min<int64_t>(num_threads, n);
  if (threads <= 1 || total_cost < (int64_t{1} << 20)) {
    fn(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  const int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 1; t < threads; ++t) {
    const int64_t begin = t * chunk;
    const int64_t end = std::min(n, begin + chunk);
    if (begin >= end) break;
    workers.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(int64_t{0}, std::min(n, chunk));
  for (std::thread& w : workers) w.join();
}

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_PARALLEL_H_
