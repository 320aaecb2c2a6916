// Fusion quality of hloc against XLA:CPU on the JAX zoo: for each model, runs
// hloc's "default" pipeline on NAME.before.txt and compares the kernel count
// and modeled DRAM traffic with XLA's optimized NAME.after.txt.
//
// Usage: fusion_quality ZOO_DIR [--list]   (prints a Markdown table; --list
// also prints each counted kernel to stderr)
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/text_parser.h"
#include "passes/pipeline.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace {

// Model names: every NAME with a NAME.after.txt in the zoo directory, sorted.
std::vector<std::string> ListModels(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string file = entry.path().filename().string();
    const std::string suffix = ".after.txt";
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.insert(file.substr(0, file.size() - suffix.size()));
    }
  }
  return std::vector<std::string>(names.begin(), names.end());
}

struct Counts {
  int64_t kernels = 0;
  int64_t bytes = 0;
};

int64_t Bytes(const Shape& shape) {
  std::optional<int64_t> b = shape.CheckedByteSize();
  return b.has_value() ? *b : 0;
}

bool IsRowMajorOrNone(const Shape& shape) {
  if (!shape.has_layout()) return true;
  return shape.layout().minor_to_major ==
             Layout::RowMajor(static_cast<int64_t>(shape.dimensions().size())).minor_to_major &&
         shape.layout().tiles.empty();
}

// True for instructions that never become a kernel of their own.
bool IsFree(const HloInstruction* instr) {
  switch (instr->opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kBitcast:
    case HloOpcode::kAfterAll:
      return true;
    case HloOpcode::kReshape: {
      const Shape& in = instr->operands()[0]->shape();
      const Shape& out = instr->shape();
      if (in.IsTuple() || out.IsTuple()) return false;
      std::optional<int64_t> a = in.CheckedElementCount();
      std::optional<int64_t> b = out.CheckedElementCount();
      return a.has_value() && a == b && IsRowMajorOrNone(in) && IsRowMajorOrNone(out);
    }
    default:
      return false;
  }
}

// When set (second argument "--list"), every kernel is printed to stderr.
bool g_list = false;

void AddKernel(const HloInstruction* instr, Counts* counts) {
  ++counts->kernels;
  if (g_list) {
    std::fprintf(stderr, "  %s %s%s\n", std::string(HloOpcodeName(instr->opcode())).c_str(),
                 instr->name().c_str(), instr->is_composite() ? " (composite)" : "");
  }
  absl::flat_hash_set<const HloInstruction*> seen;
  for (const HloInstruction* op : instr->operands()) {
    if (seen.insert(op).second) counts->bytes += Bytes(op->shape());
  }
  counts->bytes += Bytes(instr->shape());
}

// Counts kernels launched by `comp`, per static occurrence. `depth` guards
// against malformed recursion.
void CountComputation(const HloComputation* comp, Counts* counts, int depth) {
  if (comp == nullptr || depth > 64) return;
  for (const HloInstruction* instr : comp->instructions()) {
    switch (instr->opcode()) {
      case HloOpcode::kWhile:
      case HloOpcode::kConditional:
        for (const HloComputation* c : instr->called_computations()) {
          CountComputation(c, counts, depth + 1);
        }
        break;
      case HloOpcode::kCall:
        if (instr->is_composite()) {
          AddKernel(instr, counts);  // One library call.
        } else {
          for (const HloComputation* c : instr->called_computations()) {
            CountComputation(c, counts, depth + 1);
          }
        }
        break;
      default:
        if (!IsFree(instr)) AddKernel(instr, counts);
        break;
    }
  }
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<Counts> Measure(const std::string& path, bool run_pipeline) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  ParseOptions options;
  options.filename = path;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(*text, options);
  if (!module.ok()) return module.status();
  if (run_pipeline) {
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
        MakeStandardPipeline("default", PipelineOptions{}, nullptr);
    if (!pipeline.ok()) return pipeline.status();
    absl::StatusOr<bool> changed = (*pipeline)->Run(**module);
    if (!changed.ok()) return changed.status();
  }
  Counts counts;
  CountComputation((*module)->entry(), &counts, 0);
  return counts;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ZOO_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  g_list = argc > 2 && std::string(argv[2]) == "--list";
  std::printf("| model | hloc kernels | XLA kernels | hloc MB | XLA MB | bytes ratio hloc/XLA |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  Counts total_h, total_x;
  int failures = 0;
  for (const std::string& name : ListModels(dir)) {
    if (g_list) std::fprintf(stderr, "%s (hloc, then XLA):\n", name.c_str());
    absl::StatusOr<Counts> h = Measure(dir + "/" + name + ".before.txt", true);
    absl::StatusOr<Counts> x = Measure(dir + "/" + name + ".after.txt", false);
    if (!h.ok() || !x.ok()) {
      ++failures;
      std::printf("| %s | error: %s |\n", name.c_str(),
                  std::string(!h.ok() ? h.status().message() : x.status().message()).c_str());
      continue;
    }
    total_h.kernels += h->kernels;
    total_h.bytes += h->bytes;
    total_x.kernels += x->kernels;
    total_x.bytes += x->bytes;
    std::printf("| %s | %lld | %lld | %.4f | %.4f | %.3f |\n", name.c_str(),
                static_cast<long long>(h->kernels), static_cast<long long>(x->kernels),
                h->bytes / 1e6, x->bytes / 1e6,
                x->bytes > 0 ? static_cast<double>(h->bytes) / x->bytes : 0.0);
  }
  std::printf("| **total** | %lld | %lld | %.4f | %.4f | %.3f |\n",
              static_cast<long long>(total_h.kernels), static_cast<long long>(total_x.kernels),
              total_h.bytes / 1e6, total_x.bytes / 1e6,
              total_x.bytes > 0 ? static_cast<double>(total_h.bytes) / total_x.bytes : 0.0);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hloc

int main(int argc, char** argv) { return hloc::Main(argc, argv); }
