// Helpers for the GPU code generation tests: parse HLO text, find ptxas and
// FileCheck in the test's runfiles, and run FileCheck on generated text.
#ifndef HLOC_BACKEND_GPU_GPU_TEST_UTIL_H_
#define HLOC_BACKEND_GPU_GPU_TEST_UTIL_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "hlo/module.h"

namespace hloc {
namespace gpu {

std::unique_ptr<HloModule> ParseForTest(absl::string_view text);

// $TEST_SRCDIR/cuda/bin/ptxas (a data dependency), or "" outside Bazel.
std::string RunfilesPtxas();

// Runs LLVM's FileCheck (from the runfiles) with `checks` over `input`.
::testing::AssertionResult FileCheck(const std::string& input, const std::string& checks);

}  // namespace gpu
}  // namespace hloc

#endif  // HLOC_BACKEND_GPU_GPU_TEST_UTIL_H_
