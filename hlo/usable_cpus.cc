#include "hlo/usable_cpus.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace hloc {
namespace {

// ceil(quota / period) from a cgroup's files, or 0 when there is no quota.
int QuotaCpus() {
  {
    std::ifstream v2("/sys/fs/cgroup/cpu.max");
    std::string quota;
    long long period = 0;
    if (v2 >> quota >> period) {
      if (quota == "max" || period <= 0) return 0;
      const long long q = std::atoll(quota.c_str());
      return q > 0 ? static_cast<int>((q + period - 1) / period) : 0;
    }
  }
  std::ifstream quota_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  std::ifstream period_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  long long quota = -1, period = 0;
  if (quota_file >> quota && period_file >> period && quota > 0 && period > 0) {
    return static_cast<int>((quota + period - 1) / period);
  }
  return 0;
}

}  // namespace

int UsableCpuCount() {
  int cpus = 0;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) cpus = CPU_COUNT(&mask);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  const int quota = QuotaCpus();
  if (quota > 0) cpus = std::min(cpus, quota);
  return std::max(cpus, 1);
}

}  // namespace hloc
