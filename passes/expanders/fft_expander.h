// FftExpander: XLA's fft (FFT, IFFT, RFFT, IRFFT over the last one to three
// dimensions, c64/c128 and f32/f64) as complex matrix products and
// elementwise math, so the GPU backend compiles it instead of calling the
// interpreter. (The host keeps fft for its own routine, backend/host/
// fft_library.h; ExpanderOptions::expand_fft.)
//
// Along one dimension of length n the transform is a product with the n x n
// matrix W[j][k] = exp(s 2 pi i (j k mod n) / n), s = -1 forward and +1
// inverse; its angles come from iota in s64 (j k mod n exact) and cos/sin in
// f64, then the data's precision. Where n factors as n1 n2 (n1 the largest
// factor up to sqrt(n)) and n > 8, Cooley-Tukey's four steps instead:
// viewed as [n1, n2] (j = n2 j1 + j2), a length-n1 transform along j1,
// twiddles exp(s 2 pi i k1 j2 / n), a length-n2 transform along j2, and
// k = k1 + n1 k2 read back by a transpose; each length recurses. A length-n
// transform then costs about n times the sum of n's prime factors per
// element instead of n^2. (Small products win: the backends' complex dots
// are plain loops, and on the host, where this was measured, 8 beat 4, 16
// and 64 on lengths 1024 to 4096; bench/RESULTS.md.)
//
//   FFT    the transform along each of the fft_length dimensions
//   IFFT   the inverse transform, scaled by 1 / (product of the lengths)
//   RFFT   the real input as complex, FFT, the first n/2 + 1 elements of
//          the last dimension
//   IRFFT  inverse transforms along the leading fft dimensions; along the
//          last, the full spectrum from Hermitian symmetry (X[n - k] =
//          conj X[k], k = 1 .. n - n/2 - 1), the inverse transform, the
//          real part (so the imaginary parts of X[0] and X[n/2] count for
//          nothing, as in XLA), scaled
#ifndef HLOC_PASSES_EXPANDERS_FFT_EXPANDER_H_
#define HLOC_PASSES_EXPANDERS_FFT_EXPANDER_H_

#include "passes/pass.h"

namespace hloc {

class FftExpander : public HloPass {
 public:
  absl::string_view name() const override { return "fft-expander"; }
  absl::StatusOr<bool> Run(HloModule& module) override;
};

}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_FFT_EXPANDER_H_
