// ragged-all-to-all over a Communicator (see ragged_all_to_all.h).
#include "runtime/ragged_all_to_all.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace runtime {
namespace {


std::string Rows(int64_t offset, int64_t rows) {
  return absl::StrCat("rows [", offset, ", ", offset + rows, ")");
}

// A run of `rows` rows at `offset` within a buffer of `total` rows
// (written so that no sum overflows).
bool Fits(int64_t offset, int64_t rows, int64_t total) {
  return rows >= 0 && offset >= 0 && offset <= total - rows;
}

}  // namespace

int64_t ReadRaggedIndex(const RaggedRows& shape, const void* array, int64_t i) {
  if (shape.index_is_64bit) {
    int64_t v;
    std::memcpy(&v, static_cast<const char*>(array) + i * 8, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, static_cast<const char*>(array) + i * 4, 4);
  return v;
}

RaggedUpdate ReadRaggedUpdate(const RaggedRows& shape, const RaggedBuffers& buffers, int64_t i) {
  return RaggedUpdate{ReadRaggedIndex(shape, buffers.input_offsets, i),
                      ReadRaggedIndex(shape, buffers.send_sizes, i),
                      ReadRaggedIndex(shape, buffers.output_offsets, i)};
}

absl::Status PlanRaggedSends(const CollectiveKey& key, DeviceGroup group, int64_t me,
                             const RaggedRows& shape, const RaggedBuffers& buffers,
                             std::vector<RaggedHeader>* headers, int64_t* longest) {
  const int64_t n = static_cast<int64_t>(group.size());
  if (shape.entries <= 0 || shape.entries % n != 0) {
    return absl::InvalidArgumentError(absl::StrCat(key.name, ": index arrays of ", shape.entries,
                                                   " entries for a group of ", n));
  }
  const int64_t k = shape.entries / n;
  headers->assign(static_cast<size_t>(shape.entries), RaggedHeader{kRaggedFailed, 0});
  *longest = 0;
  int64_t most = 0;
  for (int64_t p = 0; p < n; ++p) {
    int64_t to_peer = 0;
    for (int64_t u = 0; u < k; ++u) {
      const int64_t i = p * k + u;
      const RaggedUpdate update = ReadRaggedUpdate(shape, buffers, i);
      if (!Fits(update.input_offset, update.rows, shape.input_rows)) {
        headers->assign(headers->size(), RaggedHeader{kRaggedFailed, 0});
        return absl::OutOfRangeError(absl::StrCat(
            key.name, ": device ", group[me], " sends ", Rows(update.input_offset, update.rows),
            " of an input of ", shape.input_rows, " rows to device ", group[p], " (entry ", i,
            ")"));
      }
      if (!Fits(update.output_offset, update.rows, shape.output_rows)) {
        headers->assign(headers->size(), RaggedHeader{kRaggedFailed, 0});
        return absl::OutOfRangeError(absl::StrCat(
            key.name, ": device ", group[me], " writes ", Rows(update.output_offset, update.rows),
            " of device ", group[p], "'s output of ", shape.output_rows, " rows (entry ", i,
            ")"));
      }
      (*headers)[static_cast<size_t>(i)] = RaggedHeader{update.rows, update.output_offset};
      to_peer += update.rows;
    }
    most = std::max(most, to_peer);
  }
  *longest = most;
  return absl::OkStatus();
}

absl::Status CheckRaggedReceives(const CollectiveKey& key, DeviceGroup group, int64_t me,
                                 const RaggedRows& shape, const void* recv_sizes,
                                 const std::vector<RaggedHeader>& received) {
  const int64_t n = static_cast<int64_t>(group.size());
  const int64_t k = shape.entries / n;
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t u = 0; u < k; ++u) {
      const RaggedHeader& h = received[static_cast<size_t>(s * k + u)];
      if (h.rows == kRaggedFailed) break;
      const int64_t expected = ReadRaggedIndex(shape, recv_sizes, s * k + u);
      if (!Fits(h.output_offset, h.rows, shape.output_rows)) {
        return absl::OutOfRangeError(absl::StrCat(
            key.name, ": device ", group[s], " writes ", Rows(h.output_offset, h.rows),
            " of device ", group[me], "'s output of ", shape.output_rows, " rows"));
      }
      if (h.rows != expected) {
        return absl::InvalidArgumentError(absl::StrCat(
            key.name, ": device ", group[me], " expects ", expected, " rows from device ",
            group[s], " (recv_sizes entry ", s * k + u, "), which sends ", h.rows));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status RaggedPeerFailed(const CollectiveKey& key, DeviceGroup group) {
  // Cancelled, as a device stopped by another's failure is: runners report
  // the member that found the problem.
  return absl::CancelledError(absl::StrCat(
      key.name, ": another member of device group {", absl::StrJoin(group, ","),
      "} found bad ragged-all-to-all offsets or sizes (its error says which)"));
}

absl::Status RaggedAllToAll(Communicator& comm, const CollectiveKey& key, DeviceGroup group,
                            const RaggedRows& shape, const RaggedBuffers& buffers) {
  int64_t me;
  if (absl::Status s = CheckGroup(key, group, comm.rank(), comm.size(), &me); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(group.size());
  auto step = [&](int64_t i) { return CollectiveKey{key.name, 3 * key.sequence + i}; };
  std::vector<RaggedHeader> sent;
  int64_t longest = 0;
  absl::Status problem = PlanRaggedSends(key, group, me, shape, buffers, &sent, &longest);
  if (sent.empty()) return problem;  // No entries to exchange: every member fails alike.
  const int64_t k = shape.entries / n;

  // 1. Headers.
  std::vector<RaggedHeader> received(sent.size());
  // A member that found a problem reports it even when the exchange fails
  // (another member, told of the problem, may already have stopped the run).
  if (absl::Status s = comm.AllToAll(step(0), group, sent.data(), received.data(),
                                     k * static_cast<int64_t>(sizeof(RaggedHeader)));
      !s.ok()) {
    return problem.ok() ? s : problem;
  }
  if (problem.ok()) {
    problem = CheckRaggedReceives(key, group, me, shape, buffers.recv_sizes, received);
  }

  // 2. Whether anyone failed, and the block size.
  int64_t verdict[2] = {problem.ok() ? 0 : 1, longest};
  if (absl::Status s = comm.AllReduce(step(1), group, ElementType::kS64, ReductionKind::kMax,
                                      verdict, verdict, 2);
      !s.ok()) {
    return problem.ok() ? s : problem;
  }
  if (!problem.ok()) return problem;
  if (verdict[0] != 0) return RaggedPeerFailed(key, group);

  // 3. Rows: block p holds this member's runs for peer p back to back.
  const int64_t block = verdict[1] * shape.row_bytes;
  const size_t output_bytes = static_cast<size_t>(shape.output_rows * shape.row_bytes);
  std::vector<char> send, receive;
  if (block > 0) {
    send.resize(static_cast<size_t>(n * block));
    receive.resize(send.size());
    const char* input = static_cast<const char*>(buffers.input);
    for (int64_t p = 0; p < n; ++p) {
      char* at = send.data() + p * block;
      for (int64_t u = 0; u < k; ++u) {
        const int64_t i = p * k + u;
        const int64_t bytes = sent[static_cast<size_t>(i)].rows * shape.row_bytes;
        std::memcpy(at, input + ReadRaggedIndex(shape, buffers.input_offsets, i) * shape.row_bytes,
                    static_cast<size_t>(bytes));
        at += bytes;
      }
    }
    if (absl::Status s = comm.AllToAll(step(2), group, send.data(), receive.data(), block);
        !s.ok()) {
      return s;
    }
  }
  // Copied after the input was packed: the result may share the input's or
  // the output's buffer.
  if (buffers.result != buffers.output) {
    std::memmove(buffers.result, buffers.output, output_bytes);
  }
  char* result = static_cast<char*>(buffers.result);
  for (int64_t s = 0; s < n && block > 0; ++s) {
    const char* at = receive.data() + s * block;
    for (int64_t u = 0; u < k; ++u) {
      const RaggedHeader& h = received[static_cast<size_t>(s * k + u)];
      const int64_t bytes = h.rows * shape.row_bytes;
      std::memcpy(result + h.output_offset * shape.row_bytes, at, static_cast<size_t>(bytes));
      at += bytes;
    }
  }
  return absl::OkStatus();
}

}  // namespace runtime
}  // namespace hloc
