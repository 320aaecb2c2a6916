// Acceptance with no GPU: every JAX zoo model (tests/jax/zoo/*.before.txt)
// and every corpus module that parses and verifies ($HLOC_CORPUS_DIR/xla
// and /xla2023) goes through the default pipeline (a failure there fails
// the test, naming the module) and has every kernel compiled to
// PTX and assembled by ptxas, for sm_80 and for sm_90. Fusions no emitter
// covers are split into one-op kernels, as the runtime would run them; the
// op kinds that still get Unimplemented are listed (and must not be
// elementwise). RowNormalizationFusion runs after the default pipeline, as
// in the CUDA pipeline. Work runs on all cores; the corpus is split into
// shards.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_test_util.h"
#include "backend/gpu/kernel_codegen.h"
#include "backend/gpu/kernel_sites.h"
#include "backend/gpu/row_normalization_fusion.h"
#include "backend/llvm/kernel_fingerprint.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "passes/standard_pipelines.h"

namespace hloc {
namespace gpu {
namespace {

// Which part of the work this test process does (Bazel test sharding).
struct Shard {
  int index = 0, count = 1;
  Shard() {
    const char* index_env = std::getenv("TEST_SHARD_INDEX");
    const char* count_env = std::getenv("TEST_TOTAL_SHARDS");
    if (index_env != nullptr && count_env != nullptr) {
      index = std::atoi(index_env);
      count = std::max(1, std::atoi(count_env));
    }
    // Tell Bazel this test knows about sharding.
    if (const char* status = std::getenv("TEST_SHARD_STATUS_FILE")) std::ofstream(status) << "";
  }
  bool Mine(size_t i) const { return static_cast<int>(i % count) == index; }
};

struct Job {
  std::string where;
  const HloComputation* computation;
  std::shared_ptr<HloComputation> wrapper;
  const HloInstruction* instruction;
  bool fused;
};

class Acceptance {
 public:
  Acceptance() {
    for (int t = 0; t < 2; ++t) {
      GpuCompileOptions options;
      options.target = GpuTarget::ForComputeCapability(t == 0 ? 80 : 90);
      options.ptxas_path = RunfilesPtxas();
      caches_[t] = std::make_unique<GpuKernelCache>(options);
    }
  }

  // Runs the default pipeline and queues the module's kernels.
  void AddModule(const std::string& id, std::unique_ptr<HloModule> module) {
    ++modules_seen_;
    if (!VerifyModule(*module).ok()) return;
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
        MakeStandardPipeline("default", PipelineOptions(), nullptr);
    absl::Status ran = pipeline.ok() ? (*pipeline)->Run(*module).status() : pipeline.status();
    if (!ran.ok()) {
      ++pipeline_failures_;
      failures_.push_back(absl::StrCat(id, ": default pipeline: ", ran.message()));
      return;
    }
    // The CUDA pipeline's own last fusion step: its merged fusions must
    // verify and assemble too.
    RowNormalizationFusion row_normalization;
    absl::StatusOr<bool> merged = row_normalization.Run(*module);
    absl::Status verified = merged.ok() ? VerifyModule(*module) : merged.status();
    if (!verified.ok()) {
      failures_.push_back(absl::StrCat(id, ": row-normalization-fusion: ", verified.message()));
      return;
    }
    ++modules_compiled_;
    KernelSites sites = CollectKernelSites(*module);
    for (KernelSite& site : sites.kernels) {
      jobs_.push_back({absl::StrCat(id, " %", site.instruction->name()), site.computation,
                       std::move(site.wrapper), site.instruction, site.fused});
    }
    for (const HloInstruction* op : sites.library_ops) {
      ++library_ops_[std::string(HloOpcodeName(op->opcode()))];
    }
    modules_.push_back(std::move(module));
  }

  // Distinct computations (by fingerprint) go through CompileGpuKernels in
  // batches, so ptxas runs once per batch and target rather than once per
  // kernel; batches run on all cores. Fusions no emitter covers are then
  // split into one-op kernels, compiled one by one.
  void Run() {
    const auto start = std::chrono::steady_clock::now();
    absl::flat_hash_map<std::string, size_t> by_fingerprint;
    std::vector<const HloComputation*> distinct;
    std::vector<size_t> job_kernel;
    for (const Job& job : jobs_) {
      const std::string fingerprint = codegen::KernelFingerprint(*job.computation);
      auto [it, inserted] = by_fingerprint.emplace(fingerprint, distinct.size());
      if (inserted || fingerprint.empty()) {
        it->second = distinct.size();
        distinct.push_back(job.computation);
      }
      job_kernel.push_back(it->second);
    }
    distinct_ = static_cast<int64_t>(distinct.size());
    for (int t = 0; t < 2; ++t) results_[t].assign(distinct.size(), absl::UnknownError("not run"));
    constexpr size_t kBatch = 24;
    std::atomic<size_t> next{0};
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < threads; ++w) {
      workers.emplace_back([&] {
        for (size_t begin = next.fetch_add(kBatch); begin < distinct.size();
             begin = next.fetch_add(kBatch)) {
          const size_t end = std::min(distinct.size(), begin + kBatch);
          for (int t = 0; t < 2; ++t) CompileBatch(distinct, begin, end, t);
        }
      });
    }
    for (std::thread& worker : workers) worker.join();
    for (size_t j = 0; j < jobs_.size(); ++j) {
      Record(jobs_[j], {&results_[0][job_kernel[j]], &results_[1][job_kernel[j]]});
    }
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void Report(const char* what) {
    std::cout << what << ": " << modules_seen_ << " modules, " << modules_compiled_
              << " through the default pipeline (" << pipeline_failures_ << " pipeline failures), "
              << jobs_.size() << " kernel sites; " << kernels_
              << " kernels compiled, assembled by ptxas for sm_80: " << assembled_[0]
              << ", sm_90: " << assembled_[1] << " (" << distinct_
              << " distinct computations, compiled in batches), " << split_fusions_
              << " fusions split into ops, " << seconds_ << " s\n";
    for (const auto& [strategy, count] : strategies_) {
      std::cout << "  strategy " << strategy << ": " << count << "\n";
    }
    for (const auto& [op, count] : library_ops_) {
      std::cout << "  library/fallback op " << op << ": " << count << "\n";
    }
    for (const auto& [op, examples] : unimplemented_) {
      std::cout << "  unimplemented " << op << " (" << examples.size() << "x), e.g. "
                << examples.front() << "\n";
    }
    for (const std::string& failure : failures_) ADD_FAILURE() << failure;
    EXPECT_EQ(assembled_[0], kernels_);
    EXPECT_EQ(assembled_[1], kernels_);
  }

  int64_t kernels() const { return kernels_; }

 private:
  // Per distinct kernel and target: its strategy when it compiled and was
  // assembled (or needs no launch), else the error.
  using Result = absl::StatusOr<std::string>;

  void CompileBatch(const std::vector<const HloComputation*>& distinct, size_t begin, size_t end,
                    int t) {
    const GpuCompileOptions& options = caches_[t]->options();
    std::vector<const HloComputation*> part(distinct.begin() + begin, distinct.begin() + end);
    absl::StatusOr<GpuKernelBatch> batch = CompileGpuKernels(part, options);
    if (!batch.ok()) {
      // One kernel spoiled the batch: compile each alone to say which.
      for (size_t i = begin; i < end; ++i) results_[t][i] = CompileAlone(*distinct[i], t);
      return;
    }
    for (size_t i = begin; i < end; ++i) {
      const absl::StatusOr<GpuKernel>& kernel = batch->kernels[i - begin];
      if (!kernel.ok()) {
        results_[t][i] = kernel.status();
      } else if (batch->cubin.empty()) {
        results_[t][i] = absl::InternalError(absl::StrCat("no cubin: ", batch->note));
      } else {
        results_[t][i] = kernel->strategy;
      }
    }
  }

  Result CompileAlone(const HloComputation& computation, int t) {
    absl::StatusOr<std::shared_ptr<const GpuKernel>> kernel = caches_[t]->GetOrCompile(computation);
    if (!kernel.ok()) return kernel.status();
    if ((*kernel)->cubin.empty()) {
      return absl::InternalError(absl::StrCat("no cubin: ", (*kernel)->note));
    }
    return (*kernel)->strategy;
  }

  void Record(const Job& job, std::array<const Result*, 2> results) {
    if (!results[0]->ok() && results[0]->status().code() == absl::StatusCode::kUnimplemented) {
      Unimplemented(job, results[0]->status());
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    bool compiled = false;
    for (int t = 0; t < 2; ++t) {
      if (!results[t]->ok()) {
        failures_.push_back(absl::StrCat(job.where, " sm_", t == 0 ? 80 : 90, ": ",
                                         results[t]->status().ToString()));
        continue;
      }
      if (!compiled) {
        compiled = true;
        ++kernels_;
        ++strategies_[**results[t]];
      }
      ++assembled_[t];
    }
  }

  void Unimplemented(const Job& job, const absl::Status& status) {
    if (job.fused) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++split_fusions_;
      }
      KernelSites split = SplitFusion(*job.instruction);
      for (KernelSite& site : split.kernels) {
        const Result results[2] = {CompileAlone(*site.computation, 0),
                                   CompileAlone(*site.computation, 1)};
        Record({absl::StrCat(job.where, "/%", site.instruction->name()), site.computation,
                site.wrapper, site.instruction, false},
               {&results[0], &results[1]});
      }
      std::lock_guard<std::mutex> lock(mu_);
      for (const HloInstruction* op : split.library_ops) {
        ++library_ops_[std::string(HloOpcodeName(op->opcode()))];
      }
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    const std::string op(HloOpcodeName(job.instruction->opcode()));
    unimplemented_[op].push_back(absl::StrCat(job.where, ": ", status.message()));
    // Elementwise ops have an elemental form for every element type the
    // emitter supports; anything else is a defect. complex (builds complex
    // values) and stochastic-convert (random rounding) are left out of the
    // shared emitter by design.
    const HloOpcode opcode = job.instruction->opcode();
    if ((IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) &&
        opcode != HloOpcode::kComplex && opcode != HloOpcode::kStochasticConvert &&
        !absl::StrContains(status.message(), "element type")) {
      failures_.push_back(
          absl::StrCat(job.where, ": elementwise op unimplemented: ", status.message()));
    }
  }

  std::unique_ptr<GpuKernelCache> caches_[2];  // For kernels compiled alone.
  std::vector<Result> results_[2];
  int64_t distinct_ = 0;
  std::vector<std::unique_ptr<HloModule>> modules_;
  std::vector<Job> jobs_;
  std::mutex mu_;
  int64_t modules_seen_ = 0, modules_compiled_ = 0, pipeline_failures_ = 0;
  int64_t kernels_ = 0, split_fusions_ = 0;
  int64_t assembled_[2] = {0, 0};
  double seconds_ = 0;
  std::map<std::string, int64_t> strategies_, library_ops_;
  std::map<std::string, std::vector<std::string>> unimplemented_;
  std::vector<std::string> failures_;
};

TEST(GpuAcceptance, JaxZoo) {
  const std::string dir = testdata::ZooDir();
  std::vector<std::string> files = testdata::ListFiles(dir, ".before.txt");
  if (files.empty()) GTEST_SKIP() << "tests/jax/zoo not found";
  if (RunfilesPtxas().empty()) GTEST_SKIP() << "no runfiles (ptxas)";
  Shard shard;
  Acceptance acceptance;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!shard.Mine(i)) continue;
    std::string text;
    ASSERT_TRUE(testdata::ReadFile(dir + "/" + files[i], &text)) << files[i];
    ParseOptions options;
    options.filename = files[i];
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, options);
    ASSERT_TRUE(module.ok()) << module.status();
    acceptance.AddModule(files[i], *std::move(module));
  }
  acceptance.Run();
  acceptance.Report("zoo");
  if (shard.count == 1) {
    EXPECT_GE(acceptance.kernels(), 50);
  }
}

TEST(GpuAcceptance, XlaCorpus) {
  const std::string root = testdata::CorpusDir();
  if (root.empty()) GTEST_SKIP() << "HLOC_CORPUS_DIR is not set and the workspace is unknown";
  if (RunfilesPtxas().empty()) GTEST_SKIP() << "no runfiles (ptxas)";
  Shard shard;
  Acceptance acceptance;
  size_t file_index = 0;
  // HLOC_GPU_ACCEPTANCE_FILTER=TEXT limits the run to files naming TEXT.
  const char* filter = std::getenv("HLOC_GPU_ACCEPTANCE_FILTER");
  std::vector<testdata::CorpusModule> modules;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(root)) {
    if (filter != nullptr && !absl::StrContains(file.name, filter)) continue;
    if (!shard.Mine(file_index++)) continue;
    if (!testdata::ParseCorpusFile(file, &modules)) continue;
    for (testdata::CorpusModule& piece : modules) {
      if (piece.module.ok()) acceptance.AddModule(piece.id, *std::move(piece.module));
    }
  }
  if (file_index == 0) GTEST_SKIP() << "no corpus modules under " << root;
  acceptance.Run();
  acceptance.Report("corpus");
}

}  // namespace
}  // namespace gpu
}  // namespace hloc
