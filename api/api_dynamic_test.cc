// Bounded dynamic entry parameters through the C++ API on every target: the
// interpreter (which runs the module as declared), the host and, where
// there is a GPU, CUDA (which run it padded by DynamicPadder). Each run is
// checked against the reference interpreter's answer at the runtime sizes;
// sizes past the bound or negative are errors naming the argument and the
// parameter.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/hloc.h"
#include "backend/common/literal_leaves.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/compare.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/testing/literal_text.h"
#include "hlo/text_parser.h"
#include "passes/dynamic_test_modules.h"

namespace hloc {
namespace api {
namespace {

namespace mods = dynamic_test_modules;
using xla::F32;

Literal Arg(const std::string& text) { return testdata::ParseLiteralText(text); }

std::shared_ptr<Client> NewClient() {
  absl::StatusOr<std::shared_ptr<Client>> client = Client::Create({});
  EXPECT_TRUE(client.ok()) << client.status();
  return *client;
}

constexpr Backend kBackends[] = {Backend::kInterpreter, Backend::kHost, Backend::kCuda};

// The executable for `text` on `backend`; null (and no failure) when the
// backend cannot run here, which must then be the reason it gives.
std::shared_ptr<Executable> CompileOn(Client& client, const char* text, Backend backend) {
  CompileOptions options;
  options.backend = backend;
  absl::StatusOr<std::shared_ptr<Executable>> exe =
      client.Compile(ModuleSource::Text(text), options);
  if (!BackendUnavailableReason(backend).empty()) {
    EXPECT_FALSE(exe.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(exe.status())) << exe.status();
    return nullptr;
  }
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *exe : nullptr;
}

// The array leaves of `arguments` as host Buffers (copies), the API's
// arguments.
std::vector<Buffer> ArgumentBuffers(const std::vector<Literal>& arguments) {
  std::vector<const Literal*> leaves;
  for (const Literal& argument : arguments) backend::CollectLiteralLeaves(argument, &leaves);
  std::vector<Buffer> buffers;
  for (const Literal* leaf : leaves) {
    absl::StatusOr<Buffer> buffer = Buffer::CopyFromHost(
        leaf->shape().element_type(), leaf->shape().dimensions(), leaf->raw());
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    buffers.push_back(*std::move(buffer));
  }
  return buffers;
}

// Runs `exe` on `arguments` and checks each result leaf, dims and values,
// against the interpreter's answer for the module `text`. Where the
// interpreter refuses the arguments, `exe` must too, with an error
// containing `refusal`.
void ExpectInterpretersAnswer(const char* text, const Executable& exe,
                              const std::vector<Literal>& arguments,
                              const char* refusal = nullptr,
                              const ExecuteOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Literal> expected = Evaluate(**module, arguments);
  absl::StatusOr<std::vector<Buffer>> out = exe.Execute(ArgumentBuffers(arguments), options);
  if (!expected.ok() && refusal != nullptr) {
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(absl::StrContains(out.status().message(), refusal)) << out.status();
    return;
  }
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<const Literal*> leaves;
  backend::CollectLiteralLeaves(*expected, &leaves);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), leaves.size());
  for (size_t j = 0; j < leaves.size(); ++j) {
    SCOPED_TRACE(absl::StrCat("result ", j));
    const Buffer& buffer = (*out)[j];
    ASSERT_EQ(buffer.type(), leaves[j]->shape().element_type());
    ASSERT_EQ(buffer.dims(), leaves[j]->shape().dimensions());
    Literal actual(Shape(buffer.type(), buffer.dims()));
    if (actual.size_bytes() > 0) {
      std::memcpy(actual.mutable_raw(), buffer.data(), buffer.byte_size());
    }
    ComparisonReport report = CompareLiterals(*leaves[j], actual);
    EXPECT_TRUE(report.ok) << report.ToString() << "\nexpected " << leaves[j]->ToString()
                           << "\nactual   " << actual.ToString();
  }
}

// On every backend: `text` run on (p of size n, s32[] m) for each n and m,
// and s32[] j for each j when `js` is not empty, against the interpreter;
// a refusal contains `refusal`.
void ExpectAnswersOverSizes(const char* text, std::vector<int> ns, std::vector<int> ms,
                            const char* refusal, std::vector<int> js = {}) {
  auto client = NewClient();
  const bool third = !js.empty();
  if (!third) js = {0};
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, text, backend);
    if (exe == nullptr) continue;
    for (int n : ns) {
      for (int m : ms) {
        for (int j : js) {
          SCOPED_TRACE(absl::StrCat("n=", n, " m=", m, third ? absl::StrCat(" j=", j) : ""));
          std::vector<Literal> arguments;
          arguments.push_back(Arg(mods::DynamicParametersP(n)));
          arguments.push_back(Arg(absl::StrCat("s32[] ", m)));
          if (third) arguments.push_back(Arg(absl::StrCat("s32[] ", j)));
          ExpectInterpretersAnswer(text, *exe, arguments, refusal);
        }
      }
    }
  }
}

void ExpectError(const absl::Status& status, const std::string& message) {
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), message)) << status << "\nwanted: " << message;
}

Literal TupleArgument(int n, int m) {
  return Literal::Tuple({Arg(mods::TupleParameterX(n)), Arg("s32[] 7"),
                         Arg(mods::TupleParameterY(m))});
}

TEST(ApiDynamicTest, ArrayParametersAtEveryRuntimeSize) {
  auto client = NewClient();
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, mods::kDynamicParameters, backend);
    if (exe == nullptr) continue;
    ASSERT_EQ(exe->parameters().size(), 2u);
    EXPECT_EQ(exe->parameters()[0].ToString(), "f32[8]");
    EXPECT_EQ(exe->parameters()[1].ToString(), "f32[4,3]");
    EXPECT_EQ(exe->result_shape().ToString(false), "(f32[], f32[3], s32[], f32[<=8], f32[1,<=8])");
    for (int n : {0, 1, 5, 8}) {
      for (int m : {0, 3, 4}) {
        SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
        std::vector<Literal> arguments;
        arguments.push_back(Arg(mods::DynamicParametersP(n)));
        arguments.push_back(Arg(mods::DynamicParametersQ(m)));
        ExpectInterpretersAnswer(mods::kDynamicParameters, *exe, arguments);
      }
    }
  }
}

// A tuple entry parameter is its array leaves in the API, each of any size
// up to its bound along its dynamic dimensions.
TEST(ApiDynamicTest, TupleParameterWithDynamicLeaves) {
  auto client = NewClient();
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, mods::kTupleParameter, backend);
    if (exe == nullptr) continue;
    ASSERT_EQ(exe->parameters().size(), 3u);
    EXPECT_EQ(exe->parameters()[0].ToString(), "f32[8]");
    EXPECT_EQ(exe->parameters()[2].ToString(), "f32[2,3]");
    for (int n : {0, 1, 5, 8}) {
      for (int m : {0, 2, 3}) {
        SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
        std::vector<Literal> arguments;
        arguments.push_back(TupleArgument(n, m));
        ExpectInterpretersAnswer(mods::kTupleParameter, *exe, arguments);
      }
    }
    std::vector<Literal> past;
    past.push_back(TupleArgument(9, 1));
    ExpectError(exe->Execute(ArgumentBuffers(past)).status(),
                "argument 0 (parameter %p, tuple element 0) dimension 0 has size 9, above its "
                "bound 8");
    past.clear();
    past.push_back(TupleArgument(2, 4));
    ExpectError(exe->Execute(ArgumentBuffers(past)).status(),
                "argument 2 (parameter %p, tuple element 2) dimension 1 has size 4, above its "
                "bound 3");
  }
}

// Sort-by-key and argsort along a runtime-sized dimension: the padding,
// holding values that would sort first, stays out of every result.
TEST(ApiDynamicTest, MultiOperandSortAlongARuntimeSizedDimension) {
  auto client = NewClient();
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, mods::kSortWithValues, backend);
    if (exe == nullptr) continue;
    for (int n : {0, 1, 4, 6}) {
      for (int m : {0, 5, 8}) {
        SCOPED_TRACE(absl::StrCat("n=", n, " m=", m));
        std::vector<Literal> arguments;
        arguments.push_back(Arg(mods::kSortWithValuesP));
        arguments.push_back(Arg(absl::StrCat("s32[] ", n)));
        arguments.push_back(Arg(mods::SortWithValuesQ(m)));
        ExpectInterpretersAnswer(mods::kSortWithValues, *exe, arguments);
      }
    }
  }
}

// Sizes carried into a while loop and conditional branches.
TEST(ApiDynamicTest, SizesFlowIntoLoopsAndBranches) {
  auto client = NewClient();
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, mods::kLoopAndBranches, backend);
    if (exe == nullptr) continue;
    for (int n : {0, 1, 5, 8}) {
      for (int k : {0, 1, 7}) {
        SCOPED_TRACE(absl::StrCat("n=", n, " k=", k));
        std::vector<Literal> arguments;
        arguments.push_back(Arg(mods::DynamicParametersP(n)));
        arguments.push_back(Arg(absl::StrCat("s32[] ", k)));
        ExpectInterpretersAnswer(mods::kLoopAndBranches, *exe, arguments);
      }
    }
  }
}

// Size checks inside a loop body and a branch: the interpreter's answer
// where it has one, else an error naming the set-dimension-size.
TEST(ApiDynamicTest, SizeChecksInLoopsAndBranches) {
  ExpectAnswersOverSizes(mods::kChecksInLoopAndBranch, {0, 1, 3, 4}, {0, 1, 2, 4},
                         "(set-dimension-size)");
}

TEST(ApiDynamicTest, SizeChecksInLoopConditions) {
  ExpectAnswersOverSizes(mods::kCheckInLoopCondition, {0, 1, 3, 4}, {0, 1, 2, 3, 4},
                         "(set-dimension-size)");
}

// A module aliasing a parameter with a result next to a dynamic result:
// the dynamic result comes back at its runtime size, and a donated
// argument leaves the results right (Execute then gives fresh results).
TEST(ApiDynamicTest, AliasingNextToADynamicResult) {
  auto client = NewClient();
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, mods::kAliasedWithDynamicResult, backend);
    if (exe == nullptr) continue;
    for (int n : {0, 3, 8}) {
      SCOPED_TRACE(n);
      std::vector<Literal> arguments;
      arguments.push_back(Arg("f32[8] {1, 2, 3, 4, 5, 6, 7, 8}"));
      arguments.push_back(Arg(absl::StrCat("s32[] ", n)));
      ExpectInterpretersAnswer(mods::kAliasedWithDynamicResult, *exe, arguments);
      ExecuteOptions donate;
      donate.donated_arguments = {0};
      ExpectInterpretersAnswer(mods::kAliasedWithDynamicResult, *exe, arguments, nullptr, donate);
    }
  }
}

TEST(ApiDynamicTest, PadToStaticAndSliceToDynamic) {
  ExpectAnswersOverSizes(mods::kPadToStaticSliceToDynamic, {0, 3, 8}, {0, 5, 8, 9},
                         "SliceToDynamic");
}

TEST(ApiDynamicTest, SlicingARuntimeSizedOperand) {
  ExpectAnswersOverSizes(mods::kSlicingRuntimeSized, {0, 1, 3, 8}, {0, 7, -3},
                         "larger than the operand's runtime size", {6});
}

TEST(ApiDynamicTest, ScatterWithRuntimeSizes) {
  ExpectAnswersOverSizes(mods::kScatterRuntimeSized, {0, 3, 8}, {0, 3, 9},
                         "(set-dimension-size)", {2, 6});
}

// Reduce-windows and convolutions over runtime-sized dimensions.
TEST(ApiDynamicTest, WindowsOverRuntimeSizes) {
  auto client = NewClient();
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, mods::kWindowsRuntimeSized, backend);
    if (exe == nullptr) continue;
    for (int n : {0, 1, 3, 8}) {
      SCOPED_TRACE(n);
      std::vector<Literal> arguments;
      arguments.push_back(Arg(mods::DynamicParametersP(n)));
      ExpectInterpretersAnswer(mods::kWindowsRuntimeSized, *exe, arguments);
    }
  }
}

// Calls whose callees have dynamic shapes.
TEST(ApiDynamicTest, CallsWithDynamicShapes) {
  auto client = NewClient();
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, mods::kDynamicCalls, backend);
    if (exe == nullptr) continue;
    for (int n : {0, 1, 5, 8}) {
      SCOPED_TRACE(n);
      std::vector<Literal> arguments;
      arguments.push_back(Arg(mods::DynamicParametersP(n)));
      ExpectInterpretersAnswer(mods::kDynamicCalls, *exe, arguments);
    }
  }
}

// Sizes no caller should pass: negative (possible only through ArrayViews;
// Buffers refuse them), past the bound, huge. Each is an error naming the
// argument and its parameter, on every target, and nothing runs.
TEST(ApiDynamicTest, NegativeOrOverBoundSizesAreErrorsNamingTheParameter) {
  constexpr char kNegate[] = R"(
HloModule negate
ENTRY e {
  p = f32[<=8] parameter(0)
  w = f32[3] parameter(1)
  ROOT n = f32[3] negate(w)
})";
  auto client = NewClient();
  alignas(64) static float x[16] = {};
  alignas(64) float w[3] = {1, 2, 3};
  alignas(64) float out[3] = {};
  for (Backend backend : kBackends) {
    SCOPED_TRACE(BackendName(backend));
    std::shared_ptr<Executable> exe = CompileOn(*client, kNegate, backend);
    if (exe == nullptr) continue;
    const int64_t three[] = {3};
    const ArrayView weights{F32, three, w};
    const ArrayView result{F32, three, out};
    auto into = [&](int64_t size) {
      const int64_t dims[] = {size};
      const ArrayView arguments[] = {ArrayView{F32, dims, x}, weights};
      return exe->ExecuteInto(arguments, absl::MakeConstSpan(&result, 1));
    };
    for (int64_t size : {int64_t{-1}, -(int64_t{1} << 40)}) {
      ExpectError(into(size),
                  absl::StrCat("argument 0 (parameter %p) dimension 0 has negative size ", size));
    }
    for (int64_t size : {int64_t{9}, int64_t{1} << 40}) {
      ExpectError(into(size), absl::StrCat("argument 0 (parameter %p) dimension 0 has size ", size,
                                           ", above its bound 8"));
    }
    std::vector<Buffer> nine = {*Buffer::WrapHost(F32, {9}, x), *Buffer::WrapHost(F32, {3}, w)};
    ExpectError(exe->Execute(nine).status(),
                "argument 0 (parameter %p) dimension 0 has size 9, above its bound 8");
    // Within the bound both ways run and agree.
    ASSERT_TRUE(into(5).ok());
    EXPECT_EQ(out[2], -3.0f);
  }
  EXPECT_FALSE(Buffer::WrapHost(F32, {-1}, x).ok());
}

// The interpreter target takes dynamic parameters at their runtime sizes
// and returns dynamic results at theirs, as the compiled targets do;
// ExecuteInto and device results, which need fixed shapes, are refused.
TEST(ApiDynamicTest, InterpreterTargetTakesAndReturnsRuntimeSizes) {
  auto client = NewClient();
  std::shared_ptr<Executable> exe = CompileOn(*client, R"(
HloModule through
ENTRY e {
  p = f32[<=8] parameter(0)
  ROOT n = f32[<=8] negate(p)
})", Backend::kInterpreter);
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(exe->results()[0].ToString(), "f32[8]");
  alignas(64) float three[3] = {1, -2, 3};
  const std::vector<Buffer> arguments = {*Buffer::WrapHost(F32, {3}, three)};
  auto negated = exe->Execute(arguments);
  ASSERT_TRUE(negated.ok()) << negated.status();
  EXPECT_EQ((*negated)[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(static_cast<const float*>((*negated)[0].data())[1], 2.0f);
  alignas(64) float into[8] = {};
  const std::vector<Buffer> results = {*Buffer::WrapHost(F32, {8}, into)};
  absl::Status refused = exe->ExecuteInto(arguments, results);
  EXPECT_TRUE(absl::StrContains(refused.message(), "ExecuteInto takes results of fixed shape"))
      << refused;
  ExecuteOptions on_device;
  on_device.results = ResultLocation::kDevice;
  EXPECT_FALSE(exe->Execute(arguments, on_device).ok());
}

}  // namespace
}  // namespace api
}  // namespace hloc
