// The op table (op_lowering.h): what each target does with the ops whose
// paths differ, and that every op the table leaves to the interpreter or
// refuses says why.
#include "backend/common/op_lowering.h"

#include <memory>

#include "gtest/gtest.h"
#include "hlo/instruction.h"

namespace hloc {
namespace backend {
namespace {

std::unique_ptr<HloInstruction> Op(HloOpcode opcode, const std::string& target = "") {
  auto hlo = HloInstruction::Create(opcode, Shape(xla::F32, {4}), {});
  if (!target.empty()) hlo->mutable_attrs()->custom_call_target = target;
  return hlo;
}

TEST(OpLoweringTest, ElementwiseOpsGetKernelsEverywhere) {
  for (Target target : {Target::kHost, Target::kCuda}) {
    const OpLowering add = LowerOp(*Op(HloOpcode::kAdd), target);
    EXPECT_TRUE(add.supported && add.kernel && !add.library);
    EXPECT_TRUE(add.reason.empty());
  }
}

TEST(OpLoweringTest, HostLibrariesComeFirst) {
  const OpLowering dot = LowerOp(*Op(HloOpcode::kDot), Target::kHost);
  EXPECT_TRUE(dot.library && dot.kernel);
  const OpLowering sort = LowerOp(*Op(HloOpcode::kSort), Target::kHost);
  EXPECT_TRUE(sort.library && !sort.kernel);
  const OpLowering top_k = LowerOp(*Op(HloOpcode::kCustomCall, "TopK"), Target::kHost);
  EXPECT_TRUE(top_k.library && !top_k.kernel);
  // The GPU has kernels for all of them.
  for (HloOpcode op : {HloOpcode::kDot, HloOpcode::kSort, HloOpcode::kScatter, HloOpcode::kTopK}) {
    const OpLowering gpu = LowerOp(*Op(op), Target::kCuda);
    EXPECT_TRUE(gpu.kernel && !gpu.library) << HloOpcodeName(op);
  }
  EXPECT_TRUE(LowerOp(*Op(HloOpcode::kCustomCall, "TopK"), Target::kCuda).kernel);
  // Other targets are registered functions on both: never the interpreter.
  for (Target target : {Target::kHost, Target::kCuda}) {
    const OpLowering custom = LowerOp(*Op(HloOpcode::kCustomCall, "foo"), target);
    EXPECT_TRUE(custom.supported && custom.library && !custom.kernel) << TargetName(target);
  }
}

TEST(OpLoweringTest, InterpreterOpsSayWhy) {
  const OpLowering fft = LowerOp(*Op(HloOpcode::kFft), Target::kCuda);
  EXPECT_TRUE(fft.supported && !fft.kernel && !fft.library);
  EXPECT_EQ(fft.reason, "no GPU kernel for fft");
  EXPECT_TRUE(LowerOp(*Op(HloOpcode::kFft), Target::kHost).library);
  EXPECT_TRUE(LowerOp(*Op(HloOpcode::kFft), Target::kHost).kernel);
  const OpLowering custom = LowerOp(*Op(HloOpcode::kCustomCall, "foo"), Target::kHost);
  EXPECT_FALSE(custom.kernel);
  EXPECT_EQ(custom.reason, "no host kernel for custom-call target \"foo\"");
  for (Target target : {Target::kHost, Target::kCuda}) {
    EXPECT_FALSE(LowerOp(*Op(HloOpcode::kRngBitGenerator), target).kernel);
  }
}

TEST(OpLoweringTest, CommunicationAndRngStateAreUnsupportedEverywhere) {
  for (Target target : {Target::kHost, Target::kCuda}) {
    for (HloOpcode op : {HloOpcode::kSend, HloOpcode::kInfeed,
                         HloOpcode::kRngGetAndUpdateState}) {
      const OpLowering lowering = LowerOp(*Op(op), target);
      EXPECT_FALSE(lowering.supported) << HloOpcodeName(op);
      EXPECT_EQ(lowering.reason, std::string("has no ") + std::string(TargetName(target)) +
                                     " implementation in hloc");
    }
  }
}

TEST(OpLoweringTest, CollectivesAreCommunicatorThunksOnBothTargets) {
  for (Target target : {Target::kHost, Target::kCuda}) {
    for (HloOpcode op : {HloOpcode::kAllReduce, HloOpcode::kAllGather, HloOpcode::kReduceScatter,
                         HloOpcode::kAllToAll, HloOpcode::kRaggedAllToAll,
                         HloOpcode::kCollectivePermute,
                         HloOpcode::kCollectiveBroadcast, HloOpcode::kReplicaId,
                         HloOpcode::kPartitionId, HloOpcode::kAllReduceStart,
                         HloOpcode::kAllGatherStart, HloOpcode::kCollectivePermuteStart}) {
      const OpLowering lowering = LowerOp(*Op(op), target);
      EXPECT_TRUE(lowering.supported && lowering.collective) << HloOpcodeName(op);
      EXPECT_FALSE(lowering.kernel || lowering.library) << HloOpcodeName(op);
    }
    // Async wrappers have no thunk: errors, not interpreter ops.
    for (HloOpcode op : {HloOpcode::kAsyncStart}) {
      EXPECT_FALSE(LowerOp(*Op(op), target).supported) << HloOpcodeName(op);
    }
  }
}

}  // namespace
}  // namespace backend
}  // namespace hloc
