// LibraryOrGeneratedThunk without a GPU: its steps are fakes that record
// what ran, and the timer is injected, so the choice (timed, cached,
// autotune off, forced, library unusable, timing failures), the cache key
// and value and what Execute runs are all checked on any machine.
#include "runtime/cuda/alternatives_thunk.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/cuda/autotune_cache.h"

namespace hloc {
namespace cuda {
namespace {

// A step that records its initialization and runs under `name`.
class FakeStep : public Thunk {
 public:
  FakeStep(std::string name, std::vector<std::string>* trace, absl::Status init = absl::OkStatus())
      : name_(std::move(name)), trace_(trace), init_(std::move(init)) {}
  absl::Status Initialize(GpuInitContext&) override {
    trace_->push_back(absl::StrCat("init ", name_));
    return init_;
  }
  absl::Status Execute(GpuExecutionContext&) const override {
    trace_->push_back(absl::StrCat("run ", name_));
    return absl::OkStatus();
  }
  void AppendTo(std::string* out, int indent) const override {
    absl::StrAppend(out, std::string(2 * indent, ' '), "fake ", name_, "\n");
  }

 private:
  std::string name_;
  std::vector<std::string>* trace_;
  absl::Status init_;
};

struct Fixture {
  std::vector<std::string> trace;
  std::vector<std::string> log;
  std::map<std::string, absl::StatusOr<double>> times = {{"%gemm.3 library", 0.5},
                                                         {"%gemm.3 generated", 0.2}};
  int timings = 0;

  std::unique_ptr<LibraryOrGeneratedThunk> Thunk(absl::Status library_init = absl::OkStatus()) {
    ThunkSequence library, generated;
    library.push_back(std::make_unique<FakeStep>("lib", &trace, library_init));
    generated.push_back(std::make_unique<FakeStep>("gen", &trace));
    return std::make_unique<LibraryOrGeneratedThunk>(
        "%gemm.3", "hloc.gemm gemm batch=1 m=8 n=8 k=8 | generated hloc_0123", std::move(library),
        std::move(generated));
  }
  GpuInitContext Context(AutotuneCache* cache) {
    GpuInitContext context;
    context.device_name = "Fake GPU";
    context.autotune_cache = cache;
    context.log = &log;
    context.time_sequence = [this](absl::string_view what, const ThunkSequence& sequence,
                                   GpuInitContext&) -> absl::StatusOr<double> {
      ++timings;
      EXPECT_EQ(sequence.size(), 1u);
      auto it = times.find(std::string(what));
      if (it == times.end()) return absl::InternalError(absl::StrCat("unexpected ", what));
      return it->second;
    };
    return context;
  }
  // Runs the thunk once; returns what ran.
  std::vector<std::string> Run(const LibraryOrGeneratedThunk& thunk) {
    trace.clear();
    GpuExecutionContext context;
    EXPECT_TRUE(thunk.Execute(context).ok());
    return trace;
  }
};

TEST(AlternativesThunkTest, TimesBothKeepsTheFasterAndCachesIt) {
  Fixture f;
  AutotuneCache cache;
  auto thunk = f.Thunk();
  GpuInitContext context = f.Context(&cache);
  ASSERT_TRUE(thunk->Initialize(context).ok());
  EXPECT_EQ(f.timings, 2);
  ASSERT_TRUE(thunk->decision().has_value());
  EXPECT_EQ(thunk->decision()->choice, StepAlternative::kGenerated);
  EXPECT_EQ(f.Run(*thunk), std::vector<std::string>({"run gen"}));
  ASSERT_EQ(f.log.size(), 1u);
  EXPECT_EQ(f.log[0], "%gemm.3: library 0.5000 ms vs generated 0.2000 ms -> generated");
  const std::string key =
      LibraryOrGeneratedKey("Fake GPU", "hloc.gemm gemm batch=1 m=8 n=8 k=8 | generated hloc_0123");
  EXPECT_EQ(cache.Lookup(key), "generated 0.5 0.2");

  // The other way round: the library wins, and ties go to it.
  for (double generated : {0.9, 0.5}) {
    Fixture g;
    g.times["%gemm.3 generated"] = generated;
    auto other = g.Thunk();
    GpuInitContext c = g.Context(nullptr);
    ASSERT_TRUE(other->Initialize(c).ok());
    EXPECT_EQ(other->decision()->choice, StepAlternative::kLibrary) << generated;
    EXPECT_EQ(g.Run(*other), std::vector<std::string>({"run lib"}));
  }
}

TEST(AlternativesThunkTest, ReloadPicksTheCachedChoiceWithoutTiming) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/alternatives.tsv");
  std::remove(path.c_str());
  {
    Fixture f;
    absl::StatusOr<std::unique_ptr<AutotuneCache>> cache = AutotuneCache::Open(path);
    ASSERT_TRUE(cache.ok()) << cache.status();
    auto thunk = f.Thunk();
    GpuInitContext context = f.Context(cache->get());
    ASSERT_TRUE(thunk->Initialize(context).ok());
    ASSERT_TRUE((*cache)->Save().ok());
  }
  Fixture f;
  // Timings that would now pick the library: the cache must win.
  f.times["%gemm.3 generated"] = 5.0;
  absl::StatusOr<std::unique_ptr<AutotuneCache>> cache = AutotuneCache::Open(path);
  ASSERT_TRUE(cache.ok()) << cache.status();
  for (bool autotune : {true, false}) {
    f.log.clear();
    auto thunk = f.Thunk();
    GpuInitContext context = f.Context(cache->get());
    context.autotune = autotune;
    ASSERT_TRUE(thunk->Initialize(context).ok());
    EXPECT_EQ(f.timings, 0);
    EXPECT_EQ(thunk->decision()->choice, StepAlternative::kGenerated);
    ASSERT_EQ(f.log.size(), 1u);
    EXPECT_EQ(f.log[0], "%gemm.3: library 0.5000 ms vs generated 0.2000 ms -> generated (cached)");
    std::string plan;
    thunk->AppendTo(&plan, 0);
    EXPECT_TRUE(absl::StrContains(plan, "-> generated (cached)")) << plan;
  }
  // Another device has no entry: timed again.
  auto thunk = f.Thunk();
  GpuInitContext context = f.Context(cache->get());
  context.device_name = "Other GPU";
  ASSERT_TRUE(thunk->Initialize(context).ok());
  EXPECT_EQ(f.timings, 2);
  EXPECT_EQ(thunk->decision()->choice, StepAlternative::kLibrary);
}

TEST(AlternativesThunkTest, WithoutAutotuningOrCacheEntryTheLibraryRuns) {
  Fixture f;
  AutotuneCache cache;
  auto thunk = f.Thunk();
  GpuInitContext context = f.Context(&cache);
  context.autotune = false;
  ASSERT_TRUE(thunk->Initialize(context).ok());
  EXPECT_EQ(f.timings, 0);
  EXPECT_EQ(thunk->decision()->choice, StepAlternative::kLibrary);
  EXPECT_EQ(f.log[0], "%gemm.3: -> library (autotune off)");
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(f.Run(*thunk), std::vector<std::string>({"run lib"}));
}

TEST(AlternativesThunkTest, ForcedSelectionsInitializeOnlyTheirAlternative) {
  for (AlternativeSelection selection :
       {AlternativeSelection::kLibrary, AlternativeSelection::kGenerated}) {
    Fixture f;
    auto thunk = f.Thunk();
    GpuInitContext context = f.Context(nullptr);
    context.alternatives = selection;
    ASSERT_TRUE(thunk->Initialize(context).ok());
    EXPECT_EQ(f.timings, 0);
    const bool library = selection == AlternativeSelection::kLibrary;
    EXPECT_EQ(f.trace, std::vector<std::string>({library ? "init lib" : "init gen"}));
    EXPECT_EQ(f.Run(*thunk), std::vector<std::string>({library ? "run lib" : "run gen"}));
    EXPECT_TRUE(absl::EndsWith(f.log[0], "(forced)")) << f.log[0];
  }
}

TEST(AlternativesThunkTest, UnusableLibraryOrFailedTimingLeavesTheOther) {
  {
    Fixture f;
    auto thunk = f.Thunk(absl::UnimplementedError("cuBLASLt has no algorithm"));
    GpuInitContext context = f.Context(nullptr);
    ASSERT_TRUE(thunk->Initialize(context).ok());
    EXPECT_EQ(thunk->decision()->choice, StepAlternative::kGenerated);
    EXPECT_EQ(f.timings, 0);
    EXPECT_TRUE(absl::StrContains(f.log[0], "library unusable: cuBLASLt has no algorithm"))
        << f.log[0];
  }
  {
    Fixture f;
    AutotuneCache cache;
    f.times["%gemm.3 generated"] = absl::InternalError("launch failed");
    auto thunk = f.Thunk();
    GpuInitContext context = f.Context(&cache);
    ASSERT_TRUE(thunk->Initialize(context).ok());
    EXPECT_EQ(thunk->decision()->choice, StepAlternative::kLibrary);
    EXPECT_TRUE(absl::StrContains(f.log[0], "timing the generated kernels failed")) << f.log[0];
    EXPECT_EQ(cache.size(), 0u);  // Only decisions from two timings are kept.
  }
  {
    Fixture f;
    f.times.clear();
    auto thunk = f.Thunk();
    GpuInitContext context = f.Context(nullptr);
    absl::Status status = thunk->Initialize(context);
    EXPECT_FALSE(status.ok());
    EXPECT_TRUE(absl::StrContains(status.message(), "timing both alternatives failed")) << status;
    GpuExecutionContext run;
    EXPECT_EQ(thunk->Execute(run).code(), absl::StatusCode::kFailedPrecondition);
  }
}

TEST(AlternativesThunkTest, CacheValuesRoundTripAndBadOnesAreRetimed) {
  AlternativeDecision decision;
  decision.choice = StepAlternative::kLibrary;
  decision.library_ms = 0.0123;
  decision.generated_ms = 0.25;
  absl::StatusOr<AlternativeDecision> back =
      DecodeAlternativeDecision(EncodeAlternativeDecision(decision));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->choice, StepAlternative::kLibrary);
  EXPECT_DOUBLE_EQ(back->library_ms, 0.0123);
  EXPECT_DOUBLE_EQ(back->generated_ms, 0.25);
  for (const char* bad : {"", "library", "fastest 1 2", "generated x 2", "library 1 2 3",
                          "library nan 1"}) {
    EXPECT_FALSE(DecodeAlternativeDecision(bad).ok()) << bad;
  }
  EXPECT_NE(LibraryOrGeneratedKey("A", "f"), LibraryOrGeneratedKey("B", "f"));
  EXPECT_NE(LibraryOrGeneratedKey("A", "f"), LibraryOrGeneratedKey("A", "g"));

  Fixture f;
  AutotuneCache cache;
  const std::string key =
      LibraryOrGeneratedKey("Fake GPU", "hloc.gemm gemm batch=1 m=8 n=8 k=8 | generated hloc_0123");
  cache.Insert(key, "garbage");
  auto thunk = f.Thunk();
  GpuInitContext context = f.Context(&cache);
  ASSERT_TRUE(thunk->Initialize(context).ok());
  EXPECT_EQ(f.timings, 2);
  EXPECT_EQ(cache.Lookup(key), "generated 0.5 0.2");
}

TEST(AlternativesThunkTest, PrintsBothAlternativesAndTheChoice) {
  Fixture f;
  auto thunk = f.Thunk();
  std::string before;
  thunk->AppendTo(&before, 1);
  EXPECT_EQ(before,
            "  alternatives %gemm.3 (chosen at load)\n"
            "    library:\n"
            "      fake lib\n"
            "    generated:\n"
            "      fake gen\n");
  EXPECT_FALSE(thunk->ReadsBackToHost());
  GpuInitContext context = f.Context(nullptr);
  ASSERT_TRUE(thunk->Initialize(context).ok());
  std::string after;
  thunk->AppendTo(&after, 0);
  EXPECT_TRUE(absl::StartsWith(
      after, "alternatives %gemm.3 library 0.5000 ms vs generated 0.2000 ms -> generated\n"))
      << after;
}

TEST(AlternativesThunkTest, DeviceTimerNeedsADevice) {
  ThunkSequence empty;
  GpuInitContext context;
  absl::StatusOr<double> ms = TimeSequenceOnDevice("%gemm.3 library", empty, context);
  EXPECT_EQ(ms.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace cuda
}  // namespace hloc
