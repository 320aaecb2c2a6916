// A compiled host program: a table of buffers (caller's parameters, constants
// owned by the program, temporaries placed in one arena), the thunk sequence
// that computes the outputs, and the buffers holding them. Buffers are dense
// row-major arrays; the program knows sizes in bytes, not element types.
#ifndef HLOC_RUNTIME_EXECUTABLE_H_
#define HLOC_RUNTIME_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/buffer_assignment.h"
#include "runtime/thread_pool.h"
#include "runtime/thunk.h"
#include "runtime/thunk_profiler.h"

namespace hloc {
namespace runtime {

struct BufferSpec {
  // kTemp buffers that hold a program output (and nothing read after it is
  // written there) may be flagged `is_output`: Execute then places them in
  // the caller's output memory instead of the arena and skips the copy.
  enum class Kind { kParameter, kConstant, kTemp };
  Kind kind = Kind::kTemp;
  int64_t size = 0;            // Bytes.
  int64_t parameter = -1;      // kParameter: index into Execute's `parameters`.
  std::vector<uint8_t> data;   // kConstant: the bytes.
  BufferInterval live;         // kTemp: steps over which it must keep its bytes.
  bool is_output = false;      // kTemp: may live in the caller's output memory.
  std::string name;            // For reports ("%add.3", "%while.1{0}").
  // kTemp: lives in the bytes of buffer `shares` (a kTemp, followed
  // transitively) instead of its own. The compiler sets it only where the
  // two values never need their bytes at the same time: an update in place
  // (the old value is dead once the new one is written), a loop state taking
  // over its dead initial value. The group is placed as one buffer, live over
  // the union of its members' intervals; a copy between two of its members
  // does nothing.
  BufferId shares = -1;
};

struct ProgramSpec {
  std::vector<BufferSpec> buffers;
  ThunkSequence thunks;
  std::vector<BufferId> outputs;  // Buffers copied out, in order, after the run.
  // (output j, parameter i) pairs whose memory the caller may make the same
  // (a donated parameter): the compiler checked that nothing writes output
  // j's bytes before parameter i's last read. At most one pair per output
  // and per parameter, of equal sizes.
  std::vector<std::pair<int64_t, int64_t>> output_parameter_aliases;
  // Keeps compiled code (and anything else thunks point into) alive.
  std::shared_ptr<const void> code_owner;
};

class Executable {
 public:
  // Places the temporaries; fails when a spec is inconsistent (an id out of
  // range, a constant whose data size is not its size, ...).
  static absl::StatusOr<std::unique_ptr<Executable>> Create(ProgramSpec spec);

  // Runs the program. `parameters[i]` must hold the bytes of parameter i;
  // `outputs[j]` receives the bytes of output j (output_size(j) bytes) and
  // must not overlap any parameter or other output, except that it may be
  // exactly parameters[aliased_parameter(j)] (whose bytes the run then
  // overwrites). Runs may overlap in time. With options.profiler (made by
  // MakeProfiler), each thunk's time and the run's are added to it.
  absl::Status Execute(absl::Span<const void* const> parameters,
                       absl::Span<void* const> outputs, ThreadPool* pool,
                       const ExecuteOptions& options = {}) const;

  int64_t num_parameters() const { return num_parameters_; }
  int64_t parameter_size(int64_t i) const { return parameter_sizes_[i]; }
  int64_t num_outputs() const { return static_cast<int64_t>(spec_.outputs.size()); }
  int64_t output_size(int64_t j) const { return spec_.buffers[spec_.outputs[j]].size; }
  const ArenaAssignment& arena() const { return arena_; }
  // The parameter output j may share its memory with (see ProgramSpec), or -1.
  int64_t aliased_parameter(int64_t j) const { return aliased_parameter_[j]; }

  // A profiler for this program's runs (ExecuteOptions::profiler): one entry
  // per thunk, copies named by their buffers.
  std::unique_ptr<ThunkProfiler> MakeProfiler() const;

  // The thunk sequence, one thunk per line, then one line per buffer that
  // shares another's bytes.
  std::string ThunksToString() const;
  // Arena size, reuse, and where every temporary lives.
  std::string MemoryReport() const;
  // The buffer whose bytes buffer `id` uses (itself unless it shares).
  BufferId storage_of(BufferId id) const { return storage_root_[id]; }
  // Bytes of temporaries that live in another buffer's bytes.
  int64_t shared_bytes() const { return shared_bytes_; }

 private:
  explicit Executable(ProgramSpec spec) : spec_(std::move(spec)) {}
  ProgramSpec spec_;
  ArenaAssignment arena_;
  // Output j is computed directly in the caller's memory when set.
  std::vector<bool> output_in_place_;
  // One arena kept between runs (first-touch page faults of a fresh
  // allocation cost more than many kernels); a concurrent run allocates its own.
  mutable std::mutex arena_mu_;
  mutable std::unique_ptr<void, void (*)(void*)> cached_arena_{nullptr, nullptr};
  std::vector<int64_t> arena_offset_;  // Per storage root; -1 when not in the arena.
  std::vector<size_t> temp_ids_;       // Storage roots in the arena, in arena_ order.
  std::vector<BufferInterval> arena_buffers_;  // Their (group) intervals, same order.
  std::vector<BufferId> storage_root_;  // Per buffer: whose bytes it uses.
  std::vector<int64_t> aliased_parameter_;  // Per output.
  std::vector<int64_t> root_output_;    // Per storage root: the output it is computed in, or -1.
  int64_t shared_bytes_ = 0;
  int64_t num_parameters_ = 0;
  std::vector<int64_t> parameter_sizes_;
};

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_EXECUTABLE_H_
