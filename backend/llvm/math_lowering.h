// The hook through which the elemental emitter lowers transcendental
// functions. The host backend emits f32 exp/expm1/tanh/log inline as
// vectorizable polynomials (polynomial_math.h: within stated ULP bounds of
// the correctly rounded result, not bit for bit with the interpreter) and
// calls libm for the rest; with KernelCompilerOptions::exact_math it calls
// libm for everything (the functions the interpreter calls, so results agree
// bit for bit). A GPU backend calls libdevice.
// Everything with an exact IEEE definition (sqrt, fabs, floor, rint, fmod via
// frem, ...) is emitted directly and never goes through this hook.
#ifndef HLOC_BACKEND_LLVM_MATH_LOWERING_H_
#define HLOC_BACKEND_LLVM_MATH_LOWERING_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "llvm/IR/IRBuilder.h"

namespace hloc {
namespace codegen {

enum class MathFunction {
  kExp, kExpm1, kLog, kLog1p, kSin, kCos, kTan, kTanh, kErf, kCbrt,
  kPow,    // two arguments
  kAtan2,  // two arguments: atan2(y, x)
  kHypot,  // two arguments: sqrt(x^2 + y^2) without undue overflow (complex abs)
};

class MathLowering {
 public:
  virtual ~MathLowering() = default;
  // Emits `function` on `args`, all of the same scalar type (float or
  // double), at the builder's insertion point.
  virtual absl::StatusOr<llvm::Value*> Emit(llvm::IRBuilder<>& b, MathFunction function,
                                            absl::Span<llvm::Value* const> args) const = 0;
};

// Declares, in the builder's module, the C-style math function for
// `function` on the type of `args` (float or double; all the same) and
// checks the argument count: `prefix` + "exp" + "f" for float, e.g. "expf"
// (libm, prefix "") or "__nv_exp" (libdevice, prefix "__nv_"). The function
// is marked pure. `library` names the library in errors.
absl::StatusOr<llvm::FunctionCallee> DeclareMathFunction(llvm::IRBuilder<>& b,
                                                         MathFunction function,
                                                         absl::Span<llvm::Value* const> args,
                                                         absl::string_view prefix,
                                                         absl::string_view library);

// Calls the C library: expf/exp, log1pf/log1p, ... declared in the module.
class LibmMathLowering : public MathLowering {
 public:
  absl::StatusOr<llvm::Value*> Emit(llvm::IRBuilder<>& b, MathFunction function,
                                    absl::Span<llvm::Value* const> args) const override;
};

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_MATH_LOWERING_H_
