// A readable account of what library outlining did, from the ledger entries of
// OutlineLibraryCalls and InlineUnsupportedLibraryCalls (what `hloc explain`
// prints). Per computation:
//
//   computation main.4
//     outlined      gemm_bias_relu  hloc.gemm_bias_relu at relu.3 (7 instructions)
//                   numerics: reformulation: ...
//                   attributes: {alpha = 1.0 : f64, ...}
//     refused       hloc.gemm_bias at add.11: overlaps gemm_bias_relu, which took add.11
//     absorbed      conv_relu  now hloc.conv_relu: relu; numerics: ...; {...}
//     kept out      hloc.gemm gemm.2: its result has 2 users and they are no GELU of it
//     not outlined  dot_general.9: hloc.batched_gemm: operand ... not row-major
//     inlined       gemm_bias.1 (hloc.gemm_bias): the backend does not implement it
#ifndef HLOC_PASSES_OUTLINING_OUTLINING_REPORT_H_
#define HLOC_PASSES_OUTLINING_OUTLINING_REPORT_H_

#include <string>

#include "passes/fusion/fusion_ledger.h"

namespace hloc {

std::string RenderLibraryOutliningReport(const FusionLedger& ledger);

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_OUTLINING_REPORT_H_
