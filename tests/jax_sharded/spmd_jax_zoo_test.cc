// The SPMD partitioner on every single-device model of the JAX zoo
// (tests/jax/zoo, NAME.before.txt): for each array parameter and each of its
// dimensions that 4 divides, the module with that parameter split 4 ways
// along it (the rest replicated) is partitioned, run on the interpreter's 4
// devices, gathered and compared with the module on one device. A split the
// partitioner cannot make evenly may be refused (Unimplemented, naming the
// instruction); any other error or any wrong value fails.
// (hloc's SPMD partitioner: passes/sharding/spmd_partitioner.h.)
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
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

TEST_P(SpmdJaxZooTest, EverySplitParameterMatchesOneDevice) {
  std::ifstream in(ZooDir() + "/" + GetParam() + ".before.txt");
  ASSERT_TRUE(in.good()) << GetParam();
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text.str());
  ASSERT_TRUE(module.ok()) << module.status();
  int splits = 0, refused = 0;
  for (int64_t p = 0; p < (*module)->entry()->num_parameters(); ++p) {
    const Shape& shape = (*module)->entry()->parameter(p)->shape();
    if (!shape.IsArray()) continue;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (shape.dimensions(d) % 4 != 0) continue;
      std::unique_ptr<HloModule> split = (*module)->Clone();
      xla::OpSharding s;
      s.set_type(xla::OpSharding::OTHER);
      for (int64_t k = 0; k < shape.rank(); ++k) s.add_tile_assignment_dimensions(k == d ? 4 : 1);
      for (int64_t k = 0; k < 4; ++k) s.add_tile_assignment_devices(k);
      split->entry()->parameter(p)->set_sharding(s);
      const std::string what = absl::StrCat(GetParam(), " parameter ", p, " split along ", d);
      absl::StatusOr<SpmdCheck> check =
          CheckSpmdPartition(*split, 4, RunOnInterpreterDevices, {}, kSplitSums);
      if (!check.ok()) {
        EXPECT_EQ(check.status().code(), absl::StatusCode::kUnimplemented)
            << what << ": " << check.status();
        std::cout << what << ": refused: " << check.status().message() << "\n";
        ++refused;
        continue;
      }
      ++splits;
      EXPECT_EQ(check->mismatches, "") << what << "\n" << check->report.ToString();
    }
  }
  RecordProperty("splits", splits);
  RecordProperty("refused", refused);
}

INSTANTIATE_TEST_SUITE_P(JaxZoo, SpmdJaxZooTest, ::testing::ValuesIn(Models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hloc
