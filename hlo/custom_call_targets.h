// Custom-call targets an embedder implements: host functions registered by
// name (through the C++, C or Python API) that a `custom-call` whose
// custom_call_target is that name runs, on the host backend (a library-call
// thunk) and in the interpreter alike.
//
//   CustomCallRegistry           thread-safe, mutable: Register(name, fn)
//        │ Snapshot()            (copy on write: a registration makes a new
//        ▼                        table, snapshots already taken keep theirs)
//   CustomCallTargets            immutable: Find(name), fingerprint()
//        │ one per compile       the compile cache key includes fingerprint(),
//        ▼                        so executables compiled before and after a
//   thunks / interpreter          registration are never confused
//   hold the CustomCallHandler they were compiled with (shared), so a later
//   registration under the same name does not change a compiled executable.
//
// It lives in hlo/ because the interpreter (hlo/evaluator) calls targets
// too; the backends and the API layer only pass tables down.
//
// The function sees the instruction's operands' and result's array leaves
// (depth-first, as the API's arguments and results) as typed, dense,
// row-major arrays; it reads the operands and writes every result element.
// Its error becomes the run's, naming the instruction and the target.
#ifndef HLOC_HLO_CUSTOM_CALL_TARGETS_H_
#define HLOC_HLO_CUSTOM_CALL_TARGETS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "hlo/instruction.h"
#include "hlo/primitive_type.h"

namespace hloc {

// One array leaf of a custom call's operands or result.
struct CustomCallArray {
  PrimitiveType type = xla::PRIMITIVE_TYPE_INVALID;
  absl::Span<const int64_t> dims;
  void* data = nullptr;  // Operands: read only.
  int64_t element_count() const;
  int64_t byte_size() const;  // As hloc stores the type (pred one byte).
};

// Runs fn(begin, end) over chunks that cover [0, n) exactly once, each at
// least `grain` long (except the last), maybe on several threads at once,
// and returns when all are done.
using ParallelRanges = std::function<void(int64_t n, int64_t grain,
                                          const std::function<void(int64_t, int64_t)>& fn)>;

// What a registered function is called with; valid during the call only.
struct CustomCallFrame {
  absl::string_view target;          // custom_call_target
  absl::string_view instruction;     // the instruction's name, without '%'
  absl::string_view backend_config;  // the instruction's opaque config, as written
  absl::Span<const CustomCallArray> operands;
  absl::Span<const CustomCallArray> results;
  // Where the caller has worker threads (the host backend's pool), the
  // built-in handlers may split independent work over them (LAPACK's batch
  // elements); null: everything runs on the calling thread.
  const ParallelRanges* parallel = nullptr;
};

// May be called from several threads at once (concurrent runs).
using CustomCallFunction = std::function<absl::Status(const CustomCallFrame& frame)>;

struct CustomCallHandler {
  std::string target;
  CustomCallFunction function;
  uint64_t registration = 0;  // Unique per registration in the process.
};

// The array leaves of `shape`, depth-first (tuples flattened; tokens skipped).
void AppendArrayLeafShapes(const Shape& shape, std::vector<const Shape*>* leaves);

// Calls `handler` for `hlo` on buffers laid out as the instruction's
// operand leaves then result leaves (`buffers.size()` must be their count),
// handing it `parallel` (may be null). An error names the instruction and
// the target.
absl::Status CallCustomCallHandler(const CustomCallHandler& handler, const HloInstruction& hlo,
                                   absl::Span<void* const> buffers,
                                   const ParallelRanges* parallel = nullptr);

// What an error about unknown target `target` should add: for JAX's host
// callbacks (jax.debug.print, pure_callback, io_callback) that hloc.jax.jit
// supplies them; empty for other targets.
std::string UnknownTargetHint(absl::string_view target);

// An immutable set of targets (a registry's snapshot).
class CustomCallTargets {
 public:
  // The handler for `target`, or null.
  std::shared_ptr<const CustomCallHandler> Find(absl::string_view target) const;
  // The handler for `hlo` when it is a custom call to a registered target.
  std::shared_ptr<const CustomCallHandler> FindFor(const HloInstruction& hlo) const;
  bool empty() const { return handlers_.empty(); }
  // Names and registrations, sorted: equal exactly when the tables are.
  const std::string& fingerprint() const { return fingerprint_; }
  // This table with `target` added, or put in place of the same-named one
  // (a new registration number: the fingerprint differs from every other
  // table's). InvalidArgument for an empty name, a missing function, or a
  // target hloc implements itself ("TopK").
  absl::StatusOr<std::shared_ptr<const CustomCallTargets>> With(std::string target,
                                                                CustomCallFunction function) const;

 private:
  friend class CustomCallRegistry;
  absl::flat_hash_map<std::string, std::shared_ptr<const CustomCallHandler>> handlers_;
  std::string fingerprint_;
};

// Where an embedder registers targets; safe to use from any thread while
// others compile and run.
class CustomCallRegistry {
 public:
  CustomCallRegistry();
  // Registers (or replaces) `target`. InvalidArgument for an empty name,
  // a missing function, or a target hloc implements itself ("TopK").
  absl::Status Register(std::string target, CustomCallFunction function);
  // The targets registered now.
  std::shared_ptr<const CustomCallTargets> Snapshot() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const CustomCallTargets> current_;
};

}  // namespace hloc

#endif  // HLOC_HLO_CUSTOM_CALL_TARGETS_H_
