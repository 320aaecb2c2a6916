// Executable: arena placement at creation, buffer table set-up per run.
#include "runtime/executable.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace runtime {
namespace {

constexpr int64_t kAlignment = 64;

void FreeArena(void* p) { std::free(p); }

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(ProgramSpec spec) {
  std::unique_ptr<Executable> executable(new Executable(std::move(spec)));
  const std::vector<BufferSpec>& buffers = executable->spec_.buffers;
  std::vector<BufferInterval> temps;
  std::vector<size_t> temp_ids;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferSpec& b = buffers[i];
    if (b.size < 0) return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " has size < 0"));
    switch (b.kind) {
      case BufferSpec::Kind::kParameter:
        if (b.parameter < 0 || b.parameter > (int64_t{1} << 20)) {
          return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " has parameter index ",
                                                         b.parameter));
        }
        executable->num_parameters_ = std::max(executable->num_parameters_, b.parameter + 1);
        break;
      case BufferSpec::Kind::kConstant:
        if (static_cast<int64_t>(b.data.size()) != b.size) {
          return absl::InvalidArgumentError(absl::StrCat("constant buffer ", i, " holds ",
                                                         b.data.size(), " bytes, not ", b.size));
        }
        break;
      case BufferSpec::Kind::kTemp:
        if (b.is_output) break;  // Placed in the caller's memory, or in the arena below.
        if (b.live.first_use > b.live.last_use) {
          return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " is live over [",
                                                         b.live.first_use, ", ", b.live.last_use,
                                                         "]"));
        }
        temps.push_back({b.size, b.live.first_use, b.live.last_use});
        temp_ids.push_back(i);
        break;
    }
  }
  executable->parameter_sizes_.assign(executable->num_parameters_, 0);
  for (const BufferSpec& b : buffers) {
    if (b.kind == BufferSpec::Kind::kParameter) executable->parameter_sizes_[b.parameter] = b.size;
  }
  for (BufferId id : executable->spec_.outputs) {
    if (id < 0 || static_cast<size_t>(id) >= buffers.size()) {
      return absl::InvalidArgumentError(absl::StrCat("output buffer ", id, " out of range"));
    }
  }
  // An output buffer lives in the caller's memory when it is named by
  // exactly one output; otherwise it goes to the arena like any temporary.
  const std::vector<BufferId>& outputs = executable->spec_.outputs;
  executable->output_in_place_.assign(outputs.size(), false);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferSpec& b = buffers[i];
    if (b.kind != BufferSpec::Kind::kTemp || !b.is_output) continue;
    const auto uses = std::count(outputs.begin(), outputs.end(), static_cast<BufferId>(i));
    if (uses == 1) {
      executable->output_in_place_[std::find(outputs.begin(), outputs.end(),
                                             static_cast<BufferId>(i)) - outputs.begin()] = true;
      continue;
    }
    if (b.live.first_use > b.live.last_use) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", i, " has a bad live range"));
    }
    temps.push_back({b.size, b.live.first_use, b.live.last_use});
    temp_ids.push_back(i);
  }
  executable->arena_ = AssignArenaOffsets(temps, kAlignment);
  executable->temp_ids_ = temp_ids;
  executable->arena_offset_.assign(buffers.size(), -1);
  for (size_t t = 0; t < temp_ids.size(); ++t) {
    executable->arena_offset_[temp_ids[t]] = executable->arena_.offsets[t];
  }
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
  std::unique_ptr<void, void (*)(void*)> arena(nullptr, &FreeArena);
  {
    std::lock_guard<std::mutex> lock(arena_mu_);
    arena = std::move(cached_arena_);
  }
  if (arena == nullptr) {
    arena = std::unique_ptr<void, void (*)(void*)>(
        std::aligned_alloc(kAlignment, std::max<int64_t>(arena_.arena_size, kAlignment)),
        &FreeArena);
    if (arena == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate a ", arena_.arena_size, "-byte arena"));
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
      case BufferSpec::Kind::kTemp:
        if (arena_offset_[i] >= 0) pointer = static_cast<uint8_t*>(arena.get()) + arena_offset_[i];
        break;
    }
    if (pointer == nullptr) pointer = const_cast<uint8_t*>(kEmpty);
    context.buffers[i] = pointer;
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (output_in_place_[j] && spec_.buffers[spec_.outputs[j]].size > 0) {
      context.buffers[spec_.outputs[j]] = outputs[j];
    }
  }
  absl::Status status = ExecuteSequence(spec_.thunks, context);
  {
    std::lock_guard<std::mutex> lock(arena_mu_);
    if (cached_arena_ == nullptr) cached_arena_ = std::move(arena);
  }
  if (!status.ok()) return status;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const BufferSpec& b = spec_.buffers[spec_.outputs[j]];
    if (b.size > 0 && !output_in_place_[j]) {
      std::memcpy(outputs[j], context.buffers[spec_.outputs[j]], b.size);
    }
  }
  return absl::OkStatus();
}

std::string Executable::ThunksToString() const {
  std::string out;
  AppendSequence(spec_.thunks, &out, 0);
  return out;
}

std::string Executable::MemoryReport() const {
  std::vector<BufferInterval> temps;
  std::vector<std::string> names;
  for (size_t id : temp_ids_) {
    const BufferSpec& b = spec_.buffers[id];
    temps.push_back({b.size, b.live.first_use, b.live.last_use});
    names.push_back(b.name);
  }
  int64_t constant_bytes = 0, output_bytes = 0;
  for (size_t j = 0; j < spec_.outputs.size(); ++j) {
    if (output_in_place_[j]) output_bytes += spec_.buffers[spec_.outputs[j]].size;
  }
  for (const BufferSpec& b : spec_.buffers) {
    if (b.kind == BufferSpec::Kind::kConstant) constant_bytes += b.size;
  }
  return absl::StrCat(ArenaReport(arena_, temps, names), "outputs computed in place ",
                      output_bytes, " B, constants ", constant_bytes, " B\n");
}

}  // namespace runtime
}  // namespace hloc
