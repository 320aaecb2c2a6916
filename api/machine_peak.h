// This machine's measured peak memory bandwidth and FLOP rate, the yardstick
// of profiles (profile.h). Measured once with a small calibration and cached:
//   bandwidth: a STREAM-style triad a[i] = b[i] + s * c[i] over three 32 MiB
//     f32 arrays split over `threads` threads (runtime::ThreadPool), 12 bytes
//     per element counted (no write-allocate), best of 5 after a warm-up;
//   FLOP/s: oneDNN's dnnl_sgemm on 1024x1024x1024 f32 (2 * 1024^3 FLOPs),
//     with oneDNN's own (OpenMP) threads, best of 3 after a warm-up.
// The result is kept in $HLOC_CACHE_DIR/machine_peak.txt (else
// ~/.cache/hloc/machine_peak.txt), one line per CPU model and thread count;
// HLOC_MACHINE_PEAK="GBPS,GFLOPS" overrides it (tests, other machines);
// HLOC_MACHINE_PEAK=measure measures again and replaces the cache file. A
// loaded machine measures low: measure when it is idle.
#ifndef HLOC_API_MACHINE_PEAK_H_
#define HLOC_API_MACHINE_PEAK_H_

#include <string>

namespace hloc {
namespace api {

struct MachinePeak {
  double bandwidth_gbps = 0;
  double gflops = 0;
  int threads = 0;
  std::string how;  // "measured now", "cached in PATH", "HLOC_MACHINE_PEAK"
};

// Measures (or reads the cache for) `threads` threads; 0: every core.
// Never fails: an unusable cache is measured again, an unwritable one skipped.
MachinePeak MeasureMachinePeak(int threads = 0);

}  // namespace api
}  // namespace hloc

#endif  // HLOC_API_MACHINE_PEAK_H_
