// Dead-code elimination: removes instructions whose values nothing uses (and
// that have no side effect), and computations nothing calls any more.
#ifndef HLOC_PASSES_DEAD_CODE_ELIMINATION_H_
#define HLOC_PASSES_DEAD_CODE_ELIMINATION_H_

#include "passes/pass.h"

namespace hloc {

class DeadCodeElimination : public HloPass {
 public:
  explicit DeadCodeElimination(bool remove_dead_computations = true)
      : remove_dead_computations_(remove_dead_computations) {}
  absl::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(HloModule& module) override;

 private:
  bool remove_dead_computations_;
};

}  // namespace hloc

#endif  // HLOC_PASSES_DEAD_CODE_ELIMINATION_H_
