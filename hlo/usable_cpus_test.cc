// UsableCpuCount follows the affinity mask: a thread pinned to one CPU sees
// one, whatever the machine has.
#include "hlo/usable_cpus.h"

#include <sched.h>

#include <thread>

#include "gtest/gtest.h"

namespace hloc {
namespace {

TEST(UsableCpuCount, AtLeastOneAndAtMostTheMachine) {
  const int cpus = UsableCpuCount();
  EXPECT_GE(cpus, 1);
  const unsigned machine = std::thread::hardware_concurrency();
  if (machine > 0) EXPECT_LE(cpus, static_cast<int>(machine));
}

TEST(UsableCpuCount, FollowsTheAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int first = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) {
    if (CPU_ISSET(cpu, &saved)) first = cpu;
  }
  ASSERT_GE(first, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const int pinned = UsableCpuCount();
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(pinned, 1);
}

}  // namespace
}  // namespace hloc
