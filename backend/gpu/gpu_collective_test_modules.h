// Modules with collectives for the GPU tests, written for any number of
// devices N (replica_count=N): gpu_collective_plan_test compiles them
// without a GPU, gpu_collective_device_test runs them on every GPU there is
// and compares with the multi-device interpreter. Each device's one
// argument is f32[2,6N] holding 1000 d + i at flat position i, so sums and
// products of a few devices stay exact integers in f32.
#ifndef HLOC_BACKEND_GPU_GPU_COLLECTIVE_TEST_MODULES_H_
#define HLOC_BACKEND_GPU_GPU_COLLECTIVE_TEST_MODULES_H_

#include <string>
#include <vector>

#include "hlo/literal.h"

namespace hloc {
namespace gpu {
namespace test_modules {

struct CollectiveCase {
  std::string name;  // "all-reduce", ...
  std::string text;  // A module on N devices.
};

// all-reduce (sum f32, max s32, pred and, start/done), all-gather (and
// start/done) and reduce-scatter along the outer and the inner dimension,
// all-to-all, collective-permute (a ring, one that leaves devices with
// zeros, start/done), ragged-all-to-all (offsets and sizes computed from
// replica-id), collective-broadcast and replica-id, each with elementwise
// kernels around it.
std::vector<CollectiveCase> CollectiveCases(int devices);

// Device `device`'s argument for CollectiveCases(devices).
Literal CollectiveArgument(int device, int devices);

}  // namespace test_modules
}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_COLLECTIVE_TEST_MODULES_H_
