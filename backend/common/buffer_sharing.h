// Which buffers may live in another's bytes, on any target. The program
// builder (program_builder.h) reports, while it emits thunks, every read of every
// buffer with its step, the loops and branches it is inside, and candidate
// pairs (donor, taker): a taker written at step `time` from a donor whose
// value may be dead from then on. Once all reads are known, Resolve decides
// each pair and sets the taker's BufferSpec::shares to the donor.
//
// Steps are the compiler's schedule: a nested computation's steps lie
// between its caller's and the next instruction's, so a loop body's steps
// come after its condition's, and the copies of a body's result into the
// loop state come last. A pair is taken when the donor's old value is never
// read after the taker is written:
//
//   straight line   the donor is defined inside every loop around `time`
//                   (so a later iteration rewrites it before reading it),
//                   and no step after `time` reads it. For a kernel's
//                   output in the bytes of an operand it reads only where
//                   it writes that output (kElementwise), this keeps a
//                   chain of elementwise kernels in one buffer: less
//                   memory, and the data stays in cache. A taker that is
//                   also a loop result's taker (below) takes no such pair:
//                   the state's bytes save a copy every iteration;
//
//   loop state      (update in place only) the donor is state leaf j of the
//                   innermost loop around `time`, `time` is in its body and
//                   not in a branch inside it, the body's result leaf j is
//                   the taker, and nothing reads the donor between `time`
//                   and the end of the loop. The copy of result j into
//                   state j then copies a buffer onto itself; the next
//                   iteration and the code after the loop read the new
//                   value, as they should.
//
//   loop result     (kLoopResult) the taker is the body's result leaf j,
//                   a temporary the body writes, the donor state leaf j;
//                   taken when nothing reads the donor from the taker's
//                   first write to the end of the loop (but the writing
//                   kernel itself, where it reads the donor only at the
//                   index it writes the taker, and for no other output:
//                   a kElementwise pair at that step), and no other
//                   buffer lives in the taker's bytes, or in the donor's
//                   before the loop ends. The body then computes the new
//                   state in the state's own bytes, and the copy back does
//                   nothing. Decided after every other pair, so those
//                   decisions are known.
//
// Only temporaries are donors: entry parameters belong to the caller and
// constants to the program. A parameter the module aliases with an output
// (input_output_alias) may still hold that output when the caller donates
// it; OutputMayReuseParameter says when that is safe.
#ifndef HLOC_BACKEND_COMMON_BUFFER_SHARING_H_
#define HLOC_BACKEND_COMMON_BUFFER_SHARING_H_

#include <cstdint>
#include <vector>

#include "runtime/executable.h"

namespace hloc {
namespace backend {

class BufferSharing {
 public:
  enum class Kind {
    kUpdate,    // A dynamic-update-slice writing its operand's bytes.
    kLoopInit,  // A loop state leaf taking over its initial value.
    // A loop body's result leaf computed in its state leaf's bytes.
    kLoopResult,
    // A kernel reading the donor (an entry parameter or a temporary) only
    // at the indices it writes the taker, one of its outputs, and for no
    // other (elementwise_operands.h). Taken by the straight-line rule
    // between temporaries; it also lets a kLoopResult pair's writing
    // kernel read the donor, and OutputMayReuseParameter a parameter's
    // last reader write the output.
    kElementwise,
  };
  struct Decisions {
    int64_t updates = 0;     // kUpdate pairs taken.
    int64_t elementwise = 0;  // kElementwise pairs taken.
    int64_t loop_inits = 0;  // kLoopInit pairs taken.
    int64_t loop_results = 0;  // kLoopResult pairs taken.
    int64_t shared_bytes = 0;
  };

  // `buffer` is read at `step` (a kernel or copy input, a loop's result, a
  // program output).
  void Read(runtime::BufferId buffer, int64_t step);

  // Steps emitted from now on are in a loop's condition or body, or in a
  // conditional's branch, until the matching Exit.
  int BeginLoop(int64_t first_step);
  void EnterCondition(int loop) { scopes_.push_back({ScopeKind::kCondition, loop}); }
  void EnterBody(int loop) { scopes_.push_back({ScopeKind::kBody, loop}); }
  void EnterBranch() { scopes_.push_back({ScopeKind::kBranch, -1}); }
  void Exit() { scopes_.pop_back(); }
  void EndLoop(int loop, int64_t last_step, std::vector<runtime::BufferId> state,
               std::vector<runtime::BufferId> result);

  void AddCandidate(Kind kind, runtime::BufferId donor, runtime::BufferId taker, int64_t step);

  // Decides every candidate (see above) and sets `shares` on the takers.
  // `alone`: buffers no kElementwise pair may take (program outputs the
  // module aliases with a parameter: a donated argument's bytes are worth
  // more to them than a temporary's, see OutputMayReuseParameter).
  Decisions Resolve(std::vector<runtime::BufferSpec>* buffers,
                    const std::vector<runtime::BufferId>& alone = {}) const;

  // After Resolve: whether program output buffer `output` may be computed in
  // the memory of entry parameter buffer `parameter` (a donated parameter,
  // runtime::ProgramSpec::output_parameter_aliases). It may when every
  // buffer sharing `output`'s bytes is first written after the parameter's
  // last read, or at that read by a copy from the parameter (an update in
  // place or a loop's initial state: the copy then does nothing) or by a
  // kernel reading the parameter only where it writes (kElementwise), and
  // the parameter is not itself an output (or is this one).
  bool OutputMayReuseParameter(const std::vector<runtime::BufferSpec>& buffers,
                               const std::vector<runtime::BufferId>& outputs,
                               runtime::BufferId output, runtime::BufferId parameter) const;

 private:
  enum class ScopeKind { kCondition, kBody, kBranch };
  struct Scope {
    ScopeKind kind;
    int loop;  // kCondition, kBody: index into loops_.
  };
  struct Loop {
    int64_t first_step = 0, last_step = 0;
    std::vector<runtime::BufferId> state, result;
  };
  struct Candidate {
    Kind kind;
    runtime::BufferId donor, taker;
    int64_t step;
    std::vector<Scope> scopes;  // Innermost last.
  };
  // Whether `buffer` is read at a step in (after, until].
  bool ReadBetween(runtime::BufferId buffer, int64_t after, int64_t until) const;
  // Whether the kernel writing `taker` at `step` reads `donor` only where it
  // writes the taker (a kElementwise candidate).
  bool ReadOnlyWhereWritten(runtime::BufferId donor, runtime::BufferId taker, int64_t step) const;
  bool Take(const Candidate& candidate, const std::vector<runtime::BufferSpec>& buffers) const;
  // Donor and taker are two distinct temporaries of one size, and the taker
  // does not already live in another buffer's bytes.
  static bool TempsOfOneSize(const Candidate& candidate,
                             const std::vector<runtime::BufferSpec>& buffers);
  bool TakeLoopResult(const Candidate& candidate,
                      const std::vector<runtime::BufferSpec>& buffers) const;

  std::vector<std::vector<int64_t>> reads_;  // Per buffer, in increasing step order.
  std::vector<Scope> scopes_;
  std::vector<Loop> loops_;
  std::vector<Candidate> candidates_;
};

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_BUFFER_SHARING_H_
