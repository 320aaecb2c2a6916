// MachinePeak: the triad and sgemm calibration, and its cache (see machine_peak.h).
#include "api/machine_peak.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hlo/usable_cpus.h"
#include "oneapi/dnnl/dnnl.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace api {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double TriadGbps(runtime::ThreadPool& pool) {
  constexpr int64_t kN = int64_t{8} << 20;  // 32 MiB per array.
  std::unique_ptr<float[]> a(new float[kN]), b(new float[kN]), c(new float[kN]);
  pool.ParallelFor(kN, 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  double best = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    const double start = Now();
    pool.ParallelFor(kN, 1 << 16, [&](int64_t begin, int64_t end) {
      float* x = a.get();
      const float* y = b.get();
      const float* z = c.get();
      for (int64_t i = begin; i < end; ++i) x[i] = y[i] + 3.0f * z[i];
    });
    if (rep > 0) best = std::min(best, Now() - start);
  }
  return 12.0 * kN / best / 1e9;
}

double SgemmGflops() {
  constexpr int64_t kN = 1024;
  std::vector<float> a(kN * kN, 1.0f), b(kN * kN, 0.5f), c(kN * kN, 0.0f);
  double best = 1e30;
  for (int rep = 0; rep < 4; ++rep) {
    const double start = Now();
    if (dnnl_sgemm('N', 'N', kN, kN, kN, 1.0f, a.data(), kN, b.data(), kN, 0.0f, c.data(), kN) !=
        dnnl_success) {
      return 0;
    }
    if (rep > 0) best = std::min(best, Now() - start);
  }
  return 2.0 * kN * kN * kN / best / 1e9;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown cpu";
}

std::string CachePath() {
  if (const char* dir = std::getenv("HLOC_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return absl::StrCat(dir, "/machine_peak.txt");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.cache/hloc/machine_peak.txt");
  }
  return "";
}

// Cache lines: "GBPS GFLOPS THREADS CPU MODEL...".
bool ReadCache(const std::string& path, const std::string& key, int threads, MachinePeak* peak) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 3));
    int cached_threads = 0;
    if (parts.size() == 4 && parts[3] == key && absl::SimpleAtoi(parts[2], &cached_threads) &&
        cached_threads == threads && absl::SimpleAtod(parts[0], &peak->bandwidth_gbps) &&
        absl::SimpleAtod(parts[1], &peak->gflops) && peak->bandwidth_gbps > 0 &&
        peak->gflops > 0) {
      return true;
    }
  }
  return false;
}

void WriteCache(const std::string& path, const std::string& key, const MachinePeak& peak) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos) {
    // mkdir -p of the cache folder; failures show as a failed open below.
    std::string dir = path.substr(0, slash);
    for (size_t i = 1; i <= dir.size(); ++i) {
      if (i == dir.size() || dir[i] == '/') {
        std::string prefix = dir.substr(0, i);
        (void)::mkdir(prefix.c_str(), 0755);
      }
    }
  }
  std::ofstream out(path, std::ios::app);
  if (!out) return;
  out << peak.bandwidth_gbps << " " << peak.gflops << " " << peak.threads << " " << key << "\n";
}

MachinePeak Measure(int threads) {
  MachinePeak peak;
  runtime::ThreadPool pool(threads);
  peak.threads = pool.num_threads();
  if (const char* given = std::getenv("HLOC_MACHINE_PEAK");
      given != nullptr && *given != '\0' && std::string(given) != "measure") {
    std::vector<std::string> parts = absl::StrSplit(given, ',');
    if (parts.size() == 2 && absl::SimpleAtod(parts[0], &peak.bandwidth_gbps) &&
        absl::SimpleAtod(parts[1], &peak.gflops) && peak.bandwidth_gbps > 0 && peak.gflops > 0) {
      peak.how = "HLOC_MACHINE_PEAK";
      return peak;
    }
  }
  const std::string key = CpuModel();
  const std::string path = CachePath();
  const char* given = std::getenv("HLOC_MACHINE_PEAK");
  const bool remeasure = given != nullptr && std::string(given) == "measure";
  if (!path.empty() && !remeasure && ReadCache(path, key, peak.threads, &peak)) {
    peak.how = absl::StrCat("cached in ", path);
    return peak;
  }
  peak.bandwidth_gbps = TriadGbps(pool);
  peak.gflops = SgemmGflops();
  peak.how = "measured now";
  // Newest last: ReadCache takes the first match, so a re-measurement is
  // written to a fresh file.
  if (!path.empty() && peak.gflops > 0) {
    if (remeasure) std::remove(path.c_str());
    WriteCache(path, key, peak);
  }
  return peak;
}

}  // namespace

MachinePeak MeasureMachinePeak(int threads) {
  // Once per process and thread count: a calibration costs about a second.
  static std::mutex mu;
  static std::vector<MachinePeak>* known = new std::vector<MachinePeak>();
  const int resolved =
      threads > 0 ? threads : UsableCpuCount();
  std::lock_guard<std::mutex> lock(mu);
  for (const MachinePeak& peak : *known) {
    if (peak.threads == resolved) return peak;
  }
  MachinePeak peak = Measure(resolved);
  known->push_back(peak);
  return peak;
}

}  // namespace api
}  // namespace hloc
