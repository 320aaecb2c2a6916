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
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/buffer_assignment.h"
#include "runtime/thread_pool.h"
#include "runtime/thunk.h"

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
};

struct ProgramSpec {
  std::vector<BufferSpec> buffers;
  ThunkSequence thunks;
  std::vector<BufferId> outputs;  // Buffers copied out, in order, after the run.
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
  // must not overlap any parameter or other output. Runs may overlap in time.
  absl::Status Execute(absl::Span<const void* const> parameters,
                       absl::Span<void* const> outputs, ThreadPool* pool,
                       const ExecuteOptions& options = {}) const;

  int64_t num_parameters() const { return num_parameters_; }
  int64_t parameter_size(int64_t i) const { return parameter_sizes_[i]; }
  int64_t num_outputs() const { return static_cast<int64_t>(spec_.outputs.size()); }
  int64_t output_size(int64_t j) const { return spec_.buffers[spec_.outputs[j]].size; }
  const ArenaAssignment& arena() const { return arena_; }

  // The thunk sequence, one thunk per line.
  std::string ThunksToString() const;
  // Arena size, reuse, and where every temporary lives.
  std::string MemoryReport() const;

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
  std::vector<int64_t> arena_offset_;  // Per buffer; -1 when not in the arena.
  std::vector<size_t> temp_ids_;       // Buffers in the arena, in arena_ order.
  int64_t num_parameters_ = 0;
  std::vector<int64_t> parameter_sizes_;
};

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_EXECUTABLE_H_
