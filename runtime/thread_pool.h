// A fixed pool of worker threads for splitting one kernel's work items over
// the host's cores. The runtime executes thunks one after another; only the
// items of a single kernel run in parallel, and the calling thread works
// alongside the workers. Several threads may call ParallelFor at once (one
// executable run from many threads, as the embedding API allows): each call
// is a job of its own, idle workers join whichever job still has chunks, and
// no caller waits for another's job.
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
  // 0 means every CPU this process may use (UsableCpuCount).
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) over chunks of [0, n) that cover it exactly once,
  // each chunk at least `grain` items long (except the last), and returns
  // when all chunks are done. Calls from several threads run concurrently,
  // sharing the workers; fn may itself call ParallelFor.
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t chunk = 1;
    std::atomic<int64_t> next{0};
    int workers = 0;  // Workers inside RunChunks for this job (guarded by mu_).
  };
  void WorkerLoop();
  static void RunChunks(Job* job);
  // A job with chunks left, or null; rotates over the jobs so that
  // concurrent callers all get workers. Needs mu_.
  Job* PickJob();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::vector<Job*> jobs_;  // Jobs whose callers have not returned yet.
  size_t next_pick_ = 0;
  bool stop_ = false;
};

// pool->ParallelFor(n, grain, fn) where there is a pool, else fn(0, n) on
// the calling thread: for library routines that may run without one.
void ParallelForOrInline(ThreadPool* pool, int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn);

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_THREAD_POOL_H_
