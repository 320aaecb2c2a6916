// The s8 x s8 -> s32 GEMM for AVX2 (see GemmS8 in gemm_kernel.h), compiled
// with -mavx2 and called only when the CPU has it (gemm_kernel.cc).
//
// vpmaddwd multiplies sixteen pairs of s16 and adds each pair into one s32
// lane: with s8 values widened to s16, a lane receives
// A(i,2q)*B(2q,j) + A(i,2q+1)*B(2q+1,j) exactly (|each| <= 2^14), so the
// operands are packed as pairs of consecutive k:
//
//   B panel (NR = 16 columns): for pair q, two vectors of 8 columns, each
//       32-bit lane = (B(2q,j), B(2q+1,j)) as two s16;
//   A panel (MR = 4 rows): each row's pairs contiguous, one 32-bit word
//       (A(i,2q), A(i,2q+1)) per pair, broadcast to all lanes;
//
// and the micro-kernel keeps a 4 x 16 tile of s32 sums in 8 registers (with
// 6 x 16, the 12 sums, two B vectors, the broadcast and vpmaddwd's product
// need all 16 registers, and GCC spilled sums to the stack in the loop).
// An odd k is padded with a zero pair half. Blocking: KC pairs of k per
// packed block (C accumulates across blocks); for each, up to MA rows of A
// packed once, then NC columns of B at a time, the tiles walked MC rows of
// A at a time so that those stay in L2 while a B panel sits in L1. Sums
// wrap as s32 (vpaddd).
//
// Packing is vectorized for unit-stride rows (the usual row-major A and
// B): with A packed per column block of B and element by element, it took
// ~18% of a [512,1024] x [1024,1024] product.
#include <immintrin.h>

#include <cstdlib>
#include <cstring>

#include "hlo/evaluator/gemm_kernel.h"

namespace hloc {
namespace eval {
namespace gemm_avx2 {
namespace {

constexpr int64_t kMR = 4;
constexpr int64_t kNR = 16;
constexpr int64_t kKCPairs = 256;  // 512 values of k per block.
constexpr int64_t kMC = 64;        // Multiple of kMR.
constexpr int64_t kNC = 256;       // Multiple of kNR.
constexpr int64_t kMA = 1024;      // Multiple of kMC: up to 1 MB of packed A.

inline int64_t MinI(int64_t a, int64_t b) { return a < b ? a : b; }

inline uint32_t Pair(int8_t lo, int8_t hi) {
  return static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(lo))) |
         (static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(hi))) << 16);
}

// Packs B(k0 : k0+kc, j0 : j0+nc) into panels of kNR columns (zero past nc
// and past k): panel p, pair q, column jj at pack[(p*pairs + q)*kNR + jj].
// With unit column stride, a full panel's two rows of k interleave with one
// byte unpack and widen to s16 pairs with one vpmovsxbw per 8 columns.
void PackB(const GemmS8Args& g, int64_t k0, int64_t kc, int64_t j0, int64_t nc, uint32_t* pack) {
  const int64_t pairs = (kc + 1) / 2;
  const int64_t panels = (nc + kNR - 1) / kNR;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t width = MinI(kNR, nc - p * kNR);
    uint32_t* dst = pack + p * pairs * kNR;
    for (int64_t q = 0; q < pairs; ++q) {
      const int64_t k = k0 + 2 * q;
      const bool second = 2 * q + 1 < kc;
      const int8_t* row0 = g.b + k * g.b_rs + (j0 + p * kNR) * g.b_cs;
      const int8_t* row1 = row0 + g.b_rs;
      uint32_t* out = dst + q * kNR;
      if (g.b_cs == 1 && width == kNR && second) {
        const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row0));
        const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row1));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                            _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(r0, r1)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8),
                            _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(r0, r1)));
        continue;
      }
      int64_t jj = 0;
      for (; jj < width; ++jj) {
        out[jj] = Pair(row0[jj * g.b_cs], second ? row1[jj * g.b_cs] : 0);
      }
      for (; jj < kNR; ++jj) out[jj] = 0;
    }
  }
}

// Packs A(i0 : i0+mc, k0 : k0+kc) into panels of kMR rows (zero past mc and
// past k), each row's pairs contiguous: panel p, row ii, pair q at
// pack[(p*kMR + ii)*pairs + q]. With unit column stride, 16 values of k are
// one load and one vpmovsxbw (consecutive k already form the pairs).
void PackA(const GemmS8Args& g, int64_t i0, int64_t mc, int64_t k0, int64_t kc, uint32_t* pack) {
  const int64_t pairs = (kc + 1) / 2;
  const int64_t panels = (mc + kMR - 1) / kMR;
  for (int64_t r = 0; r < panels * kMR; ++r) {
    uint32_t* dst = pack + r * pairs;
    if (r >= mc) {
      std::memset(dst, 0, static_cast<size_t>(pairs) * sizeof(uint32_t));
      continue;
    }
    const int8_t* row = g.a + (i0 + r) * g.a_rs + k0 * g.a_cs;
    int64_t q = 0;
    if (g.a_cs == 1) {
      for (; 2 * q + 16 <= kc; q += 8) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * q));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + q), _mm256_cvtepi8_epi16(v));
      }
    }
    for (; q < pairs; ++q) {
      const bool second = 2 * q + 1 < kc;
      dst[q] = Pair(row[2 * q * g.a_cs], second ? row[(2 * q + 1) * g.a_cs] : static_cast<int8_t>(0));
    }
  }
}

// Adds (or stores, when !accumulate) a kMR x kNR tile of sums into C
// (leading dimension ldc, `rows` x `cols` of it valid). Unsigned addition
// on the partial tile: wraps as s32 does, as vpaddd does on the full one.
inline void StoreTile(const __m256i (&sums)[kMR][2], int32_t* c, int64_t ldc, int64_t rows,
                      int64_t cols, bool accumulate) {
  if (rows == kMR && cols == kNR) {
    for (int i = 0; i < kMR; ++i) {
      __m256i* out = reinterpret_cast<__m256i*>(c + i * ldc);
      __m256i lo = sums[i][0], hi = sums[i][1];
      if (accumulate) {
        lo = _mm256_add_epi32(lo, _mm256_loadu_si256(out));
        hi = _mm256_add_epi32(hi, _mm256_loadu_si256(out + 1));
      }
      _mm256_storeu_si256(out, lo);
      _mm256_storeu_si256(out + 1, hi);
    }
    return;
  }
  alignas(32) int32_t tile[kMR][kNR];
  for (int i = 0; i < kMR; ++i) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile[i]), sums[i][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile[i] + 8), sums[i][1]);
  }
  for (int64_t i = 0; i < rows; ++i) {
    int32_t* out = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j) {
      const uint32_t old = accumulate ? static_cast<uint32_t>(out[j]) : 0u;
      out[j] = static_cast<int32_t>(old + static_cast<uint32_t>(tile[i][j]));
    }
  }
}

// c (kMR x kNR tile) = (accumulate ? c : 0) + A panel * B panel over `pairs`
// pairs of k. The sums are named variables, not an array, so that they stay
// in registers through the k loop.
void MicroKernel(int64_t pairs, const uint32_t* a, const uint32_t* b, int32_t* c, int64_t ldc,
                 int64_t rows, int64_t cols, bool accumulate) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
          c30 = c00, c31 = c00;
  const uint32_t* a0 = a;
  const uint32_t* a1 = a + pairs;
  const uint32_t* a2 = a + 2 * pairs;
  const uint32_t* a3 = a + 3 * pairs;
  for (int64_t q = 0; q < pairs; ++q) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 8));
    __m256i ai = _mm256_set1_epi32(static_cast<int>(a0[q]));
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(ai, b0));
    c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(ai, b1));
    ai = _mm256_set1_epi32(static_cast<int>(a1[q]));
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(ai, b0));
    c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(ai, b1));
    ai = _mm256_set1_epi32(static_cast<int>(a2[q]));
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(ai, b0));
    c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(ai, b1));
    ai = _mm256_set1_epi32(static_cast<int>(a3[q]));
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(ai, b0));
    c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(ai, b1));
    b += kNR;
  }
  const __m256i sums[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  StoreTile(sums, c, ldc, rows, cols, accumulate);
}

// Scratch for the packed blocks, aligned, freed with the thread.
struct Scratch {
  ~Scratch() { std::free(data); }
  uint32_t* Get(size_t words) {
    if (words > size) {
      std::free(data);
      size = words;
      data = static_cast<uint32_t*>(std::aligned_alloc(64, (words * 4 + 63) / 64 * 64));
    }
    return data;
  }
  uint32_t* data = nullptr;
  size_t size = 0;
};

}  // namespace

void GemmS8S32(const GemmS8Args& g) {
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k <= 0) {
    for (int64_t i = 0; i < g.m; ++i) std::memset(g.c + i * g.ldc, 0, g.n * sizeof(int32_t));
    return;
  }
  thread_local Scratch a_scratch, b_scratch;
  const int64_t kc_max = MinI(g.k, 2 * kKCPairs);
  const int64_t pairs_max = (kc_max + 1) / 2;
  // Rows of A packed at once: all of them up to kMA, so that A is packed
  // once per k block rather than once per column block of B.
  const int64_t ma = MinI(g.m, kMA);
  uint32_t* b_pack =
      b_scratch.Get(static_cast<size_t>(pairs_max * ((MinI(g.n, kNC) + kNR - 1) / kNR) * kNR));
  uint32_t* a_pack = a_scratch.Get(static_cast<size_t>(pairs_max * ((ma + kMR - 1) / kMR) * kMR));
  if (a_pack == nullptr || b_pack == nullptr) std::abort();  // Out of memory for a few MB.
  for (int64_t k0 = 0; k0 < g.k; k0 += 2 * kKCPairs) {
    const int64_t kc = MinI(2 * kKCPairs, g.k - k0);
    const int64_t pairs = (kc + 1) / 2;
    for (int64_t ia = 0; ia < g.m; ia += kMA) {
      const int64_t mac = MinI(kMA, g.m - ia);
      PackA(g, ia, mac, k0, kc, a_pack);
      for (int64_t j0 = 0; j0 < g.n; j0 += kNC) {
        const int64_t nc = MinI(kNC, g.n - j0);
        PackB(g, k0, kc, j0, nc, b_pack);
        // A kMC-row slice of the packed A (kMC * pairs * 4 bytes) stays in
        // L2 while the B panels (kNR * pairs * 4 bytes each) pass through L1.
        for (int64_t i0 = 0; i0 < mac; i0 += kMC) {
          const int64_t mc = MinI(kMC, mac - i0);
          for (int64_t jp = 0; jp * kNR < nc; ++jp) {
            const uint32_t* b_panel = b_pack + jp * pairs * kNR;
            const int64_t cols = MinI(kNR, nc - jp * kNR);
            for (int64_t ip = 0; ip * kMR < mc; ++ip) {
              const int64_t rows = MinI(kMR, mc - ip * kMR);
              int32_t* c = g.c + (ia + i0 + ip * kMR) * g.ldc + j0 + jp * kNR;
              MicroKernel(pairs, a_pack + (i0 + ip * kMR) * pairs, b_panel, c, g.ldc, rows, cols,
                          k0 > 0);
            }
          }
        }
      }
    }
  }
}

}  // namespace gemm_avx2
}  // namespace eval
}  // namespace hloc
