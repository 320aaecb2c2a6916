// Generated modules for measuring how the fusion passes scale: a chain of
// small transformer-like layers (dot, bias, relu, exp, row-sum, divide,
// transpose, residual), about 18 instructions each, built directly with the
// IR API. Every layer's constants are its own, so no instruction has more
// than a handful of users.
#ifndef HLOC_PASSES_FUSION_GENERATED_GRAPHS_H_
#define HLOC_PASSES_FUSION_GENERATED_GRAPHS_H_

#include <cstdint>
#include <memory>

#include "hlo/module.h"

namespace hloc {

// A module of about `instructions` instructions in its entry (at least one
// layer), plus a shared scalar add reducer.
std::unique_ptr<HloModule> MakeLayeredModule(int64_t instructions);

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_GENERATED_GRAPHS_H_
