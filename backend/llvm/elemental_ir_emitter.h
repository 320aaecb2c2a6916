// The elemental IR emitter: for one HLO instruction, LLVM IR that computes a
// single element of its result from single elements of its operands. An
// instruction becomes an ElementGenerator (index -> value) built on its
// operands' generators, so a fused computation is a tree of generators and a
// kernel only has to loop over output indices and call the root's generator.
//
// Target independent: it knows nothing about threads, kernels or how buffers
// reach it. Transcendental functions go through a MathLowering (on the host
// inline polynomials for f32 exp/expm1/tanh/log, polynomial_math.h, and libm
// for the rest; libdevice on a GPU).
//
// Value representation (what a generator returns), per element type:
//   pred: i8 holding 0 or 1;  s8/u8: i8;  s16/u16: i16;  s32/u32: i32;
//   s64/u64: i64;  f32: float;  f64: double;
//   f16, bf16: i16 holding the bits. Arithmetic on them happens in float and
//   every result is rounded back (round to nearest even), as XLA and the
//   interpreter define it.
//   c64: {float, float} and c128: {double, double}, (real, imaginary), the
//   layout of std::complex in memory (elemental_complex_ops.cc).
//   s4/u4 (sub-byte integers): i8 holding the value sign- or zero-extended,
//   one element per byte as literals hold them; f8/f4 kinds: i8 holding the
//   bits in its low bits. They load, store, move and convert (and s4/u4
//   compare and take maximum/minimum); other arithmetic on them is
//   Unimplemented, as in the interpreter.
// A tuple-shaped instruction (variadic reduce) yields an LLVM struct of its
// leaves; get-tuple-element extracts from it.
//
// Semantics follow hlo/evaluator exactly: integer arithmetic wraps, x/0 = -1
// and x%0 = x, INT_MIN/-1 = INT_MIN and INT_MIN%-1 = 0, oversized shifts give
// 0 (or the sign fill), maximum/minimum propagate NaN, float->int converts
// saturate with NaN -> 0, compare with TOTALORDER orders -NaN < -inf < -0 <
// +0 < inf < NaN.
#ifndef HLOC_BACKEND_LLVM_ELEMENTAL_IR_EMITTER_H_
#define HLOC_BACKEND_LLVM_ELEMENTAL_IR_EMITTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/llvm/math_lowering.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace hloc {
namespace codegen {

// A multi-dimensional index into an array: one i64 per dimension, plus the
// row-major linear index of the same element when it is known for free (it
// lets elementwise chains and reshapes address memory without div/mod).
struct IrIndex {
  std::vector<llvm::Value*> dims;
  llvm::Value* linear = nullptr;  // Row-major, over the dimensions `dims` index.
};

using ElementGenerator = std::function<absl::StatusOr<llvm::Value*>(const IrIndex&)>;

class ElementalIrEmitter {
 public:
  ElementalIrEmitter(llvm::IRBuilder<>* b, llvm::Module* module, const MathLowering* math)
      : b_(b), module_(module), math_(math) {}
  ElementalIrEmitter(const ElementalIrEmitter&) = delete;
  ElementalIrEmitter& operator=(const ElementalIrEmitter&) = delete;

  llvm::IRBuilder<>* builder() const { return b_; }
  llvm::Module* module() const { return module_; }
  llvm::LLVMContext& context() const { return module_->getContext(); }

  // The generator of `hlo` given its operands' generators (operand order).
  // Handles every opcode IsElemental accepts except parameter and constant,
  // which depend on where data lives (the kernel emitters provide those).
  absl::StatusOr<ElementGenerator> MakeElementGenerator(const HloInstruction& hlo,
                                                        std::vector<ElementGenerator> operands);

  // Inlines a computation of scalars (a reducer, a map or sort function) on
  // `args`; returns the root's value, or its leaves when the root is a tuple.
  absl::StatusOr<std::vector<llvm::Value*>> EmitScalarComputation(
      const HloComputation& computation, absl::Span<llvm::Value* const> args);

  // ---- Types and scalar helpers (elemental_scalar_ops.cc).
  // The value representation of `type`; Unimplemented for unsupported types.
  absl::StatusOr<llvm::Type*> ValueType(PrimitiveType type);
  // The LLVM type of a tuple- or array-shaped value (structs for tuples).
  absl::StatusOr<llvm::Type*> ShapeValueType(const Shape& shape);
  // f16/bf16 bits -> float; other types unchanged.
  llvm::Value* ToCompute(llvm::Value* value, PrimitiveType type);
  // float -> f16/bf16 bits with round to nearest even; other types unchanged.
  llvm::Value* FromCompute(llvm::Value* value, PrimitiveType type);
  // A constant of `type` from a double or integer (value representation).
  absl::StatusOr<llvm::Value*> ConstantOf(PrimitiveType type, double value);
  // Element `index` of a literal as a constant in value representation.
  absl::StatusOr<llvm::Value*> LiteralElement(const Literal& literal, int64_t index);

  absl::StatusOr<llvm::Value*> EmitUnaryOp(const HloInstruction& hlo, llvm::Value* operand);
  absl::StatusOr<llvm::Value*> EmitBinaryOp(const HloInstruction& hlo, llvm::Value* lhs,
                                            llvm::Value* rhs);
  absl::StatusOr<llvm::Value*> EmitCompare(ComparisonDirection direction, ComparisonType type,
                                           PrimitiveType operand_type, llvm::Value* lhs,
                                           llvm::Value* rhs);
  absl::StatusOr<llvm::Value*> EmitConvert(PrimitiveType from, PrimitiveType to,
                                           llvm::Value* value);
  absl::StatusOr<llvm::Value*> EmitBitcastConvert(PrimitiveType from, PrimitiveType to,
                                                  llvm::Value* value);
  // stochastic-convert of `value` (a float of `from`) to the signed integer
  // type `to` with the random word `random` (an unsigned integer as wide as
  // `from`), by hlo/evaluator/stochastic_convert.cc's rule.
  absl::StatusOr<llvm::Value*> EmitStochasticConvert(PrimitiveType from, PrimitiveType to,
                                                     llvm::Value* value, llvm::Value* random);
  absl::StatusOr<llvm::Value*> EmitClamp(PrimitiveType type, llvm::Value* lo, llvm::Value* x,
                                         llvm::Value* hi);
  absl::StatusOr<llvm::Value*> EmitReducePrecision(PrimitiveType type, llvm::Value* x,
                                                   int exponent_bits, int mantissa_bits);
  // maximum/minimum with the interpreter's rules (NaN first, ties keep lhs).
  llvm::Value* EmitMinMax(PrimitiveType type, bool is_max, llvm::Value* lhs, llvm::Value* rhs);

  // Whether `reduce` sums one floating-point input with an add reducer: such
  // sums accumulate in double, in row-major order of the reduced indices,
  // and round once at the end, as the interpreter computes them.
  static bool SumsInDouble(const HloInstruction& reduce);
  // A value of `type` as the double a sum accumulates.
  llvm::Value* WidenForSum(llvm::Value* value, PrimitiveType type);
  // A double sum rounded to `type` (through float for f16/bf16/f32).
  llvm::Value* NarrowSum(llvm::Value* sum, PrimitiveType type);

  // ---- Control flow and memory helpers (elemental_ir_emitter.cc).
  // A counted loop [begin, end) of i64; `body` runs with the builder inside
  // the loop; afterwards the builder is at the loop exit. Opens a generator
  // cache scope for the body.
  // With `vectorize`, the loop carries metadata asking LLVM to vectorize it
  // rather than unroll it first (for inner loops over independent lanes);
  // `vector_width` > 0 also fixes the vector width (elements) and
  // `interleave` > 0 the number of vectors in flight, where LLVM's cost
  // model would pick too few (reductions over converted narrow floats).
  absl::Status EmitLoop(absl::string_view name, llvm::Value* begin, llvm::Value* end,
                        const std::function<absl::Status(llvm::Value*)>& body,
                        bool vectorize = false, int vector_width = 0, int interleave = 0);
  // Nested loops over [0, sizes[i]) in row-major order; `vector_width` > 0
  // asks LLVM to vectorize the innermost loop as EmitLoop describes.
  absl::Status EmitLoopNest(absl::string_view name, absl::Span<const int64_t> sizes,
                            const std::function<absl::Status(const std::vector<llvm::Value*>&)>& body,
                            int vector_width = 0, int interleave = 0);
  // if (condition) then_value else else_value, with each side emitted only on
  // its own path (a cache scope per side). Both callbacks return values of
  // the same type.
  absl::StatusOr<llvm::Value*> EmitIfThenElse(
      llvm::Value* condition, const std::function<absl::StatusOr<llvm::Value*>()>& then_fn,
      const std::function<absl::StatusOr<llvm::Value*>()>& else_fn);
  // if (condition) { then_fn(); } with a cache scope for the branch.
  absl::Status EmitIf(llvm::Value* condition, const std::function<absl::Status()>& then_fn);
  // An alloca in the function's entry block (promotable to registers).
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, absl::string_view name,
                                llvm::Value* count = nullptr);

  // Index arithmetic.
  llvm::Value* Int64(int64_t value);
  // Row-major linear index of `index` in an array of `dims` (uses index.linear
  // when set).
  absl::StatusOr<llvm::Value*> LinearIndex(absl::Span<const int64_t> dims, const IrIndex& index);
  // The index of row-major element `linear` in an array of `dims`.
  IrIndex Delinearize(llvm::Value* linear, absl::Span<const int64_t> dims);
  // Loads/stores element `index` of a dense row-major array at `base`.
  absl::StatusOr<llvm::Value*> EmitArrayLoad(llvm::Value* base, const Shape& shape,
                                             const IrIndex& index);
  absl::Status EmitArrayStore(llvm::Value* base, const Shape& shape, const IrIndex& index,
                              llvm::Value* value);

  // ---- Generator memoization. A generator wrapped by Memoize returns the
  // value it already emitted for the same index Values, as long as that value
  // dominates the insertion point: entries live in the scope (loop body, if
  // branch) that created them and die with it.
  ElementGenerator Memoize(const HloInstruction* hlo, ElementGenerator generator);
  void PushCacheScope();
  void PopCacheScope();

 private:
  // Data movement and index-only ops (elemental_ir_emitter.cc).
  absl::StatusOr<ElementGenerator> MakeWidthChangingBitcastGenerator(
      const HloInstruction& hlo, std::vector<ElementGenerator> operands);
  absl::StatusOr<ElementGenerator> MakeIndexingGenerator(const HloInstruction& hlo,
                                                         std::vector<ElementGenerator> operands);
  // A bitcast whose layouts move elements (a transpose in disguise).
  ElementGenerator MakeLayoutBitcastGenerator(const HloInstruction& hlo,
                                              ElementGenerator operand);
  // Ops with inner loops (elemental_contractions.cc).
  absl::StatusOr<ElementGenerator> MakeReduceGenerator(const HloInstruction& hlo,
                                                       std::vector<ElementGenerator> operands);
  absl::StatusOr<ElementGenerator> MakeReduceWindowGenerator(
      const HloInstruction& hlo, std::vector<ElementGenerator> operands);
  // acc += convert(lhs(li)) * convert(rhs(ri)) in `acc_type` (or/and for
  // pred): the inner step shared by dot and convolution.
  absl::Status EmitMultiplyAccumulate(const ElementGenerator& lhs, const IrIndex& li,
                                      PrimitiveType lhs_type, const ElementGenerator& rhs,
                                      const IrIndex& ri, PrimitiveType rhs_type,
                                      PrimitiveType acc_type, llvm::Type* acc_llvm,
                                      llvm::Value* acc);
  absl::StatusOr<ElementGenerator> MakeDotGenerator(const HloInstruction& hlo,
                                                    std::vector<ElementGenerator> operands);
  absl::StatusOr<ElementGenerator> MakeConvolutionGenerator(
      const HloInstruction& hlo, std::vector<ElementGenerator> operands);
  absl::StatusOr<ElementGenerator> MakeGatherGenerator(const HloInstruction& hlo,
                                                       std::vector<ElementGenerator> operands);
  // Reads an index scalar (any integer type) as i64, sign- or zero-extended.
  absl::StatusOr<llvm::Value*> LoadIndexScalar(const ElementGenerator& generator,
                                               PrimitiveType type, const IrIndex& index);
  // Complex arithmetic (elemental_complex_ops.cc): `hlo`'s operand is
  // complex (or, for kComplex, the real parts).
  absl::StatusOr<llvm::Value*> EmitComplexUnaryOp(const HloInstruction& hlo, llvm::Value* v);
  absl::StatusOr<llvm::Value*> EmitComplexBinaryOp(const HloInstruction& hlo, llvm::Value* lhs,
                                                   llvm::Value* rhs);
  absl::StatusOr<llvm::Value*> EmitComplexCompare(ComparisonDirection direction,
                                                  llvm::Value* lhs, llvm::Value* rhs);
  // convert when `from` or `to` is complex, as the interpreter defines it:
  // a real value gets a zero imaginary part, complex -> real keeps the real
  // part, complex -> pred tests both parts for zero.
  absl::StatusOr<llvm::Value*> EmitComplexConvert(PrimitiveType from, PrimitiveType to,
                                                  llvm::Value* v);
  // convert when `from` or `to` is an f8/f4 kind (elemental_narrow_floats.cc).
  absl::StatusOr<llvm::Value*> EmitNarrowFloatConvert(PrimitiveType from, PrimitiveType to,
                                                      llvm::Value* v);
  // acc + x * y on complex values (dot and convolution).
  llvm::Value* ComplexMultiplyAdd(llvm::Value* acc, llvm::Value* x, llvm::Value* y);
  // Math helpers (elemental_scalar_ops.cc).
  absl::StatusOr<llvm::Value*> CallMath(MathFunction function,
                                        absl::Span<llvm::Value* const> args);
  llvm::Value* IntPower(llvm::Value* base, llvm::Value* exponent, bool is_signed);

  struct CacheKey {
    const HloInstruction* hlo;
    std::vector<llvm::Value*> dims;
    bool operator==(const CacheKey& o) const { return hlo == o.hlo && dims == o.dims; }
    template <typename H>
    friend H AbslHashValue(H h, const CacheKey& k) {
      return H::combine(std::move(h), k.hlo, k.dims);
    }
  };

  llvm::IRBuilder<>* b_;
  llvm::Module* module_;
  const MathLowering* math_;
  std::vector<absl::flat_hash_map<CacheKey, llvm::Value*>> cache_scopes_ =
      std::vector<absl::flat_hash_map<CacheKey, llvm::Value*>>(1);
};

}  // namespace codegen
}  // namespace hloc

#endif  // HLOC_BACKEND_LLVM_ELEMENTAL_IR_EMITTER_H_
