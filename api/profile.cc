// Profiles (see profile.h): thunk timings joined with the HLO they compute,
// costs per instruction, the terminal table and the JSON form.
#include "api/profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/opcode.h"

namespace hloc {
namespace api {
namespace {

double Elements(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  double n = 1;
  for (int64_t d : shape.dimensions()) n *= static_cast<double>(d);
  return n;
}

int64_t Bytes(const Shape& shape) { return shape.CheckedByteSize().value_or(0); }

double ComputationFlops(const HloComputation* computation) {
  if (computation == nullptr) return 0;
  double flops = 0;
  computation->ForEachInstruction(
      [&](const HloInstruction* instruction) { flops += InstructionFlops(*instruction); });
  return flops;
}

// "%fusion.3" from "onednn:hloc.gemm %fusion.3" or "%fusion.3"; "" when none.
std::string InstructionNameOf(const std::string& thunk) {
  const size_t percent = thunk.rfind('%');
  if (percent == std::string::npos || thunk.rfind("copy ", 0) == 0) return "";
  const size_t end = thunk.find(' ', percent);
  return thunk.substr(percent + 1, end == std::string::npos ? std::string::npos : end - percent - 1);
}

std::string OpOf(const HloInstruction& h) {
  std::string op(HloOpcodeName(h.opcode()));
  if (h.opcode() == HloOpcode::kFusion && h.fused_computation() != nullptr &&
      h.fused_computation()->root() != nullptr) {
    absl::StrAppend(&op, ":", HloOpcodeName(h.fused_computation()->root()->opcode()));
  }
  if (const std::string* composite = h.FindFrontendAttribute("composite.name")) {
    absl::StrAppend(&op, " ", *composite);
  }
  return op;
}

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double x) {
  if (!std::isfinite(x)) return "0";
  return absl::StrFormat("%.9g", x);
}

// Bytes a call reads of operand i: a parameter its body only slices (a
// library call reading a view: LibraryOperandSlices) counts the slices.
int64_t OperandBytesRead(const HloInstruction& instruction, int64_t i) {
  const int64_t whole = Bytes(instruction.operand(i)->shape());
  const HloComputation* body = instruction.to_apply();
  if (instruction.opcode() != HloOpcode::kCall || body == nullptr || i >= body->num_parameters()) {
    return whole;
  }
  const HloInstruction* parameter = body->parameter(i);
  if (parameter->users().empty()) return whole;
  int64_t sliced = 0;
  for (const HloInstruction* user : parameter->users()) {
    if (user->opcode() != HloOpcode::kSlice) return whole;
    sliced += Bytes(user->shape());
  }
  return std::min(whole, sliced);
}

}  // namespace

int64_t InstructionBytes(const HloInstruction& instruction) {
  const HloOpcode op = instruction.opcode();
  if (op == HloOpcode::kWhile || op == HloOpcode::kConditional) return 0;
  int64_t bytes = Bytes(instruction.shape());
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    bytes += OperandBytesRead(instruction, i);
  }
  return bytes;
}

double InstructionFlops(const HloInstruction& h) {
  const HloOpcode op = h.opcode();
  switch (op) {
    case HloOpcode::kFusion:
      return ComputationFlops(h.fused_computation());
    case HloOpcode::kCall:
      return ComputationFlops(h.to_apply());
    case HloOpcode::kDot: {
      double k = 1;
      for (int64_t d : h.attrs().dot_dimension_numbers->lhs_contracting_dimensions()) {
        k *= static_cast<double>(h.operand(0)->shape().dimensions(d));
      }
      return 2 * Elements(h.shape()) * k;
    }
    case HloOpcode::kConvolution: {
      const Shape& kernel = h.operand(1)->shape();
      const int64_t out_feature =
          h.attrs().convolution_dimension_numbers->kernel_output_feature_dimension();
      const double per_output =
          Elements(kernel) / std::max<double>(1, kernel.dimensions(out_feature));
      return 2 * Elements(h.shape()) * per_output;
    }
    case HloOpcode::kReduce: {
      double n = 0;
      for (int64_t i = 0; i < h.operand_count() / 2; ++i) n += Elements(h.operand(i)->shape());
      return n;
    }
    case HloOpcode::kReduceWindow: {
      double window = 1;
      if (h.attrs().has_window) {
        for (const auto& dim : h.attrs().window->dimensions()) window *= dim.size();
      }
      return Elements(h.shape().IsTuple() ? h.shape().tuple_shapes(0) : h.shape()) * window;
    }
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
      return Elements(h.shape());
    default:
      if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) {
        if (op == HloOpcode::kConvert || op == HloOpcode::kCopy) return 0;
        return Elements(h.shape());
      }
      return 0;
  }
}

Profile SummarizeProfile(const runtime::ThunkProfiler& profiler, const HloModule& module,
                         const MachinePeak& peak, std::string backend) {
  Profile profile;
  profile.backend = std::move(backend);
  profile.peak = peak;
  const std::vector<runtime::ThunkTiming> timings = profiler.timings();
  std::vector<double> runs = profiler.run_seconds();
  profile.runs = static_cast<int64_t>(runs.size());
  if (runs.empty()) return profile;
  const double n = static_cast<double>(runs.size());
  double sum = 0;
  for (double r : runs) sum += r;
  profile.mean_seconds = sum / n;
  std::sort(runs.begin(), runs.end());
  profile.min_seconds = runs.front();
  profile.median_seconds = runs.size() % 2 == 1
                               ? runs[runs.size() / 2]
                               : (runs[runs.size() / 2 - 1] + runs[runs.size() / 2]) / 2;

  absl::flat_hash_map<std::string, const HloInstruction*> by_name;
  for (const HloComputation* computation : module.computations()) {
    computation->ForEachInstruction(
        [&](const HloInstruction* instruction) { by_name[instruction->name()] = instruction; });
  }
  std::vector<double> children(timings.size(), 0);
  double top_level = 0;
  for (const runtime::ThunkTiming& t : timings) {
    if (t.parent >= 0) {
      children[t.parent] += t.seconds;
    } else {
      top_level += t.seconds;
    }
  }
  std::vector<ProfileEntry> entries;
  for (size_t i = 0; i < timings.size(); ++i) {
    const runtime::ThunkTiming& t = timings[i];
    ProfileEntry e;
    e.thunk = t.name;
    e.name = t.name;
    e.category = runtime::ThunkKindName(t.kind);
    e.depth = t.depth;
    if (t.parent >= 0) e.parent = absl::StrCat(entries[t.parent].name, " ", t.role);
    e.calls = static_cast<double>(t.calls) / n;
    e.seconds = t.seconds / n;
    e.self_seconds = std::max(0.0, (t.seconds - children[i]) / n);
    e.bytes = t.bytes > 0 ? 2 * t.bytes : 0;  // A copy reads and writes its bytes.
    const std::string instruction_name = InstructionNameOf(t.name);
    if (!instruction_name.empty()) {
      auto it = by_name.find(instruction_name);
      if (it != by_name.end()) {
        const HloInstruction& h = *it->second;
        e.name = absl::StrCat("%", h.name());
        e.op = OpOf(h);
        e.bytes = InstructionBytes(h);
        e.flops = InstructionFlops(h);
      }
    }
    const bool leaf = t.kind != runtime::ThunkKind::kWhile &&
                      t.kind != runtime::ThunkKind::kConditional;
    if (leaf && e.seconds > 0 && t.calls > 0) {
      const double per_call = e.seconds / e.calls;
      e.gbps = e.bytes / per_call / 1e9;
      e.gflops = e.flops / per_call / 1e9;
      const double memory = peak.bandwidth_gbps > 0 ? e.bytes / (peak.bandwidth_gbps * 1e9) : 0;
      const double compute = peak.gflops > 0 ? e.flops / (peak.gflops * 1e9) : 0;
      if (memory > 0 || compute > 0) {
        e.of_peak = std::max(memory, compute) / per_call;
        e.bound = compute > memory ? "compute" : "memory";
      }
    }
    e.share = profile.mean_seconds > 0 ? e.self_seconds / profile.mean_seconds : 0;
    entries.push_back(std::move(e));
  }
  profile.runtime_seconds = std::max(0.0, profile.mean_seconds - top_level / n);

  std::vector<ProfileCategory> categories;
  auto category = [&](const std::string& name) -> ProfileCategory& {
    for (ProfileCategory& c : categories) {
      if (c.category == name) return c;
    }
    categories.push_back({name});
    return categories.back();
  };
  for (const ProfileEntry& e : entries) {
    ProfileCategory& c = category(e.category);
    ++c.thunks;
    c.calls += e.calls;
    c.seconds += e.self_seconds;
  }
  ProfileCategory& runtime = category("runtime");
  runtime.calls = 1;
  runtime.seconds = profile.runtime_seconds;
  for (ProfileCategory& c : categories) {
    c.share = profile.mean_seconds > 0 ? c.seconds / profile.mean_seconds : 0;
  }
  std::stable_sort(categories.begin(), categories.end(),
                   [](const ProfileCategory& a, const ProfileCategory& b) {
                     return a.seconds > b.seconds;
                   });
  std::stable_sort(entries.begin(), entries.end(), [](const ProfileEntry& a, const ProfileEntry& b) {
    return a.self_seconds > b.self_seconds;
  });
  profile.entries = std::move(entries);
  profile.categories = std::move(categories);
  return profile;
}

std::string Profile::ToString(int max_rows) const {
  std::string out = absl::StrFormat(
      "profile: %s backend, %d runs (per-run means): mean %.3f ms, median %.3f ms, min %.3f ms\n",
      backend, runs, mean_seconds * 1e3, median_seconds * 1e3, min_seconds * 1e3);
  absl::StrAppendFormat(&out,
                        "peak (%d threads, %s): %.1f GB/s (f32 triad), %.1f GFLOP/s (oneDNN sgemm "
                        "1024^3)\n",
                        peak.threads, peak.how, peak.bandwidth_gbps, peak.gflops);
  absl::StrAppend(&out,
                  "%peak: roofline time max(bytes/peak GB/s, FLOPs/peak GFLOP/s) over measured "
                  "time; bytes = operands + result;\n"
                  "over 100%: the bytes came from cache (the triad measures memory)\n\n");
  absl::StrAppendFormat(&out, "%9s %6s %7s %-11s %8s %8s %6s %-7s %s\n", "self ms", "share",
                        "calls", "category", "GB/s", "GFLOP/s", "%peak", "bound",
                        "instruction (op) [where]");
  int shown = 0;
  double rest_seconds = 0;
  int rest = 0;
  for (const ProfileEntry& e : entries) {
    if (shown >= max_rows) {
      rest_seconds += e.self_seconds;
      ++rest;
      continue;
    }
    ++shown;
    std::string what = e.name;
    if (!e.op.empty()) absl::StrAppend(&what, " (", e.op, ")");
    if (e.category == "library" && e.thunk != e.name) absl::StrAppend(&what, " {", e.thunk, "}");
    if (!e.parent.empty()) absl::StrAppend(&what, " [", e.parent, "]");
    const std::string calls =
        std::fabs(e.calls - std::round(e.calls)) < 1e-9 ? absl::StrCat(std::llround(e.calls))
                                                        : absl::StrFormat("%.1f", e.calls);
    const bool leaf = e.category != "loop" && e.category != "conditional";
    absl::StrAppendFormat(
        &out, "%9.3f %5.1f%% %7s %-11s %8s %8s %6s %-7s %s\n", e.self_seconds * 1e3,
        e.share * 100, calls, e.category,
        leaf && e.bytes > 0 ? absl::StrFormat("%.2f", e.gbps) : "-",
        leaf && e.flops > 0 ? absl::StrFormat("%.2f", e.gflops) : "-",
        e.of_peak > 0 ? absl::StrFormat("%.0f%%", e.of_peak * 100) : "-", e.bound, what);
  }
  if (rest > 0) {
    absl::StrAppendFormat(&out, "%9.3f %5.1f%% (%d more thunks)\n", rest_seconds * 1e3,
                          mean_seconds > 0 ? rest_seconds / mean_seconds * 100 : 0, rest);
  }
  absl::StrAppend(&out, "\nby category:\n");
  absl::StrAppendFormat(&out, "  %-11s %7s %9s %9s %6s\n", "category", "thunks", "calls", "ms",
                        "share");
  for (const ProfileCategory& c : categories) {
    absl::StrAppendFormat(&out, "  %-11s %7d %9.0f %9.3f %5.1f%%\n", c.category, c.thunks, c.calls,
                          c.seconds * 1e3, c.share * 100);
  }
  return out;
}

std::string Profile::ToJson() const {
  std::string out = absl::StrCat(
      "{\"backend\": ", JsonString(backend), ", \"runs\": ", runs,
      ", \"mean_seconds\": ", JsonNumber(mean_seconds),
      ", \"median_seconds\": ", JsonNumber(median_seconds),
      ", \"min_seconds\": ", JsonNumber(min_seconds),
      ", \"runtime_seconds\": ", JsonNumber(runtime_seconds),
      ", \"peak\": {\"bandwidth_gbps\": ", JsonNumber(peak.bandwidth_gbps),
      ", \"gflops\": ", JsonNumber(peak.gflops), ", \"threads\": ", peak.threads,
      ", \"how\": ", JsonString(peak.how), "}, \"entries\": [");
  for (size_t i = 0; i < entries.size(); ++i) {
    const ProfileEntry& e = entries[i];
    absl::StrAppend(
        &out, i == 0 ? "" : ", ", "\n  {\"name\": ", JsonString(e.name),
        ", \"thunk\": ", JsonString(e.thunk), ", \"category\": ", JsonString(e.category),
        ", \"op\": ", JsonString(e.op), ", \"parent\": ", JsonString(e.parent),
        ", \"depth\": ", e.depth, ", \"calls\": ", JsonNumber(e.calls),
        ", \"seconds\": ", JsonNumber(e.seconds), ", \"self_seconds\": ", JsonNumber(e.self_seconds),
        ", \"share\": ", JsonNumber(e.share), ", \"bytes\": ", e.bytes,
        ", \"flops\": ", JsonNumber(e.flops), ", \"gbps\": ", JsonNumber(e.gbps),
        ", \"gflops\": ", JsonNumber(e.gflops), ", \"of_peak\": ", JsonNumber(e.of_peak),
        ", \"bound\": ", JsonString(e.bound), "}");
  }
  absl::StrAppend(&out, "],\n \"categories\": [");
  for (size_t i = 0; i < categories.size(); ++i) {
    const ProfileCategory& c = categories[i];
    absl::StrAppend(&out, i == 0 ? "" : ", ", "{\"category\": ", JsonString(c.category),
                    ", \"thunks\": ", c.thunks, ", \"calls\": ", JsonNumber(c.calls),
                    ", \"seconds\": ", JsonNumber(c.seconds), ", \"share\": ", JsonNumber(c.share),
                    "}");
  }
  absl::StrAppend(&out, "]}\n");
  return out;
}

}  // namespace api
}  // namespace hloc
