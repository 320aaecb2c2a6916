// The SPMD partitioner on every single-device model of the JAX zoo
// (tests/jax/zoo, NAME.before.txt): for each array parameter, the module
// with that parameter split (the rest replicated) 4 ways along each
// dimension 4 divides, 2 ways (replicated in pairs) along each dimension 2
// divides, and 2x2 along each pair of such dimensions, is partitioned, run
// on the interpreter's 4 devices, gathered and compared with one device. A split the
// partitioner cannot make evenly may be refused (Unimplemented, naming the
// instruction); any other error or any wrong value fails.
// (hloc's SPMD partitioner: passes/sharding/spmd_partitioner.h.)
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "backend/host/run_on_host_devices.h"
#include "hlo/text_parser.h"
#include "passes/sharding/spmd_check.h"

namespace hloc {
namespace {

std::string ZooDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr) {
    return absl::StrCat(srcdir, "/", workspace ? workspace : "hloc", "/tests/jax/zoo");
  }
  return "tests/jax/zoo";
}

std::vector<std::string> Models() {
  std::vector<std::string> names;
  std::ifstream manifest(ZooDir() + "/MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // Header.
  while (std::getline(manifest, line)) {
    if (!line.empty()) names.push_back(line.substr(0, line.find('\t')));
  }
  return names;
}

// Sums split over devices (dots over split contracting dimensions, split
// reductions) add in another order than one device does: f32 results then
// differ by a few ulps of the partial sums (seen: 4e-5 absolute on values
// near 0.03). A wrong block or a missing sum is off by far more.
const Tolerance kSplitSums = {/*rtol=*/1e-3, /*atol=*/1e-4};

class SpmdJaxZooTest : public ::testing::TestWithParam<std::string> {};
class SpmdJaxZooHostTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SpmdJaxZooTest, EverySplitParameterMatchesOneDevice) {
  std::ifstream in(ZooDir() + "/" + GetParam() + ".before.txt");
  ASSERT_TRUE(in.good()) << GetParam();
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text.str());
  ASSERT_TRUE(module.ok()) << module.status();
  int splits = 0, refused = 0;
  auto check_split = [&](int64_t p, const xla::OpSharding& s, const std::string& how) {
    std::unique_ptr<HloModule> split = (*module)->Clone();
    split->entry()->parameter(p)->set_sharding(s);
    const std::string what = absl::StrCat(GetParam(), " parameter ", p, " ", how);
    absl::StatusOr<SpmdCheck> check =
        CheckSpmdPartition(*split, 4, RunOnInterpreterDevices, {}, kSplitSums);
    if (!check.ok()) {
      EXPECT_EQ(check.status().code(), absl::StatusCode::kUnimplemented)
          << what << ": " << check.status();
      std::cout << what << ": refused: " << check.status().message() << "\n";
      ++refused;
      return;
    }
    ++splits;
    EXPECT_EQ(check->mismatches, "") << what << "\n" << check->report.ToString();
  };
  // Tiles per dimension (and replicas) on devices 0..3 in order.
  auto tiled = [](int64_t rank, const std::vector<std::pair<int64_t, int64_t>>& dims,
                  int64_t replicas) {
    xla::OpSharding s;
    s.set_type(xla::OpSharding::OTHER);
    for (int64_t k = 0; k < rank; ++k) {
      int64_t t = 1;
      for (const auto& [d, n] : dims) t = d == k ? n : t;
      s.add_tile_assignment_dimensions(t);
    }
    if (replicas > 1) {
      s.add_tile_assignment_dimensions(replicas);
      s.set_replicate_on_last_tile_dim(true);
    }
    for (int64_t k = 0; k < 4; ++k) s.add_tile_assignment_devices(k);
    return s;
  };
  for (int64_t p = 0; p < (*module)->entry()->num_parameters(); ++p) {
    const Shape& shape = (*module)->entry()->parameter(p)->shape();
    if (!shape.IsArray()) continue;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (shape.dimensions(d) % 4 == 0) {
        check_split(p, tiled(shape.rank(), {{d, 4}}, 1), absl::StrCat("split 4 along ", d));
      }
      if (shape.dimensions(d) % 2 != 0) continue;
      // A 2x2 mesh: this dimension by its major axis, replicated over the other.
      check_split(p, tiled(shape.rank(), {{d, 2}}, 2), absl::StrCat("split 2 along ", d));
      for (int64_t e = d + 1; e < shape.rank(); ++e) {
        if (shape.dimensions(e) % 2 != 0) continue;
        check_split(p, tiled(shape.rank(), {{d, 2}, {e, 2}}, 1),
                    absl::StrCat("split 2x2 along ", d, ",", e));
      }
    }
  }
  RecordProperty("splits", splits);
  RecordProperty("refused", refused);
}

// The 4-way splits on the host backend's 4 devices (compiled; slower, so
// only these).
TEST_P(SpmdJaxZooHostTest, FourWaySplitsMatchOneDevice) {
  std::ifstream in(ZooDir() + "/" + GetParam() + ".before.txt");
  ASSERT_TRUE(in.good()) << GetParam();
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text.str());
  ASSERT_TRUE(module.ok()) << module.status();
  DeviceRunner run = [](const HloModule& m, absl::Span<const std::vector<Literal>> args) {
    return RunOnHostDevices(m, args);
  };
  for (int64_t p = 0; p < (*module)->entry()->num_parameters(); ++p) {
    const Shape& shape = (*module)->entry()->parameter(p)->shape();
    if (!shape.IsArray() || shape.rank() == 0 || shape.dimensions(0) % 4 != 0) continue;
    std::unique_ptr<HloModule> split = (*module)->Clone();
    xla::OpSharding s;
    s.set_type(xla::OpSharding::OTHER);
    for (int64_t k = 0; k < shape.rank(); ++k) s.add_tile_assignment_dimensions(k == 0 ? 4 : 1);
    for (int64_t k = 0; k < 4; ++k) s.add_tile_assignment_devices(k);
    split->entry()->parameter(p)->set_sharding(s);
    absl::StatusOr<SpmdCheck> check = CheckSpmdPartition(*split, 4, run, {}, kSplitSums);
    ASSERT_TRUE(check.ok()) << GetParam() << " parameter " << p << ": " << check.status();
    EXPECT_EQ(check->mismatches, "") << GetParam() << " parameter " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(JaxZoo, SpmdJaxZooHostTest, ::testing::ValuesIn(Models()),
                         [](const auto& info) { return info.param; });

INSTANTIATE_TEST_SUITE_P(JaxZoo, SpmdJaxZooTest, ::testing::ValuesIn(Models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hloc
