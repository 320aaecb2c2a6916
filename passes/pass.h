// The pass interface: a graph-to-graph rewrite of a whole module. Run returns
// whether anything changed, so pipelines can iterate to a fixed point and
// dump only the passes that did something.
#ifndef HLOC_PASSES_PASS_H_
#define HLOC_PASSES_PASS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hlo/module.h"

namespace hloc {

class HloPass {
 public:
  virtual ~HloPass() = default;
  // Stable, kebab-case name used by --disable-pass, dumps and timings.
  virtual absl::string_view name() const = 0;
  virtual absl::StatusOr<bool> Run(HloModule& module) = 0;
};

}  // namespace hloc

#endif  // HLOC_PASSES_PASS_H_
