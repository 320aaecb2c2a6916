// The communicators against a plain serial computation of each op: every op,
// groups (several, with members out of order), element types, 2 and 4
// devices, in place and out of place, and a device that never arrives.
#include <cstring>
#include <functional>
#include <numeric>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/collective_thunks.h"
#include "runtime/shared_memory_communicator.h"

namespace hloc {
namespace runtime {
namespace {

// Runs `body(rank, communicator)` on `n` threads; returns each rank's status.
std::vector<absl::Status> OnDevices(int64_t n, const std::function<absl::Status(
                                                   int64_t, Communicator&)>& body,
                                    absl::Duration timeout = absl::Seconds(30)) {
  SharedMemoryWorld world(n, timeout);
  std::vector<absl::Status> status(n);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::shared_ptr<Communicator> comm = world.CommunicatorFor(r);
      status[r] = body(r, *comm);
    });
  }
  for (std::thread& t : threads) t.join();
  return status;
}

void ExpectAllOk(const std::vector<absl::Status>& status) {
  for (size_t r = 0; r < status.size(); ++r) EXPECT_TRUE(status[r].ok()) << r << ": " << status[r];
}

// A value distinct per rank and element that sums exactly in float.
template <typename T>
T Value(int64_t rank, int64_t i) {
  return static_cast<T>((rank + 1) * 3 + (i % 7));
}

template <typename T>
void CheckAllReduce(int64_t n, ElementType type, ReductionKind kind, bool in_place,
                    int64_t count) {
  std::vector<std::vector<T>> in(n, std::vector<T>(count)), out(n, std::vector<T>(count));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < count; ++i) in[r][i] = Value<T>(r, i);
  }
  std::vector<T> expected = in[0];
  for (int64_t r = 1; r < n; ++r) {
    for (int64_t i = 0; i < count; ++i) {
      T a = expected[i], b = in[r][i];
      switch (kind) {
        case ReductionKind::kSum: expected[i] = static_cast<T>(a + b); break;
        case ReductionKind::kProduct: expected[i] = static_cast<T>(a * b); break;
        case ReductionKind::kMin: expected[i] = std::min(a, b); break;
        case ReductionKind::kMax: expected[i] = std::max(a, b); break;
        default: break;
      }
    }
  }
  std::vector<int64_t> group(n);
  std::iota(group.begin(), group.end(), 0);
  ExpectAllOk(OnDevices(n, [&](int64_t r, Communicator& comm) {
    if (in_place) out[r] = in[r];
    return comm.AllReduce({"%ar", 0}, group, type, kind, in_place ? out[r].data() : in[r].data(),
                          out[r].data(), count);
  }));
  for (int64_t r = 0; r < n; ++r) {
    EXPECT_EQ(out[r], expected) << "rank " << r << " of " << n << " " << ElementTypeName(type)
                                << " " << ReductionKindName(kind) << " in_place=" << in_place;
  }
}

TEST(SharedMemoryCommunicatorTest, AllReduceEveryKindTypeAndSize) {
  for (int64_t n : {2, 4}) {
    for (bool in_place : {false, true}) {
      // 1 and 3 elements leave some slices empty; 1001 is uneven.
      for (int64_t count : {1, 3, 1001}) {
        for (ReductionKind kind : {ReductionKind::kSum, ReductionKind::kProduct,
                                   ReductionKind::kMin, ReductionKind::kMax}) {
          CheckAllReduce<float>(n, ElementType::kF32, kind, in_place, count);
          CheckAllReduce<double>(n, ElementType::kF64, kind, in_place, count);
          CheckAllReduce<int32_t>(n, ElementType::kS32, kind, in_place, count);
          CheckAllReduce<int64_t>(n, ElementType::kS64, kind, in_place, count);
          CheckAllReduce<uint8_t>(n, ElementType::kU8, kind, in_place, count);
        }
      }
    }
  }
}

TEST(SharedMemoryCommunicatorTest, AllReduceIsInRankOrder) {
  // 1e8 + 1 - 1e8 ... in f32: rank order gives a different answer than any
  // other order would, so the result shows the order.
  const std::vector<float> values = {1e8f, 1.0f, -1e8f, 1.0f};
  std::vector<float> out(4);
  ExpectAllOk(OnDevices(4, [&](int64_t r, Communicator& comm) {
    const std::vector<int64_t> group = {0, 1, 2, 3};
    return comm.AllReduce({"%ar", 0}, group, ElementType::kF32, ReductionKind::kSum, &values[r],
                          &out[r], 1);
  }));
  const float expected = ((1e8f + 1.0f) + -1e8f) + 1.0f;
  for (float v : out) EXPECT_EQ(v, expected);
}

TEST(SharedMemoryCommunicatorTest, PredAndBitwiseReductions) {
  std::vector<std::vector<uint8_t>> pred = {{1, 1, 0}, {1, 0, 0}};
  std::vector<std::vector<uint8_t>> and_out(2, std::vector<uint8_t>(3)), or_out = and_out;
  std::vector<int32_t> bits = {0b1100, 0b1010}, bits_and(2), bits_or(2);
  ExpectAllOk(OnDevices(2, [&](int64_t r, Communicator& comm) {
    const std::vector<int64_t> group = {0, 1};
    absl::Status s = comm.AllReduce({"%and", 0}, group, ElementType::kPred, ReductionKind::kAnd,
                                    pred[r].data(), and_out[r].data(), 3);
    if (s.ok()) {
      s = comm.AllReduce({"%or", 0}, group, ElementType::kPred, ReductionKind::kOr,
                         pred[r].data(), or_out[r].data(), 3);
    }
    if (s.ok()) {
      s = comm.AllReduce({"%band", 0}, group, ElementType::kS32, ReductionKind::kAnd, &bits[r],
                         &bits_and[r], 1);
    }
    if (s.ok()) {
      s = comm.AllReduce({"%bor", 0}, group, ElementType::kS32, ReductionKind::kOr, &bits[r],
                         &bits_or[r], 1);
    }
    return s;
  }));
  for (int r = 0; r < 2; ++r) {
    EXPECT_THAT(and_out[r], ::testing::ElementsAre(1, 0, 0));
    EXPECT_THAT(or_out[r], ::testing::ElementsAre(1, 1, 0));
    EXPECT_EQ(bits_and[r], 0b1000);
    EXPECT_EQ(bits_or[r], 0b1110);
  }
  EXPECT_FALSE(CheckReduction(ElementType::kF32, ReductionKind::kAnd).ok());
}

TEST(SharedMemoryCommunicatorTest, Bf16SumRoundsToNearestEven) {
  // bf16 1.0 = 0x3f80; 1.0 + 1.0 = 2.0 = 0x4000.
  std::vector<uint16_t> in = {0x3f80, 0x3f80}, out(2);
  ExpectAllOk(OnDevices(2, [&](int64_t r, Communicator& comm) {
    const std::vector<int64_t> group = {0, 1};
    return comm.AllReduce({"%bf", 0}, group, ElementType::kBF16, ReductionKind::kSum, &in[r],
                          &out[r], 1);
  }));
  EXPECT_EQ(out[0], 0x4000);
  EXPECT_EQ(out[1], 0x4000);
}

TEST(ReduceIntoTest, F16RoundsToNearestEvenAfterEveryStep) {
  auto sum = [](uint16_t a, uint16_t b, ReductionKind kind = ReductionKind::kSum) {
    ReduceInto(ElementType::kF16, kind, &a, &b, 1);
    return a;
  };
  EXPECT_EQ(sum(0x3c00, 0x3c00), 0x4000);  // 1 + 1 = 2.
  EXPECT_EQ(sum(0x6800, 0x3c00), 0x6800);  // 2048 + 1: a tie, to even 2048.
  EXPECT_EQ(sum(0x6800, 0x4200), 0x6802);  // 2048 + 3: a tie, to even 2052.
  EXPECT_EQ(sum(0x0001, 0x0001), 0x0002);  // Subnormals.
  EXPECT_EQ(sum(0x0400, 0x8001), 0x03ff);  // Smallest normal - smallest subnormal.
  EXPECT_EQ(sum(0x7bff, 0x7bff), 0x7c00);  // 65504 + 65504 = inf.
  EXPECT_EQ(sum(0x7bff, 0x5000), 0x7c00);  // 65504 + 32 rounds up to 65536: inf.
  EXPECT_EQ(sum(0x7bff, 0x4c00), 0x7c00);  // 65504 + 16: a tie, to even 65536 = inf.
  EXPECT_EQ(sum(0x7bff, 0x4800), 0x7bff);  // 65504 + 8 rounds down.
  EXPECT_EQ(sum(0xbc00, 0x3c00), 0x0000);  // -1 + 1.
  EXPECT_EQ(sum(0x3555, 0x3555), 0x3955);  // 0.33325 * 2 exactly.
  EXPECT_EQ(sum(0xbc00, 0x3800, ReductionKind::kMax), 0x3800);
  EXPECT_EQ(sum(0xbc00, 0x3800, ReductionKind::kProduct), 0xb800);  // -1 * 0.5.
  EXPECT_EQ(sum(0x7e00, 0x3c00) & 0x7e00, 0x7e00);  // NaN stays NaN.
  EXPECT_FALSE(CheckReduction(ElementType::kF16, ReductionKind::kOr).ok());
  EXPECT_EQ(ElementBytes(ElementType::kF16), 2);
}

// ragged-all-to-all on 3 devices, s32 indices, rows of 2 floats: device s
// sends peer p (s + p) % 3 rows from row p of its input to row 2 s of p's
// output (1 update per peer).
TEST(RaggedAllToAllTest, MovesEachRunToTheSendersOutputOffset) {
  const RaggedRows shape{/*input_rows=*/4, /*output_rows=*/6, /*row_bytes=*/8,
                         /*entries=*/3, /*index_is_64bit=*/false};
  auto rows = [](int s, int p) { return (s + p) % 3; };
  std::vector<std::vector<float>> input(3), output(3, std::vector<float>(12, -1.0f));
  std::vector<std::vector<int32_t>> in_off(3), send(3), out_off(3), recv(3);
  for (int d = 0; d < 3; ++d) {
    for (int i = 0; i < 8; ++i) input[d].push_back(100.0f * d + i);
    for (int p = 0; p < 3; ++p) {
      in_off[d].push_back(p);
      send[d].push_back(rows(d, p));
      out_off[d].push_back(2 * d);
      recv[d].push_back(rows(p, d));
    }
  }
  ExpectAllOk(OnDevices(3, [&](int64_t r, Communicator& comm) {
    const std::vector<int64_t> group = {0, 1, 2};
    // In place: the result is the output buffer.
    return RaggedAllToAll(comm, {"%ragged", 0}, group, shape,
                          RaggedBuffers{input[r].data(), output[r].data(), in_off[r].data(),
                                        send[r].data(), out_off[r].data(), recv[r].data(),
                                        output[r].data()});
  }));
  for (int p = 0; p < 3; ++p) {
    std::vector<float> expected(12, -1.0f);
    for (int s = 0; s < 3; ++s) {
      for (int row = 0; row < rows(s, p); ++row) {
        for (int e = 0; e < 2; ++e) {
          expected[(2 * s + row) * 2 + e] = 100.0f * s + (p + row) * 2 + e;
        }
      }
    }
    EXPECT_EQ(output[p], expected) << "device " << p;
  }
}

TEST(RaggedAllToAllTest, ABadSizeOnOneDeviceFailsEveryDeviceAtOnce) {
  const RaggedRows shape{2, 2, 4, 2, /*index_is_64bit=*/true};
  std::vector<std::vector<float>> input(2, {1, 2}), output(2, {0, 0}), result(2, {0, 0});
  std::vector<std::vector<int64_t>> in_off(2, {0, 1}), send(2, {1, 1}), out_off(2, {0, 1}),
      recv(2, {1, 1});
  send[1][0] = 3;  // Device 1 sends 3 rows of its 2.
  const absl::Time start = absl::Now();
  const std::vector<absl::Status> status = OnDevices(
      2,
      [&](int64_t r, Communicator& comm) {
        const std::vector<int64_t> group = {0, 1};
        return RaggedAllToAll(comm, {"%ragged", 0}, group, shape,
                              RaggedBuffers{input[r].data(), output[r].data(), in_off[r].data(),
                                            send[r].data(), out_off[r].data(), recv[r].data(),
                                            result[r].data()});
      },
      absl::Seconds(60));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));  // Nobody waited for a timeout.
  EXPECT_EQ(status[1].code(), absl::StatusCode::kOutOfRange) << status[1];
  EXPECT_THAT(std::string(status[1].message()),
              ::testing::HasSubstr("device 1 sends rows [0, 3) of an input of 2 rows"));
  EXPECT_EQ(status[0].code(), absl::StatusCode::kCancelled) << status[0];
  EXPECT_THAT(result, ::testing::Each(::testing::ElementsAre(0, 0)));  // Nothing written.
}

TEST(SharedMemoryCommunicatorTest, TwoGroupsWithMembersOutOfOrder) {
  // Groups {3,1} and {0,2}: rank order inside a group is the listed order.
  const std::vector<std::vector<int64_t>> groups = {{3, 1}, {0, 2}};
  std::vector<int32_t> gathered(4 * 2), reduced(4), scattered(4), exchanged(4 * 2),
      broadcast(4);
  ExpectAllOk(OnDevices(4, [&](int64_t r, Communicator& comm) {
    const std::vector<int64_t>& group = groups[r % 2 == 1 ? 0 : 1];
    const int32_t mine = static_cast<int32_t>(10 * r);
    absl::Status s = comm.AllGather({"%ag", 0}, group, &mine, &gathered[2 * r], 4);
    if (s.ok()) {
      s = comm.AllReduce({"%ar", 0}, group, ElementType::kS32, ReductionKind::kMax, &mine,
                         &reduced[r], 1);
    }
    const int32_t blocks[2] = {mine, mine + 1};
    if (s.ok()) {
      s = comm.ReduceScatter({"%rs", 0}, group, ElementType::kS32, ReductionKind::kSum, blocks,
                             &scattered[r], 1);
    }
    if (s.ok()) s = comm.AllToAll({"%a2a", 0}, group, blocks, &exchanged[2 * r], 4);
    if (s.ok()) s = comm.Broadcast({"%bc", 0}, group, 1, &mine, &broadcast[r], 4);
    return s;
  }));
  EXPECT_THAT(gathered, ::testing::ElementsAre(0, 20, 30, 10, 0, 20, 30, 10));
  EXPECT_THAT(reduced, ::testing::ElementsAre(20, 30, 20, 30));
  // Device 3 is rank 0 of {3,1}: block 0 = 30 + 10; device 1 gets block 1 = 31 + 11.
  EXPECT_THAT(scattered, ::testing::ElementsAre(0 + 20, 31 + 11, 1 + 21, 30 + 10));
  // all-to-all: device 1 (rank 1) gets block 1 of rank 0 (device 3) then of itself.
  EXPECT_THAT(exchanged, ::testing::ElementsAre(0, 20, 31, 11, 1, 21, 30, 10));
  // Root is rank 1: device 1 in {3,1}, device 2 in {0,2}.
  EXPECT_THAT(broadcast, ::testing::ElementsAre(20, 10, 20, 10));
}

TEST(SharedMemoryCommunicatorTest, CollectivePermuteRingAndUnreached) {
  for (int64_t n : {2, 4}) {
    // A chain 0 -> 1 -> ... -> n-1: device 0 receives nothing (zeros).
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t r = 0; r + 1 < n; ++r) pairs.push_back({r, r + 1});
    std::vector<double> buffer(n);
    ExpectAllOk(OnDevices(n, [&](int64_t r, Communicator& comm) {
      buffer[r] = 1.5 + static_cast<double>(r);
      // In place: input and output are the same buffer.
      return comm.CollectivePermute({"%cp", 0}, pairs, &buffer[r], &buffer[r], 8);
    }));
    EXPECT_EQ(buffer[0], 0.0);
    for (int64_t r = 1; r < n; ++r) EXPECT_EQ(buffer[r], 0.5 + static_cast<double>(r)) << r;
  }
}

TEST(SharedMemoryCommunicatorTest, RepeatedRunsOfOneOpMatchBySequence) {
  std::vector<int64_t> sums(2);
  ExpectAllOk(OnDevices(2, [&](int64_t r, Communicator& comm) {
    const std::vector<int64_t> group = {0, 1};
    int64_t acc = r;
    for (int64_t step = 0; step < 50; ++step) {
      absl::Status s = comm.AllReduce({"%loop", step}, group, ElementType::kS64,
                                      ReductionKind::kSum, &acc, &acc, 1);
      if (!s.ok()) return s;
    }
    sums[r] = acc;
    return absl::OkStatus();
  }));
  EXPECT_EQ(sums[0], int64_t{1} << 49);
  EXPECT_EQ(sums[1], int64_t{1} << 49);
}

TEST(SharedMemoryCommunicatorTest, MissingDeviceTimesOutNamingTheOp) {
  std::vector<absl::Status> status = OnDevices(
      2,
      [&](int64_t r, Communicator& comm) {
        if (r == 1) return absl::OkStatus();
        const std::vector<int64_t> group = {0, 1};
        float x = 1, y;
        return comm.AllReduce({"%lonely", 0}, group, ElementType::kF32, ReductionKind::kSum, &x,
                              &y, 1);
      },
      absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(status[0])) << status[0];
  EXPECT_THAT(std::string(status[0].message()), ::testing::HasSubstr("%lonely"));
}

TEST(SharedMemoryCommunicatorTest, BadGroupIsAnError) {
  std::vector<absl::Status> status = OnDevices(2, [&](int64_t r, Communicator& comm) {
    const std::vector<int64_t> group = {0, 0};
    float x = 1;
    return comm.AllGather({"%bad", 0}, group, &x, &x, 4);
  });
  EXPECT_THAT(std::string(status[1].message()), ::testing::HasSubstr("%bad"));
  EXPECT_FALSE(status[0].ok());
}

TEST(SelfCommunicatorTest, GroupOfOneCopies) {
  SelfCommunicator self;
  const std::vector<int64_t> group = {0};
  float x = 2, y = 0;
  ASSERT_TRUE(self.AllReduce({"%a", 0}, group, ElementType::kF32, ReductionKind::kSum, &x, &y, 1)
                  .ok());
  EXPECT_EQ(y, 2);
  const std::vector<int64_t> two = {0, 1};
  EXPECT_FALSE(self.AllGather({"%b", 0}, two, &x, &y, 4).ok());
}

TEST(PackBlocksTest, PackThenUnpackIsIdentityAndTransposes) {
  // [outer=2][n=3][block=1 byte] -> [3][2][1].
  const char in[6] = {'a', 'b', 'c', 'd', 'e', 'f'};
  char packed[6], back[6];
  PackBlocks(in, packed, 2, 3, 1);
  EXPECT_EQ(std::string(packed, 6), "adbecf");
  UnpackBlocks(packed, back, 2, 3, 1);
  EXPECT_EQ(std::string(back, 6), "abcdef");
}

}  // namespace
}  // namespace runtime
}  // namespace hloc
