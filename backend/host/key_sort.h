// Order keys and sorting by them. LoadOrderKeys maps elements to unsigned
// integers that compare as the elements' total order (top-k ranks rows by
// them); a sort whose comparator orders by one operand's elements
// alone runs as a stable radix sort of those elements instead of a
// comparison sort that calls the compiled comparator O(n log n) times.
//
// The comparators this takes, as JAX and TensorFlow write them:
//   ROOT compare(K(p[2k]), K(p[2k+1])), direction=LT or GT
// (or the two sides swapped, which flips the direction), where K is either
// nothing or JAX's float canonicalization
//   select(x != x, NaN, select(x == 0, +0, x))
// (every NaN one value, -0 equal to +0), and the compare is a total order:
// integers and pred with their own order, floats only with
// type=TOTALORDER (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN). A float
// compare without TOTALORDER is not a strict weak order once NaNs appear,
// so those sorts keep the comparator.
//
// Each key becomes an unsigned integer of the element's width whose order is
// the comparator's (sign-magnitude floats and two's-complement integers
// mapped so that unsigned order agrees; all bits flipped for GT), and the
// row's indices are sorted by it with least-significant-digit radix passes
// of 8 bits, skipping a digit that every key shares (keys of up to 4 bytes
// travel in one 64-bit word with their index). LSD radix sort is
// stable, so ties keep their original order: the permutation is the one the
// interpreter's stable sort gives, bit for bit.
#ifndef HLOC_BACKEND_HOST_KEY_SORT_H_
#define HLOC_BACKEND_HOST_KEY_SORT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/computation.h"
#include "hlo/primitive_type.h"

namespace hloc {
namespace host {

struct KeyOrder {
  int64_t operand = 0;        // Which sorted operand holds the keys.
  PrimitiveType type = xla::F32;
  bool descending = false;    // GT
  bool canonical = false;     // JAX's float canonicalization (see above).
};

// Whether elements of `type` have order keys (floats f16-f64, integers of
// 8-64 bits, pred).
bool HasOrderKeys(PrimitiveType type);

// keys[j] = the unsigned order key of the element at
// data + (base + j stride) * width, j < n, under `order` (its type must have
// order keys): keys compare as the comparator orders the elements.
void LoadOrderKeys(const KeyOrder& order, const uint8_t* data, int64_t base, int64_t stride,
                   int64_t n, uint64_t* keys);

// The key order of `comparator` (a sort's to_apply over `operands` sorted
// operands), or nullopt when it is not of the form above.
std::optional<KeyOrder> ClassifySortComparator(const HloComputation& comparator,
                                               int64_t operands);

// Sorts rows; one per thread (it keeps its buffers between rows).
class KeySorter {
 public:
  explicit KeySorter(KeyOrder order) : order_(order) {}
  // perm[0, n) = the stable order of the n keys at
  // data + (base + j stride) * width, j < n (data: the key operand).
  void SortRow(const uint8_t* data, int64_t base, int64_t stride, int64_t n,
               std::vector<int64_t>* perm);
  // For a sort of the key operand alone, with keys of at most 4 bytes: the
  // row's elements sorted, written to out at the same positions, each
  // carried next to its key through the passes (no gather afterwards).
  // False (nothing written) for other widths.
  bool SortRowValues(const uint8_t* data, uint8_t* out, int64_t base, int64_t stride, int64_t n);

 private:
  // Stable LSD passes over `digits` bytes of the keys from `first_bit` up,
  // moving index[] along when given (into index's own array at the end);
  // returns the array (keys or keys_out) that holds the sorted keys.
  static uint64_t* RadixPasses(uint64_t* keys, uint64_t* keys_out, int64_t* index,
                               int64_t* index_out, int64_t n, int first_bit, int digits);

  KeyOrder order_;
  std::vector<uint64_t> keys_, keys_scratch_;
  std::vector<int64_t> index_scratch_;
};

}  // namespace host
}  // namespace hloc

#endif  // HLOC_BACKEND_HOST_KEY_SORT_H_
