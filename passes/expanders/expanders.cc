#include "passes/expanders/expanders.h"

#include "passes/expanders/batch_norm_expander.h"
#include "passes/expanders/builder_call_expander.h"
#include "passes/expanders/cholesky_expander.h"
#include "passes/expanders/eigh_expander.h"
#include "passes/expanders/fft_expander.h"
#include "passes/expanders/narrow_type_upcasting.h"
#include "passes/expanders/qr_expander.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/rng_expander.h"
#include "passes/expanders/scan_expander.h"
#include "passes/expanders/select_and_scatter_expander.h"
#include "passes/expanders/triangular_solve_expander.h"

namespace hloc {

void AddExpanders(HloPassPipeline& pipeline, const ExpanderOptions& expanders) {
  // First: builder calls' decompositions inlined, then scan bodies copied
  // into loops, where the others then find their ops.
  pipeline.AddPass<BuilderCallExpander>();
  pipeline.AddPass<ScanExpander>();
  pipeline.AddPass<BatchNormExpander>();
  pipeline.AddPass<SelectAndScatterExpander>();
  pipeline.AddPass<CholeskyExpander>();
  pipeline.AddPass<QrExpander>();
  pipeline.AddPass<EighExpander>();
  pipeline.AddPass<TriangularSolveExpander>();
  if (expanders.expand_fft) pipeline.AddPass<FftExpander>();
  // rng draws through an rng-bit-generator, expanded next.
  pipeline.AddPass<RngExpander>();
  pipeline.AddPass<RngBitGeneratorExpander>();
  // Last: the expansions above may themselves compute on s4/u4 or f8.
  pipeline.AddPass<UpcastNarrowTypeArithmetic>();
}

absl::StatusOr<bool> RunExpanders(HloModule& module, const PipelineOptions& options,
                                  const ExpanderOptions& expanders) {
  HloPassPipeline pipeline("expand", options);
  AddExpanders(pipeline, expanders);
  return pipeline.Run(module);
}

}  // namespace hloc
