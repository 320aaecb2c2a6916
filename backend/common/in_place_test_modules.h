// HLO modules exercising updates in place, loop-state sharing and
// input_output_alias (backend/common/program_builder.h, "In place"), shared
// by every target's tests: backend/host/host_inplace_test.cc runs them on
// the host, backend/gpu/gpu_inplace_test.cc plans them for the GPU (and runs
// them where there is one).
#ifndef HLOC_BACKEND_COMMON_IN_PLACE_TEST_MODULES_H_
#define HLOC_BACKEND_COMMON_IN_PLACE_TEST_MODULES_H_

namespace hloc {
namespace in_place_testing {

// A scan: each iteration adds 2 to a row and stores it as row i of a
// [64,128] array carried by the loop.
extern const char kScanRows[];
// As kScanRows, but the body also passes the old array on as a fourth
// state leaf: the update must not overwrite it.
extern const char kScanKeepsOld[];
// A scan storing its row into three stacked [64,128] arrays each step (as
// JAX's scan stores its residuals): three updates in place, none merged
// into a kernel that rewrites the arrays.
extern const char kScanStacksThree[];
// A loop whose body computes state leaf 2 from leaf 1 without reading leaf
// 2 (y = 2x, x = x + 1): y's new value may be computed in y's own buffer;
// leaf 1's only where x + 1 is computed after 2x (that kernel reads the old
// x only where it writes the new one, but 2x reads it too).
extern const char kLoopResultNotReadingState[];
// A loop whose body adds to two accumulators and negates a third leaf in
// one multi-output fusion, each read only at its own output's index: all
// three may be computed in their state leaves' buffers.
extern const char kAccumulatorsInOneFusion[];
// A dynamic-update-slice of an entry parameter: copied, never overwritten.
extern const char kDusParameter[];
// t is read only by the update: the update may write t's buffer.
extern const char kDusDeadTemp[];
// As kDusDeadTemp, but t is also returned, so it keeps its old value.
extern const char kDusLiveTemp[];
// The update is a slice of the target itself: the fusion reads the target
// at other indices, so its kernel must write everything.
extern const char kDusReadsTarget[];
// A fusion computing its update from other parameters: its kernel writes
// the update's elements only, and the dead operand is reused.
extern const char kDusFused[];
// Three fusions each adding into an 8-row window of the array the previous
// one wrote (JAX's slice accumulation, buf.at[i:i+8].add(u)): each reads the
// array only in its window, so all three update it in place.
extern const char kDusAccumulatesWindow[];
// input_output_alias: the updated output may live in parameter 0.
extern const char kDonatedUpdate[];
// The scan's array starts as the aliased parameter: the loop state, the
// in-place update and the output may all use its memory.
extern const char kDonatedScan[];
// reverse reads the parameter while writing the output: they cannot share.
extern const char kDonatedReverse[];
// input_output_alias of an elementwise result: the kernel writing it reads
// the parameter only at the indices it writes, so they may share.
extern const char kDonatedElementwise[];
// The same with an explicit fusion (select, compare, negate, convert).
extern const char kDonatedElementwiseFusion[];
// A fusion reading the parameter at the output's index and, through a
// reverse, at others: they cannot share.
extern const char kDonatedFusionReadsElsewhere[];
// An alias naming a parameter the entry does not have.
extern const char kBadAlias[];

}  // namespace in_place_testing
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_IN_PLACE_TEST_MODULES_H_
