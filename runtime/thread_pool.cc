// Worker threads wait until some registered job has chunks left, then take
// chunks from that job's shared counter until none are left. The caller takes
// chunks of its own job too, then unregisters it and waits until every worker
// has left it before returning, so the job (on the caller's stack) outlives
// every access to it.
#include "runtime/thread_pool.h"

#include <algorithm>

#include "hlo/usable_cpus.h"

namespace hloc {
namespace runtime {

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = UsableCpuCount();
  num_threads = std::max(num_threads, 1);
  workers_.reserve(num_threads - 1);
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::RunChunks(Job* job) {
  for (;;) {
    const int64_t begin = job->next.fetch_add(job->chunk);
    if (begin >= job->n) return;
    (*job->fn)(begin, std::min(job->n, begin + job->chunk));
  }
}

ThreadPool::Job* ThreadPool::PickJob() {
  for (size_t k = 0; k < jobs_.size(); ++k) {
    Job* job = jobs_[(next_pick_ + k) % jobs_.size()];
    if (job->next.load(std::memory_order_relaxed) < job->n) {
      next_pick_ = (next_pick_ + k + 1) % jobs_.size();
      return job;
    }
  }
  return nullptr;
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || (job = PickJob()) != nullptr; });
      if (stop_) return;
      ++job->workers;
    }
    RunChunks(job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --job->workers;
    }
    done_cv_.notify_all();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  if (workers_.empty() || max_chunks <= 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balance uneven progress without much overhead.
  const int64_t target_chunks = std::min<int64_t>(max_chunks, int64_t{4} * num_threads());
  Job job;
  job.fn = &fn;
  job.n = n;
  job.chunk = std::max(grain, (n + target_chunks - 1) / target_chunks);
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(&job);
  }
  work_cv_.notify_all();
  RunChunks(&job);
  std::unique_lock<std::mutex> lock(mu_);
  // Once out of jobs_, no worker can join; wait for those inside.
  jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  done_cv_.wait(lock, [&] { return job.workers == 0; });
}

void ParallelForOrInline(ThreadPool* pool, int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
  if (pool != nullptr) {
    pool->ParallelFor(n, grain, fn);
  } else if (n > 0) {
    fn(0, n);
  }
}

}  // namespace runtime
}  // namespace hloc
