// BufferSharing's loop-result rule with a writing kernel that reads the
// donor (buffer_sharing.h, "loop result"): taken only where that kernel
// reads the donor at the index it writes the taker (a kElementwise pair at
// the taker's first write), refused for every other read; and kElementwise
// pairs in straight-line code.
#include "backend/common/buffer_sharing.h"

#include <vector>

#include "gtest/gtest.h"

namespace hloc {
namespace backend {
namespace {

using runtime::BufferId;
using runtime::BufferSpec;
using Kind = BufferSharing::Kind;

constexpr BufferId kState = 0;   // The loop's state leaf (the donor).
constexpr BufferId kResult = 1;  // The body's result leaf (the taker).
constexpr BufferId kOther = 2;   // Another temporary the kernel writes.
constexpr BufferId kInput = 3;   // An input the kernel reads.

// Steps of the loop below.
constexpr int64_t kInit = 1;       // The state is copied from its initial value.
constexpr int64_t kCondition = 2;  // The condition reads the state.
constexpr int64_t kKernel = 3;     // The kernel writes the result (and kOther).
constexpr int64_t kLater = 4;      // A later kernel of the body.
constexpr int64_t kCopyBack = 5;   // The result is copied into the state.
constexpr int64_t kEnd = 6;

std::vector<BufferSpec> Buffers() {
  std::vector<BufferSpec> buffers(4);
  const int64_t live[4][2] = {
      {kInit, kEnd}, {kKernel, kCopyBack}, {kKernel, kLater}, {kInit, kKernel}};
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].size = 1024;
    buffers[i].live.size = 1024;
    buffers[i].live.first_use = live[i][0];
    buffers[i].live.last_use = live[i][1];
  }
  return buffers;
}

// A loop whose body's kernel at kKernel reads the state and kInput and
// writes kResult (result leaf 0) and kOther; `extra` adds what each case
// needs (candidates at the kernel's step, reads).
template <typename Extra>
BufferId SharedWith(Extra extra) {
  BufferSharing sharing;
  sharing.Read(kInput, kInit);
  const int loop = sharing.BeginLoop(kCondition);
  sharing.EnterCondition(loop);
  sharing.Read(kState, kCondition);
  sharing.Exit();
  sharing.EnterBody(loop);
  sharing.Read(kState, kKernel);
  sharing.Read(kInput, kKernel);
  extra(sharing);
  sharing.AddCandidate(Kind::kLoopResult, kState, kResult, kLater);
  sharing.Exit();
  sharing.Read(kResult, kCopyBack);
  sharing.EndLoop(loop, kEnd, {kState}, {kResult});
  std::vector<BufferSpec> buffers = Buffers();
  sharing.Resolve(&buffers);
  return buffers[kResult].shares;
}

TEST(BufferSharingTest, KernelReadingTheStateWhereItWritesTheResultWritesItInPlace) {
  EXPECT_EQ(SharedWith([](BufferSharing& s) {
              s.AddCandidate(Kind::kElementwise, kState, kResult, kKernel);
            }),
            kState);
}

TEST(BufferSharingTest, KernelReadingTheStateElsewhereDoesNot) {
  // No kElementwise pair: the kernel reads the state at other indices (or
  // for another output).
  EXPECT_EQ(SharedWith([](BufferSharing&) {}), -1);
}

TEST(BufferSharingTest, StateReadWhereAnotherOutputIsWrittenIsNotEnough) {
  EXPECT_EQ(SharedWith([](BufferSharing& s) {
              s.AddCandidate(Kind::kElementwise, kState, kOther, kKernel);
            }),
            -1);
}

TEST(BufferSharingTest, ElementwisePairOfAnotherStepIsNotEnough) {
  // A kernel at the condition's step read the state elementwise, not the
  // one writing the result.
  EXPECT_EQ(SharedWith([](BufferSharing& s) {
              s.AddCandidate(Kind::kElementwise, kState, kResult, kCondition);
            }),
            -1);
}

TEST(BufferSharingTest, StateReadAfterTheResultIsWrittenStaysApart) {
  EXPECT_EQ(SharedWith([](BufferSharing& s) {
              s.AddCandidate(Kind::kElementwise, kState, kResult, kKernel);
              s.Read(kState, kLater);
            }),
            -1);
}

TEST(BufferSharingTest, LastReaderWritesElementwiseInTheDonorsBytes) {
  // Straight line: the kernel at kKernel is the donor's last reader.
  BufferSharing sharing;
  sharing.Read(kState, kKernel);
  sharing.AddCandidate(Kind::kElementwise, kState, kResult, kKernel);
  std::vector<BufferSpec> buffers = Buffers();
  const BufferSharing::Decisions decisions = sharing.Resolve(&buffers);
  EXPECT_EQ(buffers[kResult].shares, kState);
  EXPECT_EQ(decisions.elementwise, 1);
  EXPECT_EQ(decisions.shared_bytes, 1024);
  // Unless the taker is kept alone (an output a donated argument may hold).
  std::vector<BufferSpec> apart = Buffers();
  EXPECT_EQ(sharing.Resolve(&apart, {kResult}).elementwise, 0);
  EXPECT_EQ(apart[kResult].shares, -1);
}

TEST(BufferSharingTest, ElementwisePairStaysApartWhereTheDonorIsReadLaterOrComesFromOutside) {
  {
    // Read again after the kernel (a later kernel, or the program's output).
    BufferSharing sharing;
    sharing.Read(kState, kKernel);
    sharing.Read(kState, kLater);
    sharing.AddCandidate(Kind::kElementwise, kState, kResult, kKernel);
    std::vector<BufferSpec> buffers = Buffers();
    EXPECT_EQ(sharing.Resolve(&buffers).elementwise, 0);
    EXPECT_EQ(buffers[kResult].shares, -1);
  }
  {
    // The kernel runs in a loop body, the donor was defined before the
    // loop: the next iteration reads it again.
    BufferSharing sharing;
    const int loop = sharing.BeginLoop(kCondition);
    sharing.EnterBody(loop);
    sharing.Read(kState, kKernel);
    sharing.AddCandidate(Kind::kElementwise, kState, kResult, kKernel);
    sharing.Exit();
    sharing.EndLoop(loop, kEnd, {}, {});
    std::vector<BufferSpec> buffers = Buffers();
    EXPECT_EQ(sharing.Resolve(&buffers).elementwise, 0);
    EXPECT_EQ(buffers[kResult].shares, -1);
  }
}

// In a loop body a kernel reads the state and a temporary the body wrote
// before it (a gemm's result), both only where it writes the body's result:
// the result goes in the state's bytes, which saves the copy back every
// iteration, not in the temporary's (which would refuse the loop result).
TEST(BufferSharingTest, LoopResultOutranksAnElementwisePairOnTheSameTaker) {
  constexpr int64_t kGemm = 3, kAdd = 4, kBack = 5, kDone = 6;
  BufferSharing sharing;
  const int loop = sharing.BeginLoop(kCondition);
  sharing.EnterCondition(loop);
  sharing.Read(kState, kCondition);
  sharing.Exit();
  sharing.EnterBody(loop);
  sharing.Read(kState, kAdd);
  sharing.Read(kOther, kAdd);
  sharing.AddCandidate(Kind::kElementwise, kOther, kResult, kAdd);
  sharing.AddCandidate(Kind::kElementwise, kState, kResult, kAdd);
  sharing.AddCandidate(Kind::kLoopResult, kState, kResult, kAdd);
  sharing.Exit();
  sharing.Read(kResult, kBack);
  sharing.EndLoop(loop, kDone, {kState}, {kResult});
  std::vector<BufferSpec> buffers = Buffers();
  const int64_t live[4][2] = {{kInit, kDone}, {kAdd, kBack}, {kGemm, kAdd}, {kInit, kAdd}};
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].live.first_use = live[i][0];
    buffers[i].live.last_use = live[i][1];
  }
  const BufferSharing::Decisions decisions = sharing.Resolve(&buffers);
  EXPECT_EQ(buffers[kResult].shares, kState);
  EXPECT_EQ(decisions.loop_results, 1);
  EXPECT_EQ(decisions.elementwise, 0);
}

}  // namespace
}  // namespace backend
}  // namespace hloc
