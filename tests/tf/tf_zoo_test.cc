// Every TensorFlow zoo model (tests/tf/zoo/*.snapshot.pb: modules as
// tf.function(jit_compile=True) emits them, see README.md) through
//   - text -> proto -> text: the HLO text TF printed parses, verifies, and
//     prints the same after a trip through HloModuleProto; the snapshot's
//     own proto module verifies too;
//   - the reference interpreter;
//   - the host backend after the default pipeline, and after it without
//     fusion;
// each checked against TensorFlow's recorded result. Host programs may call
// the interpreter for ops with no kernel, but every such op must be listed
// in kInterpreterOps with the reason; the ops are printed per model. A
// model that hloc cannot handle yet is listed in kKnownFailures with the
// stage and reason: it is run, the reason printed, and the stage must still
// fail (so a fix shows up here and its entry is removed).

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/common/interpreter_ops.h"
#include "backend/host/host_compiler.h"
#include "backend/host/host_pipeline_modes.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/loader.h"
#include "hlo/proto_io.h"
#include "hlo/shape_util.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "runtime/thread_pool.h"

namespace hloc {
namespace {

enum class Stage { kRoundTrip, kInterpreter, kHostFusion, kHostNoFusion };

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kRoundTrip: return "roundtrip";
    case Stage::kInterpreter: return "interpreter";
    case Stage::kHostFusion: return "host";
    case Stage::kHostNoFusion: return "host_nofusion";
  }
  return "?";
}

struct KnownFailure {
  const char* model;
  Stage stage;
  const char* reason;
};

// Stages hloc cannot do yet, with why. Empty is the goal.
// (tf_boolean_mask, whose Where result is made dynamic by set-dimension-size,
// left this list when the interpreter gained runtime sizes and the host
// pipeline the DynamicPadder pass.)
constexpr KnownFailure kKnownFailures[] = {
};

// Models whose host programs may run ops on the interpreter, with why.
struct InterpreterOps {
  const char* model;
  const char* reason;
};
constexpr InterpreterOps kInterpreterOps[] = {
};

const KnownFailure* FindKnownFailure(const std::string& model, Stage stage) {
  for (const KnownFailure& known : kKnownFailures) {
    if (model == known.model && stage == known.stage) return &known;
  }
  return nullptr;
}

const char* InterpreterOpsReason(const std::string& model) {
  for (const InterpreterOps& allowed : kInterpreterOps) {
    if (model == allowed.model) return allowed.reason;
  }
  return nullptr;
}

std::string ZooDir() { return testdata::RunfilesDir() + "/tests/tf/zoo"; }

std::vector<std::string> ZooModels() { return testdata::SnapshotModels(ZooDir()); }

// TensorFlow ran the functions with jit_compile=True, i.e. on XLA:CPU, whose
// results differ from ours by summation order and by its fast approximations
// of tanh, exp, log and erfinv. bf16 compute: XLA:CPU keeps f32 between
// elementwise ops (xla_allow_excess_precision) where hloc rounds every op to
// bf16, a few bf16 ulps (2^-8 relative) apart.
Tolerance TfTolerance(const std::string& model) {
  if (model == "tf_mixed_bf16") return Tolerance{2e-2, 1e-2};
  return Tolerance{1e-4, 1e-5};
}

// One stage of one model: an error message, empty when it passed.
std::string RunStage(const std::string& model, Stage stage) {
  const std::string path = absl::StrCat(ZooDir(), "/", model, ".snapshot.pb");
  absl::StatusOr<LoadedSnapshot> snapshot = LoadSnapshotFromFile(path);
  if (!snapshot.ok()) return absl::StrCat("load ", path, ": ", snapshot.status().ToString());
  if (!snapshot->result.has_value()) return absl::StrCat("no recorded result in ", path);
  if (absl::Status verified = VerifyModule(*snapshot->module); !verified.ok()) {
    return absl::StrCat("snapshot module does not verify: ", verified.ToString());
  }

  if (stage == Stage::kRoundTrip) {
    const std::string text_path = absl::StrCat(ZooDir(), "/", model, ".hlo.txt");
    absl::StatusOr<std::unique_ptr<HloModule>> parsed = LoadModuleFromFile(text_path);
    if (!parsed.ok()) return absl::StrCat("parse ", text_path, ": ", parsed.status().ToString());
    if (absl::Status verified = VerifyModule(**parsed); !verified.ok()) {
      return absl::StrCat("text module does not verify: ", verified.ToString());
    }
    absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(**parsed);
    if (!proto.ok()) return absl::StrCat("to proto: ", proto.status().ToString());
    absl::StatusOr<std::unique_ptr<HloModule>> reloaded = ModuleFromProto(*proto);
    if (!reloaded.ok()) return absl::StrCat("from proto: ", reloaded.status().ToString());
    if (absl::Status verified = VerifyModule(**reloaded); !verified.ok()) {
      return absl::StrCat("reloaded module does not verify: ", verified.ToString());
    }
    const std::string before = PrintModule(**parsed);
    const std::string after = PrintModule(**reloaded);
    if (before != after) {
      size_t at = 0;
      while (at < before.size() && at < after.size() && before[at] == after[at]) ++at;
      return absl::StrCat("text -> proto -> text differs at byte ", at, ": '",
                          before.substr(at, 80), "' vs '", after.substr(at, 80), "'");
    }
    return "";
  }

  absl::StatusOr<Literal> actual;
  if (stage == Stage::kInterpreter) {
    actual = Evaluate(*snapshot->module, snapshot->arguments);
  } else {
    const host_testing::PipelineMode mode = stage == Stage::kHostFusion
                                                ? host_testing::PipelineMode::kFusion
                                                : host_testing::PipelineMode::kNoFusion;
    absl::StatusOr<std::unique_ptr<HloModule>> prepared =
        host_testing::PrepareForMode(*snapshot->module, mode);
    if (!prepared.ok()) return absl::StrCat("pipeline: ", prepared.status().ToString());
    host::HostCompileOptions options;
    options.compiler = host_testing::SharedCompiler();
    options.interpreter = backend::ReferenceInterpreter();
    absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
        host::CompileForHost(**prepared, options);
    if (!program.ok()) return absl::StrCat("compile: ", program.status().ToString());
    const host::HostCompileReport& report = (*program)->report();
    std::cout << model << " [" << StageName(stage) << "]: " << report.ToString();
    std::cout << model << " [" << StageName(stage) << "]: interpreter ops: "
              << (report.interpreter_ops.empty() ? "none"
                                                 : absl::StrJoin(report.interpreter_ops, ", "))
              << "\n";
    if (report.interpreter_calls != 0 && InterpreterOpsReason(model) == nullptr) {
      return absl::StrCat(report.interpreter_calls, " interpreter ops (",
                          absl::StrJoin(report.interpreter_ops, ", "),
                          ") and the model is not in kInterpreterOps");
    }
    runtime::ThreadPool pool(2);
    actual = (*program)->Execute(snapshot->arguments, &pool);
    if (actual.ok() && snapshot->module->config().input_output_alias.entries_size() > 0) {
      // May-alias outputs (updated variables) computed in donated arguments.
      std::vector<Literal> donated = snapshot->arguments;
      absl::StatusOr<Literal> in_place = (*program)->ExecuteDonating(std::move(donated), &pool);
      if (!in_place.ok()) return absl::StrCat("execute donating: ", in_place.status().ToString());
      ComparisonReport same = CompareLiterals(*actual, *in_place, TfTolerance(model));
      if (!same.ok) return absl::StrCat("donating run differs: ", same.ToString());
    }
  }
  if (!actual.ok()) return absl::StrCat("run: ", actual.status().ToString());
  ComparisonReport vs_tf = CompareLiterals(*snapshot->result, *actual, TfTolerance(model));
  if (!vs_tf.ok) return absl::StrCat("vs TensorFlow: ", vs_tf.ToString());
  return "";
}

class TfZooTest : public ::testing::TestWithParam<std::tuple<std::string, Stage>> {};

TEST_P(TfZooTest, MatchesTensorFlow) {
  const auto& [model, stage] = GetParam();
  const std::string error = RunStage(model, stage);
  if (const KnownFailure* known = FindKnownFailure(model, stage)) {
    std::cout << model << " [" << StageName(stage) << "]: known failure: " << known->reason
              << "\n  (" << error << ")\n";
    EXPECT_FALSE(error.empty()) << model << " [" << StageName(stage)
                                << "] passes now: remove its kKnownFailures entry";
    return;
  }
  EXPECT_TRUE(error.empty()) << model << " [" << StageName(stage) << "]: " << error;
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, TfZooTest,
    ::testing::Combine(::testing::ValuesIn(ZooModels()),
                       ::testing::Values(Stage::kRoundTrip, Stage::kInterpreter,
                                         Stage::kHostFusion, Stage::kHostNoFusion)),
    [](const ::testing::TestParamInfo<std::tuple<std::string, Stage>>& info) {
      return absl::StrCat(std::get<0>(info.param), "_", StageName(std::get<1>(info.param)));
    });

TEST(TfZooListTest, FindsModelsAndListsOnlyThem) {
  const std::vector<std::string> models = ZooModels();
  EXPECT_GE(models.size(), 19u) << ZooDir();
  for (const KnownFailure& known : kKnownFailures) {
    EXPECT_TRUE(std::count(models.begin(), models.end(), known.model)) << known.model;
  }
  for (const InterpreterOps& allowed : kInterpreterOps) {
    EXPECT_TRUE(std::count(models.begin(), models.end(), allowed.model)) << allowed.model;
  }
}

}  // namespace
}  // namespace hloc
