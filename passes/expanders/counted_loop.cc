#include "passes/expanders/counted_loop.h"

#include "absl/strings/str_cat.h"

namespace hloc {
namespace expanders {

std::vector<HloInstruction*> BuildCountedLoop(ExpansionBuilder& b, int64_t trip_count,
                                              const std::vector<HloInstruction*>& init,
                                              const LoopBody& body,
                                              const LoopCondition& keep_going) {
  std::vector<HloInstruction*> elements = {b.IndexScalar(xla::S32, 0)};
  elements.insert(elements.end(), init.begin(), init.end());
  HloInstruction* initial = b.Tuple(elements);
  if (initial == nullptr) return {};
  const Shape state_shape = initial->shape();

  HloComputation* condition = b.NewComputation("loop_condition");
  {
    ExpansionBuilder c = b.ForComputation(condition);
    HloInstruction* state = c.Parameter(0, state_shape, "state");
    HloInstruction* root = c.Compare(c.GetTupleElement(state, 0),
                                     c.IndexScalar(xla::S32, trip_count), ComparisonDirection::kLt);
    if (keep_going) {
      std::vector<HloInstruction*> current;
      for (size_t k = 0; k < init.size(); ++k) {
        current.push_back(c.GetTupleElement(state, static_cast<int64_t>(k) + 1));
      }
      root = c.Binary(HloOpcode::kAnd, root, keep_going(c, current));
    }
    if (!c.status().ok()) {
      b.Fail(c.status());
      return {};
    }
    condition->set_root(root);
  }

  HloComputation* loop_body = b.NewComputation("loop_body");
  {
    ExpansionBuilder c = b.ForComputation(loop_body);
    HloInstruction* state = c.Parameter(0, state_shape, "state");
    HloInstruction* counter = c.GetTupleElement(state, 0);
    std::vector<HloInstruction*> current;
    for (size_t k = 0; k < init.size(); ++k) {
      current.push_back(c.GetTupleElement(state, static_cast<int64_t>(k) + 1));
    }
    std::vector<HloInstruction*> next = body(c, counter, current);
    if (c.status().ok() && next.size() != init.size()) {
      c.Fail(absl::InternalError(absl::StrCat("loop body returned ", next.size(),
                                              " values for a state of ", init.size())));
    }
    std::vector<HloInstruction*> updated = {
        c.Binary(HloOpcode::kAdd, counter, c.IndexScalar(xla::S32, 1))};
    for (size_t k = 0; k < next.size(); ++k) {
      // The state keeps its shapes (layouts included) from one trip to the next.
      if (next[k] != nullptr && !next[k]->shape().Compatible(init[k]->shape())) {
        c.Fail(absl::InternalError(absl::StrCat("loop state element ", k, " changes shape from ",
                                                init[k]->shape().ToString(), " to ",
                                                next[k]->shape().ToString())));
      }
      updated.push_back(next[k]);
    }
    HloInstruction* root = c.Tuple(updated);
    if (!c.status().ok()) {
      b.Fail(c.status());
      return {};
    }
    root->set_shape(state_shape);
    loop_body->set_root(root);
  }

  HloInstruction* loop = b.While(initial, condition, loop_body);
  std::vector<HloInstruction*> results;
  for (size_t k = 0; k < init.size(); ++k) {
    results.push_back(b.GetTupleElement(loop, static_cast<int64_t>(k) + 1));
  }
  if (!b.status().ok()) return {};
  return results;
}

}  // namespace expanders
}  // namespace hloc
