// How many CPUs this process may run on: what a thread pool with "all
// cores" should size itself to. std::thread::hardware_concurrency() counts
// the machine's online CPUs, so under `taskset -c 0`, a cpuset-limited
// container or a CPU quota (docker --cpus=1) it still reports every core,
// and a pool of that size makes threads that can only take turns.
#ifndef HLOC_HLO_USABLE_CPUS_H_
#define HLOC_HLO_USABLE_CPUS_H_

namespace hloc {

// The CPUs in this thread's affinity mask, lowered to the cgroup's CPU
// quota (cgroup v2 cpu.max or v1 cpu.cfs_quota_us / cpu.cfs_period_us,
// rounded up) when one is set; at least 1. Computed on every call (the mask
// can change); cheap next to starting threads.
int UsableCpuCount();

}  // namespace hloc

#endif  // HLOC_HLO_USABLE_CPUS_H_
