// GELU with the tanh approximation, applied in place to a matmul's f32 result
// after oneDNN wrote it: oneDNN 2.6's gelu_tanh post-op on AVX2 costs more
// than the rest of the epilogue (512x1024x256, one thread, best of 25: 3.35 ms
// matmul, 3.48 ms with bias, 5.71 ms with bias and gelu_tanh post-ops), while
// this pass over the block it just wrote took about 2% of large_mlp's perf
// samples (roughly 0.2 ms per 256x1024 layer against the post-op's 1.4 ms).
#ifndef HLOC_BACKEND_HOST_GELU_EPILOGUE_H_
#define HLOC_BACKEND_HOST_GELU_EPILOGUE_H_

#include <cstdint>

namespace hloc {
namespace host {

// data[i] = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), computed
// as x / (1 + exp(-2 * sqrt(2/pi) * (x + 0.044715 * x^3))) (the same value:
// 0.5 * (1 + tanh(u)) is the logistic function of 2u), with AVX2+FMA when the
// CPU has them. Relative error against the formula in long double: within
// 8 float ulps times max(1, |2u|) (u's rounding to float, amplified by exp),
// or 1e-30 absolute where GELU has gone to zero (gelu_epilogue_test).
void GeluTanhInPlace(float* data, int64_t count);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_GELU_EPILOGUE_H_
