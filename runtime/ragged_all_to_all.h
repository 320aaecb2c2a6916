// ragged-all-to-all over a Communicator: every member of a group sends each
// peer a run of rows of its input, of a size and place it chooses at run
// time, into the peer's copy of the output.
//
// The operands (XLA's order): input, output, input_offsets, send_sizes,
// output_offsets, recv_sizes. The four index arrays hold k entries per group
// member, peer-major: entry p * k + u is update u for the member of rank p.
// Update u of member s for peer p moves send_sizes[i] rows starting at row
// input_offsets[i] of s's input to row output_offsets[i] of p's output (the
// sender names where its rows land); p's recv_sizes[s * k + u] must say the
// same count. Rows run along dimension 0. The result is the output operand
// with every received run written in; rows nobody writes keep their values.
//
// Communicators move equal blocks, and offsets are only known at run time,
// so one run takes three exchanges, all of fixed size:
//
//   1. all-to-all of the headers: for each update to peer p, (rows, output
//      offset). Each receiver checks them against its recv_sizes and its
//      output.
//   2. all-reduce (max) of (failed, longest run to one peer): every member
//      learns whether any member found a bad offset or size, so they all
//      fail together instead of leaving the others waiting, and the one
//      block size the data exchange uses.
//   3. all-to-all of the rows: block p holds the runs for peer p back to back.
//
// Every offset and size is checked before any row moves; a bad one is an
// error naming the member, never an access outside a buffer.
#ifndef HLOC_RUNTIME_RAGGED_ALL_TO_ALL_H_
#define HLOC_RUNTIME_RAGGED_ALL_TO_ALL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "runtime/communicator.h"

namespace hloc {
namespace runtime {

// The static shape of one ragged-all-to-all (the same on every member).
struct RaggedRows {
  int64_t input_rows = 0;
  int64_t output_rows = 0;
  int64_t row_bytes = 0;     // Bytes of one row (dimensions 1.. of input and output).
  int64_t entries = 0;       // Of each index array: k per group member.
  bool index_is_64bit = false;  // s64 index arrays, else s32.
};

// The buffers of one member (host memory). `result` may be `output`.
struct RaggedBuffers {
  const void* input = nullptr;
  const void* output = nullptr;
  const void* input_offsets = nullptr;
  const void* send_sizes = nullptr;
  const void* output_offsets = nullptr;
  const void* recv_sizes = nullptr;
  void* result = nullptr;
};

// One update as the index arrays describe it (read from s32 or s64).
struct RaggedUpdate {
  int64_t input_offset = 0, rows = 0, output_offset = 0;
};
// Entry `i` of the index arrays in `buffers`.
RaggedUpdate ReadRaggedUpdate(const RaggedRows& shape, const RaggedBuffers& buffers, int64_t i);
int64_t ReadRaggedIndex(const RaggedRows& shape, const void* array, int64_t i);

// The planning both transports share (this file's RaggedAllToAll over a
// Communicator, runtime/cuda's over NCCL).
//
// What a sender tells a receiver about one update; rows = kRaggedFailed
// when the sender found a bad offset or size (it sends no rows then).
struct RaggedHeader {
  int64_t rows = 0;
  int64_t output_offset = 0;
};
inline constexpr int64_t kRaggedFailed = -1;

// This member's headers (entry p * k + u for update u to the member of rank
// p), every offset and size checked against its input and the peers'
// outputs; `*longest` = most rows it sends one peer. On a bad entry the
// error, with every header kRaggedFailed and *longest = 0 (so peers read
// nothing from it).
absl::Status PlanRaggedSends(const CollectiveKey& key, DeviceGroup group, int64_t me,
                             const RaggedRows& shape, const RaggedBuffers& buffers,
                             std::vector<RaggedHeader>* headers, int64_t* longest);
// Checks the headers this member received (entry s * k + u from the member
// of rank s) against its recv_sizes and output. Senders that failed are
// skipped: they report their own error.
absl::Status CheckRaggedReceives(const CollectiveKey& key, DeviceGroup group, int64_t me,
                                 const RaggedRows& shape, const void* recv_sizes,
                                 const std::vector<RaggedHeader>& received);
// The error of a member that found nothing wrong when another did.
absl::Status RaggedPeerFailed(const CollectiveKey& key, DeviceGroup group);

// Runs the op for this communicator's device in `group`. `key` names the
// instance; the three exchanges use sequences 3 * key.sequence + 0, 1, 2.
absl::Status RaggedAllToAll(Communicator& comm, const CollectiveKey& key, DeviceGroup group,
                            const RaggedRows& shape, const RaggedBuffers& buffers);

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_RAGGED_ALL_TO_ALL_H_
