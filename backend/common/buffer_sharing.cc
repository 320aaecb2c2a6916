// Deciding which buffers share bytes (see buffer_sharing.h).
#include "backend/common/buffer_sharing.h"

#include <algorithm>
#include <limits>

namespace hloc {
namespace backend {

using runtime::BufferId;
using runtime::BufferSpec;

void BufferSharing::Read(BufferId buffer, int64_t step) {
  if (buffer < 0) return;
  if (static_cast<size_t>(buffer) >= reads_.size()) reads_.resize(buffer + 1);
  std::vector<int64_t>& reads = reads_[buffer];
  if (reads.empty() || reads.back() < step) {
    reads.push_back(step);
  } else if (!std::binary_search(reads.begin(), reads.end(), step)) {
    reads.insert(std::lower_bound(reads.begin(), reads.end(), step), step);
  }
}

int BufferSharing::BeginLoop(int64_t first_step) {
  loops_.push_back({first_step, first_step, {}, {}});
  return static_cast<int>(loops_.size() - 1);
}

void BufferSharing::EndLoop(int loop, int64_t last_step, std::vector<BufferId> state,
                            std::vector<BufferId> result) {
  loops_[loop].last_step = last_step;
  loops_[loop].state = std::move(state);
  loops_[loop].result = std::move(result);
}

void BufferSharing::AddCandidate(Kind kind, BufferId donor, BufferId taker, int64_t step) {
  candidates_.push_back({kind, donor, taker, step, scopes_});
}

bool BufferSharing::ReadBetween(BufferId buffer, int64_t after, int64_t until) const {
  if (static_cast<size_t>(buffer) >= reads_.size()) return false;
  const std::vector<int64_t>& reads = reads_[buffer];
  auto it = std::upper_bound(reads.begin(), reads.end(), after);
  return it != reads.end() && *it <= until;
}

bool BufferSharing::ReadOnlyWhereWritten(BufferId donor, BufferId taker, int64_t step) const {
  return std::any_of(candidates_.begin(), candidates_.end(), [&](const Candidate& c) {
    return c.kind == Kind::kElementwise && c.donor == donor && c.taker == taker && c.step == step;
  });
}

bool BufferSharing::TempsOfOneSize(const Candidate& c, const std::vector<BufferSpec>& buffers) {
  const size_t n = buffers.size();
  if (c.donor < 0 || c.taker < 0 || static_cast<size_t>(c.donor) >= n ||
      static_cast<size_t>(c.taker) >= n || c.donor == c.taker) {
    return false;
  }
  const BufferSpec& donor = buffers[c.donor];
  const BufferSpec& taker = buffers[c.taker];
  return donor.kind == BufferSpec::Kind::kTemp && taker.kind == BufferSpec::Kind::kTemp &&
         donor.size == taker.size && taker.shares < 0;
}

bool BufferSharing::Take(const Candidate& c, const std::vector<BufferSpec>& buffers) const {
  if (c.kind == Kind::kLoopResult) return false;
  if (!TempsOfOneSize(c, buffers)) return false;
  const BufferSpec& donor = buffers[c.donor];
  // Straight line: a donor defined inside every surrounding loop, never read
  // again.
  const int64_t defined = donor.live.first_use;
  const bool inside_every_loop = std::all_of(c.scopes.begin(), c.scopes.end(), [&](const Scope& s) {
    return s.kind == ScopeKind::kBranch || loops_[s.loop].first_step <= defined;
  });
  if (inside_every_loop) {
    return !ReadBetween(c.donor, c.step, std::numeric_limits<int64_t>::max());
  }
  // Loop state updated in place.
  if (c.kind != Kind::kUpdate || c.scopes.empty() || c.scopes.back().kind != ScopeKind::kBody) {
    return false;
  }
  const Loop& loop = loops_[c.scopes.back().loop];
  const auto it = std::find(loop.state.begin(), loop.state.end(), c.donor);
  if (it == loop.state.end()) return false;
  const size_t j = it - loop.state.begin();
  if (j >= loop.result.size() || loop.result[j] != c.taker) return false;
  return !ReadBetween(c.donor, c.step, loop.last_step);
}

bool BufferSharing::TakeLoopResult(const Candidate& c, const std::vector<BufferSpec>& buffers) const {
  const size_t n = buffers.size();
  if (c.scopes.empty() || c.scopes.back().kind != ScopeKind::kBody) return false;
  if (!TempsOfOneSize(c, buffers)) return false;
  const BufferSpec& taker = buffers[c.taker];
  const Loop& loop = loops_[c.scopes.back().loop];
  const auto it = std::find(loop.state.begin(), loop.state.end(), c.donor);
  if (it == loop.state.end()) return false;
  const size_t j = it - loop.state.begin();
  if (j >= loop.result.size() || loop.result[j] != c.taker) return false;
  // The taker is written in this iteration, after the condition.
  const int64_t written = taker.live.first_use;
  if (written < loop.first_step || written > loop.last_step) return false;
  // The donor's old value is dead from the taker's first write on: no read
  // after that step until the copies back at the loop's end, and at that
  // step only by the writing kernel, where it writes the taker (kElementwise).
  if (ReadBetween(c.donor, written, loop.last_step)) return false;
  const bool read_at_write = ReadBetween(c.donor, written - 1, written);
  if (read_at_write && !ReadOnlyWhereWritten(c.donor, c.taker, written)) return false;
  // Nothing else in the taker's bytes, nor in the donor's while the loop
  // runs (an update in place of the donor inside the body).
  for (size_t m = 0; m < n; ++m) {
    const BufferSpec& other = buffers[m];
    if (static_cast<BufferId>(m) == c.taker) continue;
    if (other.shares == c.taker) return false;
    if (other.shares == c.donor && other.live.first_use <= loop.last_step) return false;
  }
  return true;
}

BufferSharing::Decisions BufferSharing::Resolve(std::vector<BufferSpec>* buffers,
                                                const std::vector<BufferId>& alone) const {
  Decisions decisions;
  // A loop body's result that may be computed in its state's bytes saves a
  // copy every iteration; an elementwise pair on the same taker would refuse
  // that (the taker would already live in another buffer), so it yields.
  std::vector<BufferId> loop_result_takers;
  for (const Candidate& c : candidates_) {
    if (c.kind == Kind::kLoopResult) loop_result_takers.push_back(c.taker);
  }
  auto listed = [](const std::vector<BufferId>& ids, BufferId id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (const Candidate& c : candidates_) {
    if (c.kind == Kind::kElementwise &&
        (listed(alone, c.taker) || listed(loop_result_takers, c.taker))) {
      continue;
    }
    if (!Take(c, *buffers)) continue;
    (*buffers)[c.taker].shares = c.donor;
    decisions.shared_bytes += (*buffers)[c.taker].size;
    ++(c.kind == Kind::kUpdate        ? decisions.updates
       : c.kind == Kind::kElementwise ? decisions.elementwise
                                      : decisions.loop_inits);
  }
  // Loop results last: the rule above needs the other decisions.
  for (const Candidate& c : candidates_) {
    if (c.kind != Kind::kLoopResult || !TakeLoopResult(c, *buffers)) continue;
    (*buffers)[c.taker].shares = c.donor;
    decisions.shared_bytes += (*buffers)[c.taker].size;
    ++decisions.loop_results;
  }
  return decisions;
}

bool BufferSharing::OutputMayReuseParameter(const std::vector<BufferSpec>& buffers,
                                            const std::vector<BufferId>& outputs, BufferId output,
                                            BufferId parameter) const {
  const size_t n = buffers.size();
  if (output < 0 || parameter < 0 || static_cast<size_t>(output) >= n ||
      static_cast<size_t>(parameter) >= n ||
      buffers[parameter].kind != BufferSpec::Kind::kParameter ||
      buffers[output].size != buffers[parameter].size) {
    return false;
  }
  if (output == parameter) return true;  // Passed through: nothing to write.
  if (buffers[output].kind != BufferSpec::Kind::kTemp) return false;
  if (std::find(outputs.begin(), outputs.end(), parameter) != outputs.end()) return false;
  auto root_of = [&](BufferId id) {
    for (size_t steps = 0; buffers[id].shares >= 0 && steps < n; ++steps) id = buffers[id].shares;
    return id;
  };
  const int64_t last_read =
      static_cast<size_t>(parameter) < reads_.size() && !reads_[parameter].empty()
          ? reads_[parameter].back()
          : std::numeric_limits<int64_t>::min();
  const BufferId group = root_of(output);
  for (size_t m = 0; m < n; ++m) {
    const BufferSpec& member = buffers[m];
    if (member.kind != BufferSpec::Kind::kTemp || root_of(static_cast<BufferId>(m)) != group) {
      continue;
    }
    if (member.live.first_use > last_read) continue;
    const bool copied_at_last_read =
        member.live.first_use == last_read &&
        std::any_of(candidates_.begin(), candidates_.end(), [&](const Candidate& c) {
          return c.donor == parameter && c.taker == static_cast<BufferId>(m) && c.step == last_read;
        });
    if (!copied_at_last_read) return false;
  }
  return true;
}

}  // namespace backend
}  // namespace hloc
