// Library outlining on real inputs. For every JAX zoo model (its HloSnapshot:
// module, arguments, XLA's result): outline, let the calls absorb their
// library epilogues, then fuse, then inline every library call (a backend
// without libraries), and check after each step that the module verifies and
// the interpreter computes exactly what it computed before (also after a text
// and a proto round trip of the outlined module).
// The ledger must list every outlined call, and every dot or
// convolution left in place must have a "not-outlined" entry saying why. The
// per-model table for bench/RESULTS.md is printed to the test log.
//
// Then every corpus module ($HLOC_CORPUS_DIR/xla, /xla2023) that parses and
// verifies is outlined and its calls grown by epilogue fusion: no crash, a
// valid module, and (where the interpreter runs it) unchanged results, also
// after fusion and inlining.
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/loader.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/call_inliner.h"
#include "passes/fusion/fusion_pipeline.h"
#include "passes/fusion/fusion_rules.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/library_capabilities.h"
#include "passes/outlining/library_epilogue_fusion.h"
#include "passes/outlining/outline_library_calls.h"
#include "passes/outlining/outlining_report.h"
#include "passes/outlining/outlining_test_helpers.h"

namespace hloc {
namespace {

using outlining_testing::CompositeAttribute;
using outlining_testing::Entries;
using outlining_testing::LibraryCalls;
using outlining_testing::WorkspacePath;

const char* const kZooModels[] = {
    "mlp_gelu",          "layer_norm",   "softmax",           "attention",
    "transformer_block", "conv_bn_relu", "resnet_block",      "depthwise_conv",
    "reductions",        "cumsum_scan",  "embedding_scatter", "topk_sort",
    "dynamic_slice",     "bf16_mlp",     "while_loop",        "conv2d"};

absl::Status RunPass(HloPass& pass, HloModule& module) {
  absl::StatusOr<bool> changed = pass.Run(module);
  if (!changed.ok()) return changed.status();
  absl::Status valid = VerifyModule(module);
  if (!valid.ok()) {
    return absl::InternalError(absl::StrCat("invalid after ", pass.name(), ": ", valid.message()));
  }
  return absl::OkStatus();
}

// Same bits as `expected` (NaN matching NaN).
void ExpectSameResult(const Literal& expected, const Literal& actual, absl::string_view what) {
  Tolerance exact;
  exact.rtol = 0;
  exact.atol = 0;
  ComparisonReport report = CompareLiterals(expected, actual, exact);
  EXPECT_TRUE(report.ok) << what << ": " << report.ToString();
}

struct ZooRow {
  std::string model;
  LibraryOutliningStats outlined, strict;
  LibraryEpilogueStats epilogues;
  std::map<std::string, int64_t> calls;  // composite names after epilogue fusion
};

std::string Calls(const std::map<std::string, int64_t>& calls) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : calls) {
    parts.push_back(count == 1 ? name : absl::StrCat(name, " x", count));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, ", ");
}

// The distinct reasons, shortened to their first clause, with counts.
std::string Reasons(const LibraryOutliningStats& stats) {
  std::map<std::string, int> reasons;
  for (const auto& [name, why] : stats.not_outlined) {
    std::string first = why.substr(0, why.find(';'));
    ++reasons[first];
  }
  std::vector<std::string> parts;
  for (const auto& [why, count] : reasons) {
    parts.push_back(count == 1 ? why : absl::StrCat(count, "x ", why));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, "; ");
}

std::string Fraction(int64_t done, int64_t total) {
  return total == 0 ? "-" : absl::StrCat(done, "/", total);
}

TEST(ZooOutlining, OutlineFuseInlineKeepsResultsAndExplainsEveryDot) {
  std::vector<ZooRow> rows;
  for (const char* model : kZooModels) {
    SCOPED_TRACE(model);
    absl::StatusOr<LoadedSnapshot> snapshot =
        LoadSnapshotFromFile(WorkspacePath(absl::StrCat("tests/jax/zoo/", model, ".snapshot.pb")));
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    HloModule& module = *snapshot->module;
    absl::StatusOr<Literal> reference = Evaluate(module, snapshot->arguments);
    ASSERT_TRUE(reference.ok()) << reference.status();
    if (snapshot->result.has_value()) {
      ComparisonReport vs_xla = CompareLiterals(*snapshot->result, *reference);
      EXPECT_TRUE(vs_xla.ok) << "interpreter vs XLA: " << vs_xla.ToString();
    }
    ZooRow row;
    row.model = model;
    {  // The variant with row-major layouts required, for the table only.
      std::unique_ptr<HloModule> copy = module.Clone();
      CallInliner inliner;
      ASSERT_TRUE(RunPass(inliner, *copy).ok());
      LibraryOutliningOptions strict;
      strict.check.require_row_major_layouts = true;
      OutlineLibraryCalls outliner(DefaultLibraryPatterns(), strict);
      ASSERT_TRUE(RunPass(outliner, *copy).ok());
      row.strict = outliner.stats();
      absl::StatusOr<Literal> result = Evaluate(*copy, snapshot->arguments);
      ASSERT_TRUE(result.ok()) << result.status();
      ExpectSameResult(*reference, *result, "after outlining with row-major layouts");
    }

    FusionLedger ledger;
    CallInliner inliner;
    absl::Status status = RunPass(inliner, module);
    ASSERT_TRUE(status.ok()) << status;
    OutlineLibraryCalls outliner(DefaultLibraryPatterns(), {}, &ledger);
    status = RunPass(outliner, module);
    ASSERT_TRUE(status.ok()) << status;
    row.outlined = outliner.stats();
    absl::StatusOr<Literal> outlined = Evaluate(module, snapshot->arguments);
    ASSERT_TRUE(outlined.ok()) << outlined.status();
    ExpectSameResult(*reference, *outlined, "after outlining");
    int64_t outlined_calls = static_cast<int64_t>(LibraryCalls(module).size());

    // The calls absorb their library epilogues; a second run changes nothing.
    LibraryEpilogueFusion epilogues(FusionRules(), {}, &ledger);
    status = RunPass(epilogues, module);
    ASSERT_TRUE(status.ok()) << status;
    row.epilogues = epilogues.stats();
    EXPECT_EQ(static_cast<int64_t>(LibraryCalls(module).size()), outlined_calls);
    absl::StatusOr<Literal> grown = Evaluate(module, snapshot->arguments);
    ASSERT_TRUE(grown.ok()) << grown.status();
    ExpectSameResult(*reference, *grown, "after epilogue fusion");
    for (const HloInstruction* call : LibraryCalls(module)) {
      std::string name = CompositeAttribute(*call, kCompositeName);
      if (absl::StartsWith(name, "hloc.")) name = name.substr(5);
      ++row.calls[name];
    }
    {
      std::string before = PrintModule(module);
      LibraryEpilogueFusion again;
      absl::StatusOr<bool> changed = again.Run(module);
      ASSERT_TRUE(changed.ok()) << changed.status();
      EXPECT_FALSE(*changed);
      EXPECT_EQ(PrintModule(module), before);
    }

    // The ledger: one "outlined" entry per call, one "not-outlined" per dot/conv left.
    int64_t calls = static_cast<int64_t>(LibraryCalls(module).size());
    EXPECT_EQ(static_cast<int64_t>(Entries(ledger, "outlined").size()), calls);
    int64_t left = 0;
    module.entry()->ForEachInstruction([&](HloInstruction* i) {
      left += i->opcode() == HloOpcode::kDot || i->opcode() == HloOpcode::kConvolution;
    });
    EXPECT_EQ(static_cast<int64_t>(Entries(ledger, "not-outlined").size()), left);
    EXPECT_EQ(row.outlined.dots + row.outlined.convolutions,
              row.outlined.dots_outlined + row.outlined.convolutions_outlined + left);

    // Text and proto round trips keep the (grown) composite calls and the results.
    {
      absl::StatusOr<std::unique_ptr<HloModule>> text = ParseHloModule(PrintModule(module));
      ASSERT_TRUE(text.ok()) << text.status();
      absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(module);
      ASSERT_TRUE(proto.ok()) << proto.status();
      absl::StatusOr<std::unique_ptr<HloModule>> from_proto = ModuleFromProto(*proto);
      ASSERT_TRUE(from_proto.ok()) << from_proto.status();
      for (const HloModule* copy : {text->get(), from_proto->get()}) {
        ASSERT_TRUE(VerifyModule(*copy).ok());
        std::vector<HloInstruction*> original_calls = LibraryCalls(module);
        std::vector<HloInstruction*> copied_calls = LibraryCalls(*copy);
        ASSERT_EQ(copied_calls.size(), original_calls.size());
        for (size_t k = 0; k < copied_calls.size(); ++k) {
          for (const char* key : {kCompositeName, kCompositeAttributes, kCompositeVersion}) {
            EXPECT_EQ(CompositeAttribute(*copied_calls[k], key),
                      CompositeAttribute(*original_calls[k], key));
          }
          EXPECT_TRUE(copied_calls[k]->is_composite());
        }
        absl::StatusOr<Literal> result = Evaluate(*copy, snapshot->arguments);
        ASSERT_TRUE(result.ok()) << result.status();
        ExpectSameResult(*reference, *result, "after outlining and a round trip");
      }
    }

    // Fusion leaves the library calls alone: calls are opaque to its rules.
    FusionRules rules;
    for (HloInstruction* call : LibraryCalls(module)) {
      EXPECT_FALSE(rules.Describe(*call).fusible) << call->name();
    }
    HloPassPipeline fusion("fusion");
    FusionPipelineOptions fusion_options;
    fusion_options.ledger = &ledger;
    AddFusionPasses(fusion, fusion_options);
    status = RunPass(fusion, module);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(static_cast<int64_t>(LibraryCalls(module).size()), calls) << PrintModule(module);
    absl::StatusOr<Literal> fused = Evaluate(module, snapshot->arguments);
    ASSERT_TRUE(fused.ok()) << fused.status();
    ExpectSameResult(*reference, *fused, "after outlining and fusion");

    // A backend with no libraries inlines them all.
    InlineUnsupportedLibraryCalls inline_all(LibraryCapabilities{});
    status = RunPass(inline_all, module);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_TRUE(LibraryCalls(module).empty());
    absl::StatusOr<Literal> inlined = Evaluate(module, snapshot->arguments);
    ASSERT_TRUE(inlined.ok()) << inlined.status();
    ExpectSameResult(*reference, *inlined, "after outlining, fusion and inlining");
    if (std::string(model) == "transformer_block") {
      std::cout << RenderLibraryOutliningReport(ledger) << std::endl;
    }
    rows.push_back(std::move(row));
  }

  std::ostringstream table;
  table << "\n| model | dots outlined | convs outlined | library calls | epilogues absorbed |"
           " why the rest were not | dots/convs outlined with row-major layouts required |\n"
        << "|---|---|---|---|---|---|---|\n";
  for (const ZooRow& row : rows) {
    std::vector<std::string> absorbed;
    for (const auto& [what, count] : row.epilogues.absorbed) {
      absorbed.push_back(count == 1 ? what : absl::StrCat(what, " x", count));
    }
    table << "| " << row.model << " | "
          << Fraction(row.outlined.dots_outlined, row.outlined.dots) << " | "
          << Fraction(row.outlined.convolutions_outlined, row.outlined.convolutions) << " | "
          << Calls(row.calls) << " | "
          << (absorbed.empty() ? "-" : absl::StrJoin(absorbed, ", ")) << " | "
          << Reasons(row.outlined) << " | "
          << Fraction(row.strict.dots_outlined + row.strict.convolutions_outlined,
                      row.strict.dots + row.strict.convolutions)
          << (row.strict.outlined == row.outlined.outlined
                  ? ""
                  : " (" + Calls(row.strict.outlined) + ")")
          << " |\n";
  }
  std::cout << table.str() << std::endl;
}

std::vector<std::string> ListFiles(const std::string& dir, absl::string_view suffix) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (absl::EndsWith(name, suffix)) files.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

// Small enough for the interpreter in a unit test: no value over 64K
// elements and no dot or convolution over 2^24 multiply-adds (the corpus has
// whole MobileNets).
bool CheapToEvaluate(const HloModule& module) {
  bool cheap = module.instruction_count() <= 5000;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](const HloInstruction* i) {
      const Shape& s = i->shape();
      if (s.IsArray() && s.element_count() > (int64_t{1} << 16)) cheap = false;
      if ((i->opcode() == HloOpcode::kDot || i->opcode() == HloOpcode::kConvolution) &&
          i->operand(1)->shape().IsArray() &&
          s.element_count() * i->operand(1)->shape().element_count() > (int64_t{1} << 24)) {
        cheap = false;
      }
    });
  }
  return cheap;
}

TEST(ZooOutlining, CorpusModulesNeverCrashAndKeepTheirResults) {
  const char* corpus = std::getenv("HLOC_CORPUS_DIR");
  if (corpus == nullptr || *corpus == '\0') {
    GTEST_SKIP() << "HLOC_CORPUS_DIR is not set";
  }
  int modules = 0, changed = 0, grown = 0, evaluated = 0;
  for (const char* sub : {"/xla", "/xla2023"}) {
    for (const std::string& path : ListFiles(std::string(corpus) + sub, ".hlo")) {
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      ParseOptions options;
      options.filename = path;
      auto parsed = ParseHloModules(text.str(), options);
      if (!parsed.ok()) continue;
      for (std::unique_ptr<HloModule>& module : *parsed) {
        if (!VerifyModule(*module).ok() || module->entry() == nullptr) continue;
        ++modules;
        SCOPED_TRACE(absl::StrCat(path, " ", module->name()));
        std::unique_ptr<HloModule> original = module->Clone();
        OutlineLibraryCalls outliner;
        absl::StatusOr<bool> did = outliner.Run(*module);
        ASSERT_TRUE(did.ok()) << did.status();
        absl::Status valid = VerifyModule(*module);
        ASSERT_TRUE(valid.ok()) << valid << "\n" << PrintModule(*module);
        if (!*did) continue;
        LibraryEpilogueFusion epilogues;
        absl::StatusOr<bool> grew = epilogues.Run(*module);
        ASSERT_TRUE(grew.ok()) << grew.status();
        valid = VerifyModule(*module);
        ASSERT_TRUE(valid.ok()) << valid << "\n" << PrintModule(*module);
        grown += *grew;
        ++changed;
        if (!CheapToEvaluate(*original)) continue;
        absl::StatusOr<std::vector<Literal>> arguments = MakeRandomArguments(*original, 7);
        if (!arguments.ok()) continue;
        absl::StatusOr<Literal> before = Evaluate(*original, *arguments);
        if (!before.ok()) continue;
        absl::StatusOr<Literal> after = Evaluate(*module, *arguments);
        ASSERT_TRUE(after.ok()) << after.status();
        ExpectSameResult(*before, *after, "corpus module after outlining and epilogue fusion");
        // Fusion, then a backend without libraries.
        HloPassPipeline fusion("fusion");
        AddFusionPasses(fusion, FusionPipelineOptions());
        absl::Status status = RunPass(fusion, *module);
        ASSERT_TRUE(status.ok()) << status;
        InlineUnsupportedLibraryCalls inline_all(LibraryCapabilities{});
        status = RunPass(inline_all, *module);
        ASSERT_TRUE(status.ok()) << status;
        absl::StatusOr<Literal> inlined = Evaluate(*module, *arguments);
        ASSERT_TRUE(inlined.ok()) << inlined.status();
        ExpectSameResult(*before, *inlined, "corpus module after fusion and inlining");
        ++evaluated;
      }
    }
  }
  std::cout << "corpus: " << modules << " modules, " << changed << " outlined, " << grown
            << " with epilogues absorbed, " << evaluated << " compared by evaluation" << std::endl;
  EXPECT_GT(modules, 50);
}

}  // namespace
}  // namespace hloc
