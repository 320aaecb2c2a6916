// Executable: arena placement at creation, buffer table set-up per run.
#include "runtime/executable.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/storage_plan.h"

namespace hloc {
namespace runtime {
namespace {

constexpr int64_t kAlignment = 64;

void FreeArena(void* p) { std::free(p); }

// Physical memory of this machine in bytes; 0 when unknown.
int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(ProgramSpec spec) {
  std::unique_ptr<Executable> executable(new Executable(std::move(spec)));
  Executable& e = *executable;
  const std::vector<BufferSpec>& buffers = e.spec_.buffers;
  const std::vector<BufferId>& outputs = e.spec_.outputs;
  const size_t n = buffers.size();
  absl::StatusOr<StoragePlan> plan =
      PlanStorage(buffers, outputs, e.spec_.output_parameter_aliases);
  if (!plan.ok()) return plan.status();
  e.num_parameters_ = plan->num_parameters;
  e.parameter_sizes_ = plan->parameter_sizes;
  e.aliased_parameter_ = plan->aliased_parameter;
  e.storage_root_ = plan->storage_root;
  e.shared_bytes_ = plan->shared_bytes;
  // A group is computed in the caller's memory for output j when one of its
  // members is flagged is_output and output j is the only output naming any
  // member; otherwise it goes to the arena like any temporary.
  std::vector<int64_t> outputs_naming(n, 0);
  for (BufferId id : outputs) ++outputs_naming[e.storage_root_[id]];
  e.root_output_.assign(n, -1);
  e.output_in_place_.assign(outputs.size(), false);
  for (size_t j = 0; j < outputs.size(); ++j) {
    const BufferSpec& b = buffers[outputs[j]];
    const BufferId root = e.storage_root_[outputs[j]];
    if (b.kind == BufferSpec::Kind::kTemp && b.is_output && outputs_naming[root] == 1) {
      e.root_output_[root] = static_cast<int64_t>(j);
      e.output_in_place_[j] = true;
    }
  }
  std::vector<BufferInterval> temps;
  std::vector<size_t> temp_ids;
  for (size_t i = 0; i < n; ++i) {
    if (!plan->is_temp_root[i] || e.root_output_[i] >= 0) continue;
    temps.push_back(plan->group_live[i]);
    temp_ids.push_back(i);
  }
  e.arena_ = AssignArenaOffsets(temps, kAlignment);
  e.temp_ids_ = temp_ids;
  e.arena_buffers_ = temps;
  e.arena_offset_.assign(n, -1);
  for (size_t t = 0; t < temp_ids.size(); ++t) e.arena_offset_[temp_ids[t]] = e.arena_.offsets[t];
  return executable;
}

absl::Status Executable::Execute(absl::Span<const void* const> parameters,
                                 absl::Span<void* const> outputs, ThreadPool* pool,
                                 const ExecuteOptions& options) const {
  if (static_cast<int64_t>(parameters.size()) != num_parameters_) {
    return absl::InvalidArgumentError(absl::StrCat("program takes ", num_parameters_,
                                                   " parameters, got ", parameters.size()));
  }
  if (outputs.size() != spec_.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("program has ", spec_.outputs.size(),
                                                   " outputs, got ", outputs.size()));
  }
  if (options.profiler != nullptr && options.profiler->program() != &spec_.thunks) {
    return absl::InvalidArgumentError("the profiler was made for another program");
  }
  const auto start = options.profiler != nullptr ? std::chrono::steady_clock::now()
                                                 : std::chrono::steady_clock::time_point();
  // A program with no temporaries (most tiny ones) needs no arena: no lock,
  // no allocation on its calls.
  const bool needs_arena = arena_.arena_size > 0;
  std::unique_ptr<void, void (*)(void*)> arena(nullptr, &FreeArena);
  if (needs_arena) {
    std::lock_guard<std::mutex> lock(arena_mu_);
    arena = std::move(cached_arena_);
  }
  if (needs_arena && arena == nullptr) {
    // Where the kernel overcommits memory, an arena larger than the machine
    // would be granted and the process killed when it is touched.
    const int64_t memory = PhysicalMemoryBytes();
    if (memory > 0 && arena_.arena_size > memory) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the program's temporaries need a ", arena_.arena_size,
          "-byte arena, more than the ", memory, " bytes of memory this machine has"));
    }
    arena = std::unique_ptr<void, void (*)(void*)>(
        std::aligned_alloc(kAlignment, std::max<int64_t>(arena_.arena_size, kAlignment)),
        &FreeArena);
    if (arena == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory: cannot allocate a ", arena_.arena_size, "-byte arena"));
    }
  }
  // Zero-size buffers still get a valid, aligned address.
  alignas(kAlignment) static const uint8_t kEmpty[kAlignment] = {};
  ExecutionContext context;
  context.pool = pool;
  context.options = options;
  context.buffers.resize(spec_.buffers.size());
  for (size_t i = 0; i < spec_.buffers.size(); ++i) {
    const BufferSpec& b = spec_.buffers[i];
    void* pointer = nullptr;
    switch (b.kind) {
      case BufferSpec::Kind::kParameter:
        pointer = const_cast<void*>(parameters[b.parameter]);
        break;
      case BufferSpec::Kind::kConstant:
        pointer = const_cast<uint8_t*>(b.data.data());
        break;
      case BufferSpec::Kind::kTemp: {
        const BufferId root = storage_root_[i];
        if (root_output_[root] >= 0) {
          if (b.size > 0) pointer = outputs[root_output_[root]];
        } else if (arena_offset_[root] >= 0) {
          pointer = static_cast<uint8_t*>(arena.get()) + arena_offset_[root];
        }
        break;
      }
    }
    if (pointer == nullptr) pointer = const_cast<uint8_t*>(kEmpty);
    context.buffers[i] = pointer;
  }
  absl::Status status = ExecuteSequence(spec_.thunks, context);
  if (needs_arena) {
    std::lock_guard<std::mutex> lock(arena_mu_);
    if (cached_arena_ == nullptr) cached_arena_ = std::move(arena);
  }
  if (!status.ok()) return status;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const BufferSpec& b = spec_.buffers[spec_.outputs[j]];
    // An output aliasing a parameter that it passes through is already there.
    if (b.size > 0 && !output_in_place_[j] && outputs[j] != context.buffers[spec_.outputs[j]]) {
      std::memcpy(outputs[j], context.buffers[spec_.outputs[j]], b.size);
    }
  }
  if (options.profiler != nullptr) {
    options.profiler->RecordRun(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return absl::OkStatus();
}

std::unique_ptr<ThunkProfiler> Executable::MakeProfiler() const {
  return std::make_unique<ThunkProfiler>(spec_.thunks, [this](BufferId id) -> std::string {
    if (id < 0 || static_cast<size_t>(id) >= spec_.buffers.size()) return "";
    return spec_.buffers[id].name;
  });
}

std::string Executable::ThunksToString() const {
  std::string out;
  AppendSequence(spec_.thunks, &out, 0);
  for (size_t i = 0; i < storage_root_.size(); ++i) {
    if (storage_root_[i] != static_cast<BufferId>(i)) {
      absl::StrAppend(&out, "b", i, " shares b", storage_root_[i], "'s bytes\n");
    }
  }
  return out;
}

std::string Executable::MemoryReport() const {
  std::vector<BufferInterval> temps;
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> members(spec_.buffers.size());
  for (size_t i = 0; i < spec_.buffers.size(); ++i) {
    const bool shares = storage_root_[i] != static_cast<BufferId>(i);
    if (spec_.buffers[i].kind == BufferSpec::Kind::kTemp && shares) {
      members[storage_root_[i]].push_back(spec_.buffers[i].name);
    }
  }
  for (size_t t = 0; t < temp_ids_.size(); ++t) {
    const size_t id = temp_ids_[t];
    temps.push_back(arena_buffers_[t]);  // A group's interval covers its members'.
    std::string name = spec_.buffers[id].name;
    for (const std::string& member : members[id]) absl::StrAppend(&name, " = ", member);
    names.push_back(std::move(name));
  }
  int64_t constant_bytes = 0, output_bytes = 0, sharing = 0;
  for (size_t j = 0; j < spec_.outputs.size(); ++j) {
    if (output_in_place_[j]) output_bytes += spec_.buffers[spec_.outputs[j]].size;
  }
  for (size_t i = 0; i < spec_.buffers.size(); ++i) {
    const BufferSpec& b = spec_.buffers[i];
    if (b.kind == BufferSpec::Kind::kConstant) constant_bytes += b.size;
    if (storage_root_[i] != static_cast<BufferId>(i)) ++sharing;  // Only temporaries share.
  }
  return absl::StrCat(ArenaReport(arena_, temps, names), "outputs computed in place ",
                      output_bytes, " B, constants ", constant_bytes, " B, ", sharing,
                      " buffers in another's bytes (", shared_bytes_, " B); peak ",
                      arena_.arena_size + output_bytes + constant_bytes,
                      " B besides the parameters\n");
}

}  // namespace runtime
}  // namespace hloc
