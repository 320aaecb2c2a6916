// A fixed pool of worker threads for splitting one kernel's work items over
// the host's cores. The runtime executes thunks one after another; only the
// items of a single kernel run in parallel, so the pool serves one
// ParallelFor at a time and the calling thread works alongside the workers.
#ifndef HLOC_RUNTIME_THREAD_POOL_H_
#define HLOC_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hloc {
namespace runtime {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread: 1 means no workers at all.
  // 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) over chunks of [0, n) that cover it exactly once,
  // each chunk at least `grain` items long (except the last), and returns
  // when all chunks are done. Calls from several threads are serialized.
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t chunk = 1;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> remaining_chunks{0};
  };
  void WorkerLoop();
  static void RunChunks(Job* job);

  std::vector<std::thread> workers_;
  std::mutex call_mu_;  // One ParallelFor at a time.
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  int active_workers_ = 0;
  bool stop_ = false;
};

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_THREAD_POOL_H_
