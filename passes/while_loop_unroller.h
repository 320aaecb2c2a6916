// While-loop unrolling: a loop that runs a known, small number of times with
// a small body becomes that many copies of its body, one after the other.
//
//   init = tuple(0, x, ...)                        s1 = body(init)   (copy 1)
//   w = while(init), condition: gte(p, 0) < 3  ->  s2 = body(s1)     (copy 2)
//   body: ROOT tuple(gte(p, 0) + 1, f(...))        w  = body(s2)     (copy 3)
//
// Why: a loop is a wall for fusion and a round trip through memory per trip
// for every array it carries. JAX's threefry random bits are a loop of five
// trips over two u32 arrays of the output's size: unrolled, the five rounds,
// the float conversion and the erf_inv of jax.random.normal fuse into one
// kernel instead of five passes over memory plus one.
//
// Which loops: the trip count must follow from the module alone --
//   - the condition's root is `compare(gte(p, k), c)` (or `c` on the left)
//     with a constant integer scalar `c`, direction LT, LE, GT or GE, and the
//     loop counts towards `c` (so the trip count is finite);
//   - the body's root is a tuple whose element k is `gte(p, k) + 1` or
//     `gte(p, k) - 1` (either operand order for the add);
//   - the while's operand is a tuple whose element k is a constant.
// The body (and the computations it calls) must hold no side effect, no
// collective with a channel, no control dependency, and no fusion, loop or
// conditional (whose computations have one caller each; an inner loop that
// unrolls first is gone by then); the while itself no control dependency.
// The copies stay within `max_trip_count` trips and `max_instructions`
// copied instructions (counted through called computations), so that big
// bodies (a transformer layer scanned over layers) stay loops. A loop that
// runs zero times becomes its init.
//
// The copies are made as a chain of calls of the body, each inlined at once
// by CallInliner::InlineCall; they read the previous copy's tuple through
// get-tuple-elements. TupleSimplifier and constant folding then turn the
// counter into constants in each copy, and CallInliner (run after this
// pass) inlines the calls the body itself made.
#ifndef HLOC_PASSES_WHILE_LOOP_UNROLLER_H_
#define HLOC_PASSES_WHILE_LOOP_UNROLLER_H_

#include <cstdint>
#include <optional>

#include "passes/pass.h"

namespace hloc {

struct WhileLoopUnrollerOptions {
  int64_t max_trip_count = 16;
  // Instructions copied in all (trips times the body's size).
  int64_t max_instructions = 4000;
};

class WhileLoopUnroller : public HloPass {
 public:
  WhileLoopUnroller() = default;
  explicit WhileLoopUnroller(WhileLoopUnrollerOptions options) : options_(options) {}
  absl::string_view name() const override { return "while-loop-unroller"; }
  absl::StatusOr<bool> Run(HloModule& module) override;

  // The number of trips of `loop` when the pattern above gives it, else
  // nullopt.
  static std::optional<int64_t> KnownTripCount(const HloInstruction& loop);

 private:
  WhileLoopUnrollerOptions options_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_WHILE_LOOP_UNROLLER_H_
