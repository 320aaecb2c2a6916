// The interpreter's collectives (see collectives.h).
#include "hlo/evaluator/collectives.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_join.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace eval {

absl::StatusOr<std::vector<Rendezvous::Contribution>> Rendezvous::Exchange(
    const HloInstruction& hlo, int64_t count, const std::vector<int64_t>& group, int64_t rank,
    std::vector<Literal> values) {
  const int64_t size = static_cast<int64_t>(group.size());
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  const Key key{hlo.name(), count, group[0]};
  Slot& slot = slots_[key];
  if (slot.values.empty()) slot.values.resize(size);
  slot.values[rank] = std::make_shared<const std::vector<Literal>>(std::move(values));
  ++slot.arrived;
  cv_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(absl::ToInt64Microseconds(timeout_));
  while (slot.arrived < size && aborted_.ok()) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && slot.arrived < size) {
      std::vector<int64_t> missing;
      for (int64_t r = 0; r < size; ++r) {
        if (slot.values[r] == nullptr) missing.push_back(group[r]);
      }
      return absl::DeadlineExceededError(absl::StrCat(
          "instruction %", hlo.name(), " (", HloOpcodeName(hlo.opcode()), "): device ",
          group[rank], " waited ", absl::FormatDuration(timeout_), " for device(s) ",
          absl::StrJoin(missing, ","), " of group {", absl::StrJoin(group, ","),
          "} (run ", count, ")"));
    }
  }
  if (!aborted_.ok()) return aborted_;
  std::vector<Contribution> result = slot.values;
  if (++slot.left == size) slots_.erase(key);
  return result;
}

void Rendezvous::Abort(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.ok()) aborted_ = status;
  cv_.notify_all();
}

namespace {

Literal Zeros(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      elements.push_back(Zeros(shape.tuple_shapes(i)));
    }
    return Literal::Tuple(std::move(elements));
  }
  return Literal(shape);
}

// Element i of a tuple shape, or the shape itself when it is not a tuple.
const Shape& Part(const Shape& shape, int64_t i) {
  return shape.IsTuple() ? shape.tuple_shapes(i) : shape;
}

Literal Pack(std::vector<Literal> results, const Shape& declared) {
  if (declared.IsTuple()) return Literal::Tuple(std::move(results));
  return std::move(results[0]);
}

// Product of dims [from, to) of `shape`.
int64_t Product(const Shape& shape, int64_t from, int64_t to) {
  int64_t n = 1;
  for (int64_t d = from; d < to; ++d) n *= shape.dimensions(d);
  return n;
}

// Reduces `parts` in order with the instruction's to_apply.
absl::StatusOr<Literal> Reduce(const HloInstruction& hlo, const std::vector<const Literal*>& parts,
                               EvalContext& ctx) {
  const HloComputation* reducer = hlo.to_apply();
  if (reducer == nullptr) return InstructionError(hlo, "has no reducer");
  Literal acc = *parts[0];
  const std::optional<SimpleReducer> simple = MatchSimpleReducer(*reducer);
  std::unique_ptr<HloInstruction> op;
  if (simple) op = HloInstruction::Create(simple->opcode, acc.shape());
  for (size_t r = 1; r < parts.size(); ++r) {
    if (!parts[r]->shape().Compatible(acc.shape())) {
      return InstructionError(hlo, "devices disagree on the operand shape: ",
                              acc.shape().ToString(false), " and ",
                              parts[r]->shape().ToString(false));
    }
    if (op != nullptr) {
      const Literal* pair[2] = {&acc, parts[r]};
      HLOC_ASSIGN_OR_RETURN(acc, EvalBinary(*op, pair, ctx));
      continue;
    }
    for (int64_t e = 0; e < acc.element_count(); ++e) {
      Literal a = ElementAsScalar(acc, e), b = ElementAsScalar(*parts[r], e);
      const Literal* pair[2] = {&a, &b};
      HLOC_ASSIGN_OR_RETURN(Literal c, ctx.Call(*reducer, pair));
      if (c.shape().IsTuple()) {
        if (c.tuple_elements().size() != 1) return InstructionError(hlo, "reducer returns a tuple");
        Literal only = c.tuple_elements()[0];
        c = std::move(only);
      }
      StoreElement(c, &acc, e);
    }
  }
  return acc;
}

// all-gather: the parts concatenated along `dim` in rank order.
absl::StatusOr<Literal> Concat(const HloInstruction& hlo, const std::vector<const Literal*>& parts,
                               int64_t dim, const Shape& out_shape) {
  Literal out(out_shape);
  const int w = ByteWidth(out_shape.element_type());
  const int64_t outer = Product(out_shape, 0, dim);
  int64_t total = 0;
  for (const Literal* p : parts) total += p->size_bytes();
  if (total != out.size_bytes()) {
    return InstructionError(hlo, "the gathered operands (", total, " bytes) do not fill ",
                            out_shape.ToString(false));
  }
  uint8_t* dst = out.mutable_raw();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Literal* p : parts) {
      const int64_t chunk = Product(p->shape(), dim, p->shape().rank()) * w;
      std::memcpy(dst, p->raw() + o * chunk, chunk);
      dst += chunk;
    }
  }
  return out;
}

// Piece `k` of `n` along `dim` of `in` (whose dim divides by n).
Literal Piece(const Literal& in, int64_t dim, int64_t k, int64_t n, const Shape& out_shape) {
  Literal out(out_shape);
  const int w = ByteWidth(in.shape().element_type());
  const int64_t outer = Product(in.shape(), 0, dim);
  const int64_t inner = Product(in.shape(), dim, in.shape().rank()) * w;
  const int64_t piece = inner / n;
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(out.mutable_raw() + o * piece, in.raw() + o * inner + k * piece, piece);
  }
  return out;
}

absl::StatusOr<int64_t> SplitDimension(const HloInstruction& hlo, const Literal& operand,
                                       int64_t group_size) {
  if (hlo.dimensions().size() != 1) return InstructionError(hlo, "needs one dimension");
  const int64_t d = hlo.dimensions(0);
  if (d < 0 || d >= operand.shape().rank()) {
    return InstructionError(hlo, "dimension ", d, " out of range for ",
                            operand.shape().ToString(false));
  }
  if (operand.shape().dimensions(d) % group_size != 0) {
    return InstructionError(hlo, "dimension ", d, " of ", operand.shape().ToString(false),
                            " does not split over ", group_size, " devices");
  }
  return d;
}

// ragged-all-to-all on the member of rank `rank`: its output operand with
// every member's chunks for it written in. Member s's update u for peer p
// (index p * k + u of its offset and size arrays, k = entries / group size)
// moves send_sizes[i] rows from input_offsets[i] of s's input to
// output_offsets[i] of p's output; p's recv_sizes[s * k + u] must agree.
// Rows are along dimension 0. Chunks that leave either buffer are errors.
absl::StatusOr<Literal> RaggedAllToAll(const HloInstruction& hlo,
                                       const std::vector<Rendezvous::Contribution>& all,
                                       int64_t rank) {
  const int64_t size = static_cast<int64_t>(all.size());
  for (const auto& c : all) {
    if (c->size() != 6) return InstructionError(hlo, "needs 6 operands, got ", c->size());
  }
  const std::vector<Literal>& mine = *all[rank];
  const Literal& own_output = mine[1];
  if (own_output.shape().rank() < 1) return InstructionError(hlo, "output has no dimension 0");
  const int64_t entries = mine[2].element_count();
  if (entries == 0 || entries % size != 0) {
    return InstructionError(hlo, "offset arrays of ", entries,
                            " entries do not split over a group of ", size);
  }
  const int64_t k = entries / size;
  Literal out = own_output;
  const int w = ByteWidth(out.shape().element_type());
  const int64_t out_rows = out.shape().dimensions(0);
  const int64_t row_bytes = Product(out.shape(), 1, out.shape().rank()) * w;
  for (int64_t s = 0; s < size; ++s) {
    const std::vector<Literal>& from = *all[s];
    const Literal& input = from[0];
    if (input.shape().rank() != out.shape().rank() ||
        input.shape().element_type() != out.shape().element_type() ||
        Product(input.shape(), 1, input.shape().rank()) * w != row_bytes) {
      return InstructionError(hlo, "rank ", s, "'s input ", input.shape().ToString(false),
                              " does not have the output's rows");
    }
    for (int i = 2; i < 6; ++i) {
      if (from[i].element_count() != entries) {
        return InstructionError(hlo, "devices disagree on the offset array sizes");
      }
    }
    const int64_t in_rows = input.shape().dimensions(0);
    for (int64_t u = 0; u < k; ++u) {
      const int64_t i = rank * k + u;
      const int64_t in_offset = from[2].GetAsInt64(i), rows = from[3].GetAsInt64(i),
                    out_offset = from[4].GetAsInt64(i);
      const int64_t expected = mine[5].GetAsInt64(s * k + u);
      if (rows < 0 || in_offset < 0 || in_offset > in_rows - rows) {
        return InstructionError(hlo, "rank ", s, " sends rows [", in_offset, ", ",
                                in_offset + rows, ") of an input of ", in_rows, " rows");
      }
      if (out_offset < 0 || out_offset > out_rows - rows) {
        return InstructionError(hlo, "rank ", s, " writes rows [", out_offset, ", ",
                                out_offset + rows, ") of rank ", rank, "'s output of ",
                                out_rows, " rows");
      }
      if (expected != rows) {
        return InstructionError(hlo, "rank ", rank, " expects ", expected,
                                " rows from rank ", s, " (update ", u, "), which sends ", rows);
      }
      if (rows > 0) {
        std::memcpy(out.mutable_raw() + out_offset * row_bytes,
                    input.raw() + in_offset * row_bytes, static_cast<size_t>(rows * row_bytes));
      }
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalCollective(const HloInstruction& hlo, Operands ops,
                                       EvalContext& ctx, DeviceSlot& device) {
  const HloOpcode opcode = hlo.opcode();
  const Shape& declared = hlo.shape();
  const int64_t n_ops = static_cast<int64_t>(ops.size());
  if (device.rendezvous == nullptr) return InstructionError(hlo, "no rendezvous for collectives");
  std::vector<Literal> mine;
  for (const Literal* op : ops) mine.push_back(*op);
  const int64_t count = device.runs[&hlo]++;

  if (opcode == HloOpcode::kCollectivePermute || opcode == HloOpcode::kCollectivePermuteStart) {
    if (n_ops != 1) {
      return InstructionUnimplemented(hlo, "the combined / in-place form (", n_ops,
                                      " operands) is not supported");
    }
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
        DevicePairsOf(hlo, device.mesh);
    if (!pairs.ok()) return InstructionError(hlo, pairs.status().message());
    // Every device takes part, so one exchange covers all pairs.
    std::vector<int64_t> everyone(device.mesh.device_count());
    for (int64_t d = 0; d < device.mesh.device_count(); ++d) everyone[d] = d;
    HLOC_ASSIGN_OR_RETURN(auto all, device.rendezvous->Exchange(hlo, count, everyone,
                                                                device.device, std::move(mine)));
    const Shape& result_shape = opcode == HloOpcode::kCollectivePermute
                                    ? declared
                                    : (declared.IsTuple() && declared.tuple_shapes_size() >= 2
                                           ? declared.tuple_shapes(1)
                                           : declared);
    Literal result = Zeros(result_shape);  // What a device nobody sends to gets.
    for (const auto& [source, target] : *pairs) {
      if (target == device.device) result = (*all[source])[0];
    }
    if (opcode == HloOpcode::kCollectivePermute) return result;
    if (!declared.IsTuple() || declared.tuple_shapes_size() < 2) {
      return InstructionError(hlo, "collective-permute-start must return a tuple");
    }
    std::vector<Literal> elements;
    elements.push_back(*ops[0]);
    elements.push_back(std::move(result));
    for (int64_t i = 2; i < declared.tuple_shapes_size(); ++i) {
      elements.push_back(Zeros(declared.tuple_shapes(i)));
    }
    return Literal::Tuple(std::move(elements));
  }

  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = DeviceGroupsOf(hlo, device.mesh);
  if (!groups.ok()) return InstructionError(hlo, groups.status().message());
  const std::vector<int64_t>* group = nullptr;
  int64_t rank = 0;
  for (const auto& g : *groups) {
    auto it = std::find(g.begin(), g.end(), device.device);
    if (it != g.end()) {
      group = &g;
      rank = it - g.begin();
    }
  }
  if (group == nullptr) return InstructionError(hlo, "device ", device.device, " is in no group");
  const int64_t size = static_cast<int64_t>(group->size());
  HLOC_ASSIGN_OR_RETURN(auto all,
                        device.rendezvous->Exchange(hlo, count, *group, rank, std::move(mine)));
  auto parts_of = [&](int64_t i) {
    std::vector<const Literal*> parts;
    for (const auto& c : all) parts.push_back(&(*c)[i]);
    return parts;
  };
  for (const auto& c : all) {
    if (static_cast<int64_t>(c->size()) != n_ops) {
      return InstructionError(hlo, "devices disagree on the operand count");
    }
  }

  std::vector<Literal> results;
  switch (opcode) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: {
      for (int64_t i = 0; i < n_ops; ++i) {
        HLOC_ASSIGN_OR_RETURN(Literal r, Reduce(hlo, parts_of(i), ctx));
        results.push_back(std::move(r));
      }
      if (opcode == HloOpcode::kAllReduceStart && declared.IsTuple() &&
          declared.tuple_shapes_size() == 2 * n_ops) {
        // Older all-reduce-start form: (operands..., results...).
        std::vector<Literal> both;
        for (const Literal* op : ops) both.push_back(*op);
        for (Literal& r : results) both.push_back(std::move(r));
        return Literal::Tuple(std::move(both));
      }
      return Pack(std::move(results), declared);
    }
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: {
      const bool start = opcode == HloOpcode::kAllGatherStart;
      if (start && (!declared.IsTuple() || declared.tuple_shapes_size() != 2)) {
        return InstructionError(hlo, "all-gather-start must return (operands, results)");
      }
      const Shape& out = start ? declared.tuple_shapes(1) : declared;
      for (int64_t i = 0; i < n_ops; ++i) {
        HLOC_ASSIGN_OR_RETURN(int64_t d, SplitDimension(hlo, *ops[i], 1));
        HLOC_ASSIGN_OR_RETURN(Literal r, Concat(hlo, parts_of(i), d, Part(out, i)));
        results.push_back(std::move(r));
      }
      if (!start) return Pack(std::move(results), declared);
      std::vector<Literal> operands;
      for (const Literal* op : ops) operands.push_back(*op);
      std::vector<Literal> pair;
      pair.push_back(Pack(std::move(operands), declared.tuple_shapes(0)));
      pair.push_back(Pack(std::move(results), out));
      return Literal::Tuple(std::move(pair));
    }
    case HloOpcode::kReduceScatter:
      for (int64_t i = 0; i < n_ops; ++i) {
        HLOC_ASSIGN_OR_RETURN(int64_t d, SplitDimension(hlo, *ops[i], size));
        HLOC_ASSIGN_OR_RETURN(Literal sum, Reduce(hlo, parts_of(i), ctx));
        results.push_back(Piece(sum, d, rank, size, Part(declared, i)));
      }
      return Pack(std::move(results), declared);
    case HloOpcode::kAllToAll:
      if (hlo.dimensions().empty()) {
        // Tuple form: operand j goes to rank j; result j came from rank j.
        if (n_ops != size) {
          return InstructionError(hlo, n_ops, " operands for a group of ", size);
        }
        for (int64_t j = 0; j < size; ++j) results.push_back((*all[j])[rank]);
        return Pack(std::move(results), declared);
      }
      for (int64_t i = 0; i < n_ops; ++i) {
        HLOC_ASSIGN_OR_RETURN(int64_t d, SplitDimension(hlo, *ops[i], size));
        // Result block r along d is rank r's piece number `rank`.
        const Shape& out_shape = Part(declared, i);
        Literal out(out_shape);
        const int w = ByteWidth(out_shape.element_type());
        const int64_t outer = Product(out_shape, 0, d);
        const int64_t inner = Product(out_shape, d, out_shape.rank()) * w;
        const int64_t piece = inner / size;
        if (out.size_bytes() != ops[i]->size_bytes()) {
          return InstructionError(hlo, "result ", out_shape.ToString(false),
                                  " differs in size from the operand");
        }
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t r = 0; r < size; ++r) {
            std::memcpy(out.mutable_raw() + o * inner + r * piece,
                        (*all[r])[i].raw() + o * inner + rank * piece, piece);
          }
        }
        results.push_back(std::move(out));
      }
      return Pack(std::move(results), declared);
    case HloOpcode::kRaggedAllToAll:
      return RaggedAllToAll(hlo, all, rank);
    case HloOpcode::kCollectiveBroadcast:
      for (int64_t i = 0; i < n_ops; ++i) results.push_back((*all[0])[i]);
      return Pack(std::move(results), declared);
    default:
      return InstructionUnimplemented(hlo, "collective not supported by the evaluator");
  }
}

}  // namespace eval
}  // namespace hloc
