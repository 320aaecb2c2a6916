// The epilogue registry: which elementwise steps each library op family fuses
// after its product, how they are spelled in composite.attributes
// ("epilogue") and in composite.name, and so which composite names exist.
//
//   family              steps, in the only order they may come
//   hloc.gemm           bias, then one of relu / gelu_tanh / gelu_erf
//   hloc.batched_gemm   bias, then one of relu / gelu_tanh / gelu_erf
//   hloc.conv           sub, scale, bias, then relu
//
// Each step is optional; a call's name is its family plus the steps' name
// tokens ("gelu" for both GELU forms): hloc.conv + [sub, scale, bias, relu]
// is hloc.conv_sub_scale_bias_relu, its epilogue "sub_scale_bias_relu". The
// scalar scale (alpha) is not a step: it multiplies the product before the
// first step and is recorded as `alpha`. What each step computes and which
// operand it reads is in library_patterns.h ("composite.attributes schema").
//
// gemm libraries (cuBLASLt, oneDNN matmul) fuse bias and activation; per-
// channel sub/scale (inference batch norm) only convolution libraries take
// (oneDNN binary post-ops, cuDNN's runtime fusion), so only conv has them.
#ifndef HLOC_PASSES_OUTLINING_LIBRARY_EPILOGUES_H_
#define HLOC_PASSES_OUTLINING_LIBRARY_EPILOGUES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "passes/outlining/library_patterns.h"

namespace hloc {

enum class EpilogueStep { kSub, kScale, kBias, kRelu, kGeluTanh, kGeluErf };

// The token in the `epilogue` attribute: "sub", "scale", "bias", "relu",
// "gelu_tanh", "gelu_erf".
absl::string_view EpilogueStepToken(EpilogueStep step);
// The token in composite.name ("gelu" for both GELU forms).
absl::string_view EpilogueStepNameToken(EpilogueStep step);
// sub, scale and bias read a vector operand of the call.
bool TakesVector(EpilogueStep step);
bool IsActivation(EpilogueStep step);

struct LibraryEpilogueFamily {
  std::string base;                 // "hloc.gemm": the composite name without steps
  std::vector<EpilogueStep> steps;  // the steps it fuses, in their order
};

const std::vector<LibraryEpilogueFamily>& LibraryEpilogueFamilies();
// The family whose base `composite_name` starts with (followed by '_' or the
// end), or nullptr.
const LibraryEpilogueFamily* FindEpilogueFamily(absl::string_view composite_name);

// "none" for no steps, else the tokens joined by '_'.
std::string EpilogueToString(absl::Span<const EpilogueStep> steps);
absl::StatusOr<std::vector<EpilogueStep>> ParseEpilogue(absl::string_view text);
// family.base + "_" + name token of each step.
std::string EpilogueCompositeName(const LibraryEpilogueFamily& family,
                                  absl::Span<const EpilogueStep> steps);
// nullopt when `family` fuses `steps` in that order; else why not.
Refusal CheckEpilogueSteps(const LibraryEpilogueFamily& family,
                           absl::Span<const EpilogueStep> steps);
// Every composite name of every family and valid step sequence, sorted.
std::vector<std::string> LibraryEpilogueNames();

}  // namespace hloc

#endif  // HLOC_PASSES_OUTLINING_LIBRARY_EPILOGUES_H_
