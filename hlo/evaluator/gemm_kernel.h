// Matrix multiply kernels for the evaluator's dot and convolution:
// C[m,n] (+)= sum_k A(i,k) * B(k,j) for float and double, with A and B given
// as strided views (element (i,k) of A at a[i*a_rs + k*a_cs]) so transposed
// operands need no copy. C is row-major with leading dimension ldc.
//
// The kernel source is compiled twice, for baseline x86-64 and for AVX2+FMA;
// Gemm() picks the variant the running CPU supports.
#ifndef HLOC_HLO_EVALUATOR_GEMM_KERNEL_H_
#define HLOC_HLO_EVALUATOR_GEMM_KERNEL_H_

#include <cstdint>

namespace hloc {
namespace eval {

template <typename T>
struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const T* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const T* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  T* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;  // C += A*B instead of C = A*B.
};

// Single-threaded; callers split rows (or batches) across threads.
void Gemm(const GemmArgs<float>& args);
void Gemm(const GemmArgs<double>& args);

// C[m,n] = sum_k A(i,k) * B(k,j) for s8 operands and an s32 result, exactly:
// every product is summed in 32-bit two's complement, so a sum past the s32
// range wraps as an s32 dot does. Strides as in GemmArgs; C is set, not
// accumulated.
struct GemmS8Args {
  int64_t m = 0, n = 0, k = 0;
  const int8_t* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const int8_t* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  int32_t* c = nullptr;
  int64_t ldc = 0;
};
void GemmS8(const GemmS8Args& args);
// Whether GemmS8 has its vector kernel on this CPU (AVX2: pairs of products
// with vpmaddwd, twice the multiply-adds per instruction of an f32 FMA);
// without it GemmS8 is a plain loop.
bool GemmS8IsVectorized();

// The per-ISA entry points behind Gemm (gemm_kernel_impl.inc).
namespace gemm_baseline {
void GemmF32(const GemmArgs<float>& args);
void GemmF64(const GemmArgs<double>& args);
}  // namespace gemm_baseline
namespace gemm_avx2 {
void GemmF32(const GemmArgs<float>& args);
void GemmF64(const GemmArgs<double>& args);
void GemmS8S32(const GemmS8Args& args);  // gemm_kernel_s8_avx2.cc
}  // namespace gemm_avx2

}  // namespace eval
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_GEMM_KERNEL_H_
