// One MPI rank of mpi_collectives_test.sh: checks, over MpiCommunicator,
// what the shared-memory communicator's tests check without MPI: f16 and
// bf16 sums (reduced here in rank order, so exact), and ragged-all-to-all
// (ragged_all_to_all.h) including a bad size on one rank, which must fail
// every rank instead of leaving the others waiting. Prints
// "rank R: ok" or the failures, and exits non-zero on any.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/mpi/mpi_communicator.h"
#include "runtime/ragged_all_to_all.h"

namespace hloc {
namespace runtime {
namespace {

std::vector<std::string> failures;

void Expect(bool ok, const std::string& what) {
  if (!ok) failures.push_back(what);
}

// Each rank r contributes f16 (r + 1) * 0.1 (rounded) four times; the sum
// in rank order, rounded after every step, is what ReduceInto gives here.
void HalfSums(MpiCommunicator& comm, const std::vector<int64_t>& group) {
  const int64_t n = comm.size();
  // f16 bits of 0.1, 0.2, 0.3, 0.4 (and more ranks reuse them).
  const uint16_t halves[] = {0x2e66, 0x3266, 0x34cd, 0x3666};
  std::vector<uint16_t> mine(4, halves[comm.rank() % 4]), sum(4);
  uint16_t expected = halves[0];
  for (int64_t r = 1; r < n; ++r) {
    ReduceInto(ElementType::kF16, ReductionKind::kSum, &expected, &halves[r % 4], 1);
  }
  absl::Status s = comm.AllReduce({"%f16", 0}, group, ElementType::kF16, ReductionKind::kSum,
                                  mine.data(), sum.data(), 4);
  Expect(s.ok(), absl::StrCat("f16 all-reduce: ", s.ToString()));
  for (uint16_t v : sum) Expect(v == expected, absl::StrCat("f16 sum ", v, " != ", expected));
  // bf16 reduce-scatter: block i of rank r holds r + i; rank i gets sum_r (r + i).
  std::vector<uint16_t> blocks(n), mine_out(1);
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(comm.rank() + i);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    blocks[i] = static_cast<uint16_t>(bits >> 16);  // Exact: small integers.
  }
  s = comm.ReduceScatter({"%bf16", 0}, group, ElementType::kBF16, ReductionKind::kSum,
                         blocks.data(), mine_out.data(), 1);
  Expect(s.ok(), absl::StrCat("bf16 reduce-scatter: ", s.ToString()));
  const float want = static_cast<float>(n * (n - 1) / 2 + n * comm.rank());
  const uint32_t got_bits = static_cast<uint32_t>(mine_out[0]) << 16;
  float got;
  std::memcpy(&got, &got_bits, 4);
  Expect(got == want, absl::StrCat("bf16 reduce-scatter ", got, " != ", want));
}

// Rank s sends peer p (s + p) % 3 rows from row p of its 4-row input to row
// 2 s of p's output (rows of one s32); `bad` makes rank 1 send 5 rows.
absl::Status Ragged(MpiCommunicator& comm, const std::vector<int64_t>& group, bool bad,
                    int64_t sequence, std::vector<int32_t>* result) {
  const int64_t n = comm.size(), me = comm.rank();
  const RaggedRows shape{4, 2 * n, 4, n, /*index_is_64bit=*/false};
  std::vector<int32_t> input = {static_cast<int32_t>(100 * me), static_cast<int32_t>(100 * me + 1),
                                static_cast<int32_t>(100 * me + 2),
                                static_cast<int32_t>(100 * me + 3)};
  std::vector<int32_t> output(2 * n, -1), in_off(n), send(n), out_off(n), recv(n);
  for (int64_t p = 0; p < n; ++p) {
    in_off[p] = static_cast<int32_t>(p % 3);
    send[p] = static_cast<int32_t>((me + p) % 3 % 2);  // 0 or 1 rows: fits from row p % 3.
    out_off[p] = static_cast<int32_t>(2 * me);
    recv[p] = static_cast<int32_t>((p + me) % 3 % 2);
  }
  if (bad && me == 1) send[0] = 5;
  result->assign(2 * n, 0);
  return RaggedAllToAll(comm, {"%ragged", sequence}, group, shape,
                        RaggedBuffers{input.data(), output.data(), in_off.data(), send.data(),
                                      out_off.data(), recv.data(), result->data()});
}

int Main(int argc, char** argv) {
  absl::StatusOr<std::shared_ptr<MpiSession>> session = MpiSession::Initialize(&argc, &argv);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 1;
  }
  MpiCommunicator comm(*session);
  std::vector<int64_t> group;
  for (int64_t r = 0; r < comm.size(); ++r) group.push_back(r);
  HalfSums(comm, group);

  std::vector<int32_t> result;
  absl::Status s = Ragged(comm, group, /*bad=*/false, 0, &result);
  Expect(s.ok(), absl::StrCat("ragged: ", s.ToString()));
  const int64_t me = comm.rank();
  for (int64_t src = 0; src < comm.size() && s.ok(); ++src) {
    // Row 2 src: what src sent (from its row me % 3) or -1; row 2 src + 1: -1.
    const bool sends = (src + me) % 3 % 2 == 1;
    const int32_t want = sends ? static_cast<int32_t>(100 * src + me % 3) : -1;
    Expect(result[2 * src] == want,
           absl::StrCat("ragged row ", 2 * src, ": ", result[2 * src], " != ", want));
    Expect(result[2 * src + 1] == -1, absl::StrCat("ragged row ", 2 * src + 1, " written"));
  }
  s = Ragged(comm, group, /*bad=*/true, 1, &result);
  if (me == 1) {
    Expect(s.code() == absl::StatusCode::kOutOfRange &&
               s.message().find("device 1 sends rows [0, 5) of an input of 4 rows") !=
                   std::string::npos,
           absl::StrCat("bad ragged on rank 1: ", s.ToString()));
  } else {
    Expect(s.code() == absl::StatusCode::kCancelled,
           absl::StrCat("bad ragged on rank ", me, ": ", s.ToString()));
  }
  // The communicator still works after the failed op.
  s = Ragged(comm, group, /*bad=*/false, 2, &result);
  Expect(s.ok(), absl::StrCat("ragged after a failure: ", s.ToString()));

  if (failures.empty()) {
    std::printf("rank %lld: ok\n", static_cast<long long>(me));
    return 0;
  }
  for (const std::string& f : failures) {
    std::printf("rank %lld: FAIL %s\n", static_cast<long long>(me), f.c_str());
  }
  return 1;
}

}  // namespace
}  // namespace runtime
}  // namespace hloc

int main(int argc, char** argv) { return hloc::runtime::Main(argc, argv); }
