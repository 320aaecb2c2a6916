// fft on the host: a library routine instead of FftExpander's matrix
// products (passes/expanders/fft_expander.h), which stream the whole array
// once per step. Lines along a transformed dimension are transformed in
// cache by a mixed-radix FFT (radix 4, then 2, 3 and any other prime factor,
// the last with an O(p) butterfly per output; a line with a prime factor
// above 64, above 1024 in the lanes, goes by Bluestein's algorithm instead:
// a cyclic convolution by power-of-two transforms of length >= 2n - 1):
//   - in groups of 16 (c64) or 8 (c128) lines, one line per lane of 64-byte
//     vectors, by Stockham stages (each reads one buffer and writes the
//     other, the result in order). Lines move into and out of the lanes by
//     transposing 16 x 16 (8 x 8) blocks; lines that lie side by side in the
//     buffers are read and written where they are; along a leading dimension
//     whose lines are neighbours (16 or 8 of them in a row), the lanes are
//     loaded straight from memory. Even-length RFFT/IRFFT untangle and pack
//     in the lanes too. The vector code is
//     compiled for AVX-512, AVX2 and SSE2 and picked by what the CPU has;
//     with no fused multiply-adds, every width gives the same bits;
//   - fewer lines than half a group: a line of 1024 or more that splits as
//     n1 x n2, both at least a group, as that matrix (four steps: its
//     columns in the lanes, twiddles, its rows in the lanes, a transpose);
//     shorter or unsplittable lines one at a time (recursive, scalar).
// Groups of lines are split over the thread pool. Twiddles are computed in
// double and stored in the data's precision.
//
//   FFT / IFFT  every fft dimension in place on a copy; IFFT scaled by
//               1 / (product of the lengths)
//   RFFT        each real row transformed (even n: as a complex row of n/2,
//               z[j] = x[2j] + i x[2j+1], then untangled; odd n: as a
//               complex row of n), its first n/2 + 1 kept; then the leading
//               fft dimensions
//   IRFFT       the leading fft dimensions inverted first; then each row
//               inverted (even n: packed into a complex row of n/2; odd n:
//               completed by Hermitian symmetry, X[n - k] = conj X[k], and
//               its real part kept; either way the imaginary parts of X[0]
//               and X[n/2] count for nothing, as in XLA), scaled
//
// c64/f32 compute in float, c128/f64 in double. Buffers are dense row-major,
// as every host buffer is.
#ifndef HLOC_BACKEND_HOST_FFT_LIBRARY_H_
#define HLOC_BACKEND_HOST_FFT_LIBRARY_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "hlo/instruction.h"
#include "runtime/thunk.h"

namespace hloc {
namespace host {

// The routine for an fft instruction (operand buffer, then result buffer),
// or nullopt for shapes or types it does not cover.
absl::StatusOr<std::optional<runtime::LibraryCallThunk::Function>> MakeFft(
    const HloInstruction& hlo);

// The vector code that routines made from now on use for groups of lines:
// "avx512", "avx2" or "baseline" (SSE2). By default, the widest the CPU has.
// Returns false, changing nothing, for a kind the CPU lacks or does not name.
// For tests, which compare the kinds.
bool SetFftVectorCodeForTesting(const std::string& kind);

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_FFT_LIBRARY_H_
