// OneDnnContext: engine, operation cache, scratchpads and OpenMP thread control
// (see onednn_context.h).
#include "backend/host/onednn_context.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/usable_cpus.h"

namespace hloc {
namespace host {

ScopedOmpThreads::ScopedOmpThreads(int threads) : saved_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(threads, 1));
}

ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(saved_); }

dnnl::memory::data_type OneDnnType(PrimitiveType type) {
  switch (type) {
    case xla::F32: return dnnl::memory::data_type::f32;
    case xla::BF16: return dnnl::memory::data_type::bf16;
    case xla::F16: return dnnl::memory::data_type::f16;
    default: return dnnl::memory::data_type::undef;
  }
}

absl::Status OneDnnError(const dnnl::error& error, absl::string_view what) {
  return absl::InternalError(absl::StrCat("oneDNN ", what, ": ", error.what()));
}

int OneDnnContext::DefaultThreads() {
  return UsableCpuCount();
}

absl::StatusOr<std::shared_ptr<OneDnnContext>> OneDnnContext::Create() {
  std::shared_ptr<OneDnnContext> context(new OneDnnContext());
  try {
    context->engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0);
  } catch (const dnnl::error& e) {
    return OneDnnError(e, "creating the CPU engine");
  }
  return context;
}

absl::StatusOr<std::shared_ptr<const OneDnnOperation>> OneDnnContext::GetOrBuild(
    const std::string& key, const OneDnnBuilder& build) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  absl::StatusOr<std::shared_ptr<const OneDnnOperation>> built;
  try {
    built = build(engine_);
  } catch (const dnnl::error& e) {
    return OneDnnError(e, absl::StrCat("creating ", key));
  }
  if (!built.ok()) return built.status();
  cache_.emplace(key, *built);
  return *built;
}

std::function<absl::Status(absl::Span<void* const>, runtime::ThreadPool*)> OneDnnContext::MakeCall(
    std::shared_ptr<OneDnnContext> context, std::string key,
    std::shared_ptr<const OneDnnOperation> operation) {
  return [context = std::move(context), key = std::move(key), operation = std::move(operation)](
             absl::Span<void* const> buffers, runtime::ThreadPool* pool) -> absl::Status {
    try {
      return operation->Run(buffers, context->engine_, pool);
    } catch (const dnnl::error& e) {
      return OneDnnError(e, absl::StrCat("running ", key));
    }
  };
}

absl::Status ForEachPiece(int64_t n, runtime::ThreadPool* pool,
                          const std::function<void(int64_t)>& fn) {
  std::mutex mu;
  absl::Status status;
  auto chunk = [&](int64_t begin, int64_t end) {
    ScopedOmpThreads one(1);
    for (int64_t i = begin; i < end; ++i) {
      try {
        fn(i);
      } catch (const dnnl::error& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (status.ok()) status = OneDnnError(e, "executing a piece");
      }
    }
  };
  if (pool != nullptr && n > 1) {
    pool->ParallelFor(n, 1, chunk);
  } else {
    chunk(0, n);
  }
  return status;
}

dnnl::memory ThreadMemory(const void* owner, int arg, const dnnl::memory::desc& desc,
                          const dnnl::engine& engine, void* handle) {
  struct Entry {
    dnnl::memory memory;
    dnnl::memory::desc desc;
    dnnl_engine_t engine;
  };
  // Bounded: a thread that runs many programs drops its objects now and then.
  constexpr size_t kMaxEntries = 4096;
  thread_local absl::flat_hash_map<std::pair<const void*, int>, Entry> cache;
  auto it = cache.find(std::make_pair(owner, arg));
  if (it != cache.end() && it->second.engine == engine.get() && it->second.desc == desc) {
    it->second.memory.set_data_handle(handle);
    return it->second.memory;
  }
  if (it == cache.end() && cache.size() >= kMaxEntries) cache.clear();
  Entry entry{dnnl::memory(desc, engine, handle), desc, engine.get()};
  dnnl::memory memory = entry.memory;
  cache.insert_or_assign(std::make_pair(owner, arg), std::move(entry));
  return memory;
}

dnnl::memory ThreadScratchpad(const dnnl::memory::desc& desc, const dnnl::engine& engine) {
  struct Buffer {
    ~Buffer() { std::free(data); }
    void* data = nullptr;
    size_t size = 0;
  };
  thread_local Buffer buffer;
  const size_t size = desc.get_size();
  if (size > buffer.size) {
    std::free(buffer.data);
    buffer.size = (size + 63) / 64 * 64;
    buffer.data = std::aligned_alloc(64, buffer.size);
    if (buffer.data == nullptr) {
      buffer.size = 0;
      throw std::bad_alloc();
    }
  }
  return ThreadMemory(&desc, DNNL_ARG_SCRATCHPAD, desc, engine,
                      size == 0 ? nullptr : buffer.data);
}

}  // namespace host
}  // namespace hloc
