// Skip rules, arguments, reference results and tolerances for the corpus
// tests of the backends (see corpus_cases.h).
#include "hlo/testing/corpus_cases.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"

namespace hloc {
namespace testdata {
namespace {

// Why no backend can be asked to run `module` and match the interpreter, or "".
std::string UnrunnableReason(const HloModule& module) {
  std::string reason;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](HloInstruction* i) {
      if (!reason.empty()) return;
      const HloOpcode op = i->opcode();
      if (op == HloOpcode::kRng || op == HloOpcode::kRngGetAndUpdateState) {
        reason = "random numbers (rng)";
      } else if (IsAsyncOrCommunication(op) || op == HloOpcode::kAllReduce ||
                 op == HloOpcode::kAllGather || op == HloOpcode::kAllToAll ||
                 op == HloOpcode::kReduceScatter || op == HloOpcode::kCollectivePermute ||
                 op == HloOpcode::kPartitionId || op == HloOpcode::kReplicaId) {
        reason = absl::StrCat("collective, async or feed op (", HloOpcodeName(op), ")");
      }
    });
  }
  return reason;
}

}  // namespace

std::vector<std::string> CorpusFileIds() {
  std::vector<std::string> files;
  const char* root = std::getenv("HLOC_CORPUS_DIR");
  if (root == nullptr || *root == '\0') return files;
  for (const char* sub : {"xla", "xla2023"}) {
    DIR* dir = opendir(absl::StrCat(root, "/", sub).c_str());
    if (dir == nullptr) continue;
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (absl::EndsWith(name, ".hlo")) files.push_back(absl::StrCat(sub, "/", name));
    }
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

int64_t LongestContraction(const HloModule& module) {
  int64_t longest = 1;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](HloInstruction* i) {
      if (i->opcode() == HloOpcode::kDot && i->operand_count() >= 1) {
        int64_t k = 1;
        const Shape& lhs = i->operand(0)->shape();
        for (int64_t d : i->attrs().dot_dimension_numbers->lhs_contracting_dimensions()) {
          if (d >= 0 && d < lhs.rank()) k *= lhs.dimensions(d);
        }
        longest = std::max(longest, k);
      } else if (i->opcode() == HloOpcode::kConvolution && i->operand_count() >= 2) {
        const Shape& rhs = i->operand(1)->shape();
        const int64_t out_feature =
            i->attrs().convolution_dimension_numbers->kernel_output_feature_dimension();
        if (rhs.IsArray() && out_feature >= 0 && out_feature < rhs.rank() &&
            rhs.dimensions(out_feature) > 0) {
          longest = std::max(longest, rhs.element_count() / rhs.dimensions(out_feature));
        }
      }
    });
  }
  return longest;
}

// Each f32 addition may round by 2^-24 of partial sums of order one; math
// functions are separate implementations.
Tolerance ContractionTolerance(PrimitiveType type, int64_t contraction) {
  const double n = static_cast<double>(contraction);
  switch (type) {
    case xla::F64: return Tolerance{1e-9, std::max(1e-10, 1e-15 * n)};
    case xla::F32:
    case xla::C64: return Tolerance{1e-4, std::max(1e-5, 2e-7 * n)};
    case xla::F16: return Tolerance{5e-3, 1e-3};
    case xla::BF16: return Tolerance{2e-2, 1e-2};
    default: return Tolerance{};
  }
}

PrimitiveType LoosestFloatType(const Shape& shape) {
  if (!shape.IsTuple()) return shape.element_type();
  PrimitiveType best = xla::PRIMITIVE_TYPE_INVALID;
  for (const Shape& e : shape.tuple_shapes()) {
    const PrimitiveType t = LoosestFloatType(e);
    if (t == xla::BF16 || (t == xla::F16 && best != xla::BF16) ||
        best == xla::PRIMITIVE_TYPE_INVALID) {
      best = t;
    }
  }
  return best;
}

CorpusCase PrepareCorpusCase(const HloModule& module, const CorpusCaseLimits& limits) {
  CorpusCase result;
  auto skip = [&](std::string reason) {
    result.skip_reason = std::move(reason);
    result.arguments.clear();
    return std::move(result);
  };
  if (!VerifyModule(module).ok()) return skip("does not verify");
  std::string unrunnable = UnrunnableReason(module);
  if (!unrunnable.empty()) return skip(std::move(unrunnable));
  const HloComputation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) return skip("no entry");
  const std::optional<int64_t> result_bytes = entry->root()->shape().CheckedByteSize();
  if (!result_bytes.has_value() || *result_bytes > limits.max_result_bytes) {
    return skip(absl::StrCat("result over ", limits.max_result_bytes >> 20, " MiB"));
  }
  absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(module, limits.seed);
  if (!arguments.ok()) return skip("no random arguments for its parameter types");
  int64_t bytes = 0;
  for (const Literal& a : *arguments) bytes += a.size_bytes();
  if (bytes > limits.max_argument_bytes) {
    return skip(absl::StrCat("arguments over ", limits.max_argument_bytes >> 20, " MiB"));
  }
  EvaluatorOptions options;
  options.max_while_iterations = limits.max_while_iterations;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> expected = Evaluate(module, *arguments, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!expected.ok()) {
    return skip(absl::IsUnimplemented(expected.status())
                    ? "interpreter: unimplemented (custom-call, ...)"
                    : absl::StrCat("interpreter fails (",
                                   absl::StatusCodeToString(expected.status().code()), ")"));
  }
  if (seconds > limits.max_interpreter_seconds) {
    return skip(absl::StrCat("interpreter takes over ", limits.max_interpreter_seconds, " s"));
  }
  result.arguments = std::move(*arguments);
  result.tolerance =
      ContractionTolerance(LoosestFloatType(expected->shape()), LongestContraction(module));
  result.expected = std::move(*expected);
  return result;
}

void CorpusTally::Print(const std::string& title, std::ostream& out) const {
  out << title << ": " << modules << " modules, " << runnable << " runnable\n";
  for (const auto& [reason, count] : skipped) out << "  skipped " << count << ": " << reason << "\n";
  for (const auto& [name, mode] : modes) {
    out << "  " << name << ": ran " << mode.ran << ", matched " << mode.matched << ", failed "
        << mode.failures.size() << "\n";
    for (const auto& [note, count] : mode.notes) out << "    " << count << " " << note << "\n";
  }
}

std::vector<std::string> CheckCorpusFile(
    const std::string& file_id, CorpusTally* tally,
    const std::function<void(const std::string& id, const HloModule& module)>& check) {
  const char* root = std::getenv("HLOC_CORPUS_DIR");
  const std::string path = absl::StrCat(root == nullptr ? "" : root, "/", file_id);
  std::ifstream in(path);
  if (!in) return {absl::StrCat("cannot read ", path)};
  std::ostringstream text;
  text << in.rdbuf();
  ParseOptions options;
  options.filename = file_id;
  std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> modules =
      ParseEachHloModule(text.str(), options);
  std::map<std::string, size_t> failures_before;
  for (const auto& [mode, counts] : tally->modes) failures_before[mode] = counts.failures.size();
  for (size_t i = 0; i < modules.size(); ++i) {
    if (!modules[i].ok()) {
      ++tally->modules;
      ++tally->skipped["does not parse"];
      continue;
    }
    check(absl::StrCat(file_id, "#", i), **modules[i]);
  }
  std::vector<std::string> added;
  for (const auto& [mode, counts] : tally->modes) {
    for (size_t f = failures_before[mode]; f < counts.failures.size(); ++f) {
      added.push_back(counts.failures[f]);
    }
  }
  return added;
}

std::string CorpusTestName(const std::string& file_id) {
  std::string name;
  for (char c : file_id) name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name;
}

}  // namespace testdata
}  // namespace hloc
