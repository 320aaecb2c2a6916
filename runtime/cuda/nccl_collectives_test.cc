// NCCL loading (with a fake libnccl.so.2 and a missing one), the library
// search path, and what the GPU collective thunk accepts and prints. Needs
// no GPU; running the thunks is gpu_collective_device_test's
// (backend/gpu).
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "runtime/cuda/collective_thunk.h"
#include "runtime/cuda/nccl_clique.h"
#include "runtime/cuda/nccl_library.h"

namespace hloc {
namespace cuda {
namespace {

using runtime::CollectiveOp;
using runtime::CollectiveSpec;
using runtime::ElementType;
using runtime::ReductionKind;

std::string FakeNcclPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return "runtime/cuda/libfake_nccl.so";
  return absl::StrCat(srcdir, "/", workspace, "/runtime/cuda/libfake_nccl.so");
}

TEST(NcclLibraryTest, MissingLibraryIsNcclNotFound) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({"libnccl_missing.so.2"});
  ASSERT_FALSE(nccl.ok());
  EXPECT_TRUE(IsLibraryMissing(nccl.status()));
  EXPECT_TRUE(absl::StartsWith(nccl.status().message(),
                               "NCCL not found: dlopen libnccl_missing.so.2 failed: "))
      << nccl.status();
}

TEST(NcclLibraryTest, FakeLibraryResolvesEveryFunction) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({FakeNcclPath()});
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  EXPECT_EQ((*nccl)->version(), 29901);
  EXPECT_TRUE((*nccl)->Check(ncclSuccess, "ncclGroupEnd").ok());
  const absl::Status error = (*nccl)->Check(ncclInternalError, "ncclCommInitAll");
  EXPECT_EQ(error.message(), "ncclCommInitAll: fake internal error (ncclResult_t 3)");
}

// The fake's count of destroyed and aborted communicators.
std::pair<int, int> FakeTeardowns() {
  void* handle = dlopen(FakeNcclPath().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return {-1, -1};
  auto calls = reinterpret_cast<void (*)(int*, int*)>(dlsym(handle, "fake_nccl_calls"));
  std::pair<int, int> counts{-1, -1};
  if (calls != nullptr) calls(&counts.first, &counts.second);
  dlclose(handle);
  return counts;
}

TEST(NcclCliqueTest, AbortAbortsEveryCommunicatorOnceAndRefusesNewOnes) {
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({FakeNcclPath()});
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  const std::pair<int, int> before = FakeTeardowns();
  ASSERT_GE(before.first, 0) << "the fake's call counter is missing";
  {
    absl::StatusOr<std::shared_ptr<NcclClique>> clique =
        NcclClique::CreateWith(nccl->get(), {0, 1, 2, 3});
    ASSERT_TRUE(clique.ok()) << clique.status();
    const std::vector<int64_t> pair = {0, 2}, all = {0, 1, 2, 3};
    ASSERT_TRUE((*clique)->Communicator(pair, 1).ok());
    ASSERT_TRUE((*clique)->Communicator(all, 3).ok());
    EXPECT_TRUE((*clique)->aborted().ok());
    (*clique)->Abort(absl::InternalError("device 2 failed: boom"));
    (*clique)->Abort(absl::InternalError("device 0 failed: later"));  // Kept: the first.
    EXPECT_EQ(FakeTeardowns().second - before.second, 6);  // 2 + 4 communicators, once each.
    EXPECT_EQ((*clique)->aborted().message(), "device 2 failed: boom");
    const absl::StatusOr<ncclComm_t> after = (*clique)->Communicator(pair, 0);
    ASSERT_FALSE(after.ok());
    EXPECT_TRUE(absl::StrContains(after.status().message(), "aborted: device 2 failed: boom"))
        << after.status();
  }
  // Aborted communicators are never destroyed as well.
  EXPECT_EQ(FakeTeardowns().first, before.first);
  // A clique that was not aborted destroys its communicators.
  {
    absl::StatusOr<std::shared_ptr<NcclClique>> clique =
        NcclClique::CreateWith(nccl->get(), {0, 1});
    ASSERT_TRUE(clique.ok()) << clique.status();
    ASSERT_TRUE((*clique)->Communicator(std::vector<int64_t>{0, 1}, 0).ok());
  }
  EXPECT_EQ(FakeTeardowns().first - before.first, 2);
}

TEST(NcclLibraryTest, NotALibraryNamesTheFile) {
  // A library lacking the entry points (the fake CUDA driver has none).
  const std::string driver = absl::StrReplaceAll(FakeNcclPath(), {{"fake_nccl", "fake_cuda"}});
  if (!std::filesystem::exists(driver)) GTEST_SKIP() << "no " << driver;
  absl::StatusOr<std::unique_ptr<NcclLibrary>> nccl = NcclLibrary::Load({driver});
  ASSERT_FALSE(nccl.ok());
  EXPECT_TRUE(absl::StrContains(nccl.status().message(), "lacks functions hloc needs: ncclGetVersion"))
      << nccl.status();
}

TEST(NcclLibraryTest, SearchPathHasExplicitFileFirstAndPipWheels) {
  const std::filesystem::path root =
      std::filesystem::path(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR")
                                                                  : "/tmp") /
      "nccl_search";
  const std::filesystem::path lib = root / "site" / "nvidia" / "nccl" / "lib";
  std::filesystem::create_directories(lib);
  std::ofstream(lib / "libnccl.so.2") << "not a library";
  setenv("HLOC_NCCL_LIBRARY", "/explicit/libnccl.so.2", 1);
  setenv("PYTHONPATH", (root / "site").c_str(), 1);
  const std::vector<std::string> path = NcclLibrary::SearchPath();
  unsetenv("HLOC_NCCL_LIBRARY");
  unsetenv("PYTHONPATH");
  ASSERT_GE(path.size(), 3u);
  EXPECT_EQ(path[0], "/explicit/libnccl.so.2");
  EXPECT_EQ(path[1], "libnccl.so.2");
  EXPECT_NE(std::find(path.begin(), path.end(), (lib / "libnccl.so.2").string()), path.end());
}

// The machine's own NCCL, where there is one (loading needs no GPU).
TEST(NcclLibraryTest, InstalledLibraryLoads) {
  absl::StatusOr<const NcclLibrary*> nccl = NcclLibrary::Get();
  if (!nccl.ok()) GTEST_SKIP() << nccl.status();
  EXPECT_GE((*nccl)->version(), 20000) << (*nccl)->path();
  std::cout << "NCCL " << (*nccl)->version() << " from " << (*nccl)->path() << "\n";
}

CollectiveSpec Spec(CollectiveOp op, ElementType type, ReductionKind reduction) {
  CollectiveSpec spec;
  spec.op = op;
  spec.type = type;
  spec.reduction = reduction;
  spec.groups = {{0, 1}, {2, 3}};
  spec.leaves = {runtime::CollectiveLeaf{8, 1, 0}};
  return spec;
}

TEST(CollectiveThunkTest, NarrowFloatsReduceAsNcclsOwnTypes) {
  // f16 and bf16 reduce as NCCL's half types, not as 16-bit integers or bytes.
  EXPECT_EQ(NcclType(ElementType::kF16), ncclFloat16);
  EXPECT_EQ(NcclType(ElementType::kBF16), ncclBfloat16);
  EXPECT_EQ(NcclType(ElementType::kF32), ncclFloat32);
  EXPECT_EQ(NcclType(ElementType::kF64), ncclFloat64);
  EXPECT_FALSE(NcclType(ElementType::kU16).has_value());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kF16,
                                    ReductionKind::kSum)).ok());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kReduceScatter, ElementType::kF16,
                                    ReductionKind::kMin)).ok());
  EXPECT_FALSE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kF16,
                                     ReductionKind::kAnd)).ok());
}

TEST(CollectiveThunkTest, NcclTakesArithmeticReductionsAndPredLogic) {
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kF32,
                                    ReductionKind::kSum)).ok());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kReduceScatter, ElementType::kBF16,
                                    ReductionKind::kMax)).ok());
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kPred,
                                    ReductionKind::kAnd)).ok());
  const absl::Status bitwise =
      CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kS32, ReductionKind::kOr));
  EXPECT_EQ(bitwise.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(bitwise.message(), "NCCL has no or reduction over s32"))
      << bitwise;
  EXPECT_FALSE(CheckNcclSupport(Spec(CollectiveOp::kAllReduce, ElementType::kS16,
                                     ReductionKind::kSum)).ok());
  // Moving bytes needs no NCCL type.
  EXPECT_TRUE(CheckNcclSupport(Spec(CollectiveOp::kAllGather, ElementType::kS16,
                                    ReductionKind::kSum)).ok());
}

TEST(CollectiveThunkTest, ScratchOnlyForInnerDimensionsOfSeveralDevices) {
  CollectiveSpec gather = Spec(CollectiveOp::kAllGather, ElementType::kF32, ReductionKind::kSum);
  gather.leaves = {runtime::CollectiveLeaf{12, 3, 16}};
  EXPECT_EQ(CollectiveScratchBytes(gather), 2 * 3 * 16);
  CollectiveSpec to_all = gather;
  to_all.op = CollectiveOp::kAllToAll;
  EXPECT_EQ(CollectiveScratchBytes(to_all), 2 * 2 * 3 * 16);
  gather.leaves[0].outer = 1;
  EXPECT_EQ(CollectiveScratchBytes(gather), 0);
  CollectiveSpec alone = to_all;
  alone.groups = {{0}};
  EXPECT_EQ(CollectiveScratchBytes(alone), 0);
  EXPECT_EQ(CollectiveScratchBytes(
                Spec(CollectiveOp::kAllReduce, ElementType::kF32, ReductionKind::kSum)),
            0);
}

// The row copies, applied with memcpy, move bytes as the host's packing does.
std::vector<char> ApplyRowCopies(const std::vector<RowCopy>& copies, const std::vector<char>& in) {
  std::vector<char> out(in.size(), 0);
  for (const RowCopy& c : copies) {
    for (int64_t r = 0; r < c.rows; ++r) {
      std::memcpy(out.data() + c.destination + r * c.destination_pitch,
                  in.data() + c.source + r * c.source_pitch, static_cast<size_t>(c.row_bytes));
    }
  }
  return out;
}

TEST(CollectiveThunkTest, RowCopiesRepackAsTheHostDoes) {
  for (const auto& [outer, n, block] : {std::tuple<int64_t, int64_t, int64_t>{3, 4, 8},
                                        {2, 2, 4}, {5, 1, 12}, {1, 3, 4}}) {
    std::vector<char> input(static_cast<size_t>(outer * n * block));
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<char>(i * 7 + 1);
    std::vector<char> packed(input.size()), unpacked(input.size());
    runtime::PackBlocks(input.data(), packed.data(), outer, n, block);
    EXPECT_EQ(ApplyRowCopies(PackCopies(outer, n, block), input), packed)
        << outer << "x" << n << "x" << block;
    runtime::UnpackBlocks(packed.data(), unpacked.data(), outer, n, block);
    EXPECT_EQ(ApplyRowCopies(UnpackCopies(outer, n, block), packed), unpacked);
    EXPECT_EQ(unpacked, input);
  }
}

TEST(CollectiveThunkTest, PrintsOpGroupsAndBuffers) {
  CollectiveThunk thunk("%all-reduce.1",
                        Spec(CollectiveOp::kAllReduce, ElementType::kF32, ReductionKind::kSum),
                        {3, 4});
  std::string text;
  thunk.AppendTo(&text, 1);
  EXPECT_EQ(text, "  nccl all-reduce %all-reduce.1 sum f32 groups={{0,1},{2,3}} buffers=3,4\n");
}

}  // namespace
}  // namespace cuda
}  // namespace hloc
