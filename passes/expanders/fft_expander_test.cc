// FftExpander: the interpreter gives the same results before and after
// expansion on every fft case of expander_test_cases.cc (FFT, IFFT, RFFT,
// IRFFT; one to three dimensions; lengths 1, primes, direct and four-step;
// c64/c128; an empty batch; a column-major operand), and the expansion is
// matrix products, with no fft left.
#include "passes/expanders/fft_expander.h"

#include "gtest/gtest.h"
#include "passes/expanders/expander_test_cases.h"
#include "passes/test_util.h"

namespace hloc {
namespace {

using expanders::CountEverywhere;
using expanders::ExpanderCase;

class FftCaseTest : public ::testing::TestWithParam<ExpanderCase> {};

TEST_P(FftCaseTest, InterpreterAgreesBeforeAndAfter) {
  for (uint64_t seed : {1, 2}) {
    absl::StatusOr<std::unique_ptr<HloModule>> expanded =
        expanders::ExpandAndCompare(GetParam(), seed);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, FftCaseTest,
                         ::testing::ValuesIn(expanders::ExpanderCasesFor(HloOpcode::kFft)),
                         [](const ::testing::TestParamInfo<ExpanderCase>& info) {
                           return info.param.name;
                         });

// Length 256 splits into 16 x 16 and each 16 into 4 x 4: four products of
// 4 x 4 matrices, not one 256 x 256 product.
TEST(FftExpanderTest, LongLengthsSplitIntoSmallProducts) {
  auto module = testing::ParseAndVerifyOrFail(R"(
HloModule m
ENTRY e {
  x = c64[2,256] parameter(0)
  ROOT f = c64[2,256] fft(x), fft_type=FFT, fft_length={256}
}
)");
  FftExpander expander;
  ASSERT_TRUE(expander.Run(*module).value());
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kFft), 0);
  EXPECT_EQ(CountEverywhere(*module, HloOpcode::kDot), 4);
  for (const HloInstruction* hlo : module->entry()->instructions()) {
    if (hlo->opcode() != HloOpcode::kDot) continue;
    EXPECT_EQ(hlo->operand(1)->shape().dimensions(), (std::vector<int64_t>{4, 4}));
  }
}

}  // namespace
}  // namespace hloc
