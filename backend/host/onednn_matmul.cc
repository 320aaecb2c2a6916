// Dots as oneDNN matmul primitives (see onednn_operations.h).
//
// A dot's operands are read as [batch, M, K] and [batch, K, N] (or the
// transposed [batch, K, M] / [batch, N, K]) by collapsing each group of
// dimensions: the batch dimensions must lead on both sides and each side's
// free and contracting dimensions must be runs of adjacent dimensions, so
// every group is one strided dimension. The result is [batch, M, N]
// row-major, which is the dot's own dimension order.
#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/host/gelu_epilogue.h"
#include "backend/host/onednn_operations.h"

namespace hloc {
namespace host {
namespace {

using dnnl::memory;

std::vector<int64_t> ToVector(const google::protobuf::RepeatedField<int64_t>& field) {
  return std::vector<int64_t>(field.begin(), field.end());
}

bool IsRun(const std::vector<int64_t>& dims) {
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] != dims[i - 1] + 1) return false;
  }
  return true;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dimensions(d);
  return p;
}

// The dimensions of a rank-`rank` operand in neither `a` nor `b`, in order.
std::vector<int64_t> Others(int64_t rank, const std::vector<int64_t>& a,
                            const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::count(a.begin(), a.end(), d) == 0 && std::count(b.begin(), b.end(), d) == 0) {
      out.push_back(d);
    }
  }
  return out;
}

// One operand of the product: its batch dims lead, its free and contracting
// dims are runs; `transposed` when the contracting run comes first.
OneDnnRefusal ReadOperand(const HloInstruction& dot, int side, const std::vector<int64_t>& batch,
                          const std::vector<int64_t>& contracting, int64_t* free_size,
                          bool* transposed) {
  const Shape& shape = dot.operand(side)->shape();
  const char* name = side == 0 ? "left" : "right";
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] != static_cast<int64_t>(i)) {
      return absl::StrCat(name, " batch dimensions are not the leading ones");
    }
  }
  const std::vector<int64_t> free = Others(shape.rank(), batch, contracting);
  if (!IsRun(free) || !IsRun(contracting)) {
    return absl::StrCat(name, " free or contracting dimensions are not adjacent");
  }
  *free_size = Product(shape, free);
  // With one of the runs empty (a vector side) either reading is right.
  *transposed = !free.empty() && !contracting.empty() && contracting.front() < free.front();
  return std::nullopt;
}

memory::desc Desc(memory::data_type type, bool batched, int64_t batch, int64_t rows,
                  int64_t cols, bool transposed) {
  // Stored [rows, cols] row-major, or [cols, rows] when transposed.
  const int64_t row_stride = transposed ? 1 : cols;
  const int64_t col_stride = transposed ? rows : 1;
  if (!batched) return memory::desc({rows, cols}, type, memory::dims{row_stride, col_stride});
  return memory::desc({batch, rows, cols}, type, memory::dims{rows * cols, row_stride, col_stride});
}

// The per-feature vector of an epilogue step, broadcast over [batch, M].
memory::desc VectorDesc(const MatmulSpec& spec) {
  const memory::data_type type = OneDnnType(spec.epilogue.vector_type);
  return spec.batched ? memory::desc({1, 1, spec.n}, type, memory::dims{spec.n, spec.n, 1})
                      : memory::desc({1, spec.n}, type, memory::dims{spec.n, 1});
}

// One primitive of a (possibly split) matmul with its descriptors.
struct MatmulPiece {
  dnnl::matmul primitive;
  memory::desc a, b, c, vector, scratchpad;
  std::string impl;
};

// A matmul as one primitive over the whole (possibly batched) problem, and,
// when it is large enough to share between threads, also split into row
// blocks of M for every batch entry, each block a 2-D primitive over the same
// strided storage (leading dimensions of the whole problem). The blocks run
// only when the pool has more than one thread: each block packs all of B
// again, which a single thread would pay for nothing (8 blocks of 32 rows
// each packing a 1024x1024 B in large_mlp).
class MatmulOperation : public OneDnnOperation {
 public:
  MatmulOperation(const MatmulSpec& spec, MatmulPiece whole, int64_t block_rows,
                  std::vector<MatmulPiece> blocks)
      : spec_(spec),
        whole_(std::move(whole)),
        block_rows_(block_rows),
        blocks_per_batch_(block_rows == 0 ? 1 : (spec.m + block_rows - 1) / block_rows),
        blocks_(std::move(blocks)),
        in_width_(ByteWidth(spec.input_type)),
        out_width_(ByteWidth(spec.output_type)) {}

  absl::Status Run(absl::Span<void* const> buffers, const dnnl::engine& engine,
                   runtime::ThreadPool* pool) const override {
    const MatmulSpec& s = spec_;
    const bool split = block_rows_ > 0 && pool != nullptr && pool->num_threads() > 1;
    const int64_t tasks = split ? s.batch * blocks_per_batch_ : 1;
    return ForEachPiece(tasks, pool, [&](int64_t t) {
      uint8_t* a = static_cast<uint8_t*>(buffers[s.a_buffer]) + s.a_offset;
      uint8_t* b = static_cast<uint8_t*>(buffers[s.b_buffer]) + s.b_offset;
      uint8_t* c = static_cast<uint8_t*>(buffers[s.out_buffer]);
      const MatmulPiece* piece = &whole_;
      int64_t rows = s.batch * s.m;  // Of the result this piece writes.
      if (split) {
        const int64_t batch = t / blocks_per_batch_, block = t % blocks_per_batch_;
        const int64_t row = block * block_rows_;
        piece = (block == blocks_per_batch_ - 1 && blocks_.size() > 1) ? &blocks_[1] : &blocks_[0];
        a += (batch * s.m * s.k + row * (s.a_transposed ? 1 : s.k)) * in_width_;
        b += batch * s.k * s.n * in_width_;
        c += (batch * s.m * s.n + row * s.n) * out_width_;
        rows = std::min(block_rows_, s.m - row);
      }
      std::unordered_map<int, memory> args;
      args.emplace(DNNL_ARG_SRC, ThreadMemory(piece, DNNL_ARG_SRC, piece->a, engine, a));
      args.emplace(DNNL_ARG_WEIGHTS,
                   ThreadMemory(piece, DNNL_ARG_WEIGHTS, piece->b, engine, b));
      args.emplace(DNNL_ARG_DST, ThreadMemory(piece, DNNL_ARG_DST, piece->c, engine, c));
      args.emplace(DNNL_ARG_SCRATCHPAD, ThreadScratchpad(piece->scratchpad, engine));
      if (s.epilogue.NativeBias()) {
        args.emplace(DNNL_ARG_BIAS, ThreadMemory(piece, DNNL_ARG_BIAS, piece->vector, engine,
                                                 buffers[s.epilogue.steps[0].buffer]));
      }
      s.epilogue.AddPostOpArguments(buffers, piece->vector, engine, &args, piece);
      dnnl::stream stream(engine);
      piece->primitive.execute(stream, args);
      stream.wait();
      if (s.epilogue.GeluTanhAfterPrimitive()) {
        GeluTanhInPlace(reinterpret_cast<float*>(c), rows * s.n);
      }
    });
  }

  std::string Describe() const override {
    std::string out = absl::StrCat("matmul ", whole_.impl);
    if (spec_.epilogue.GeluTanhAfterPrimitive()) absl::StrAppend(&out, ", GELU after it");
    if (block_rows_ > 0) {
      absl::StrAppend(&out, ", ", spec_.batch * blocks_per_batch_, " blocks of ", block_rows_,
                      " rows with several threads");
    }
    return out;
  }

 private:
  MatmulSpec spec_;
  MatmulPiece whole_;
  int64_t block_rows_;  // 0: never split.
  int64_t blocks_per_batch_;
  std::vector<MatmulPiece> blocks_;  // Full blocks, then the last block when shorter.
  int in_width_, out_width_;
};

}  // namespace

std::string MatmulSpec::Key() const {
  return absl::StrCat("matmul ", PrimitiveTypeName(input_type), "->",
                      PrimitiveTypeName(output_type), " ", batched ? "batched " : "", batch, "x",
                      m, "x", n, "x", k, a_transposed ? " aT" : "", b_transposed ? " bT" : "",
                      " ", epilogue.Key(), " buffers=", a_buffer, ",", b_buffer, ",",
                      out_buffer, a_offset || b_offset ? " offsets=" : "",
                      a_offset || b_offset ? absl::StrCat(a_offset, ",", b_offset) : "");
}

std::vector<int64_t> RowMajorStridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

bool HasDynamicDimensions(const HloInstruction& hlo) {
  auto dynamic = [](const Shape& shape) {
    if (!shape.IsArray()) return false;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (shape.is_dynamic_dimension(d)) return true;
    }
    return false;
  };
  if (dynamic(hlo.shape())) return true;
  for (const HloInstruction* operand : hlo.operands()) {
    if (dynamic(operand->shape())) return true;
  }
  return false;
}

OneDnnRefusal MatmulFromDot(const HloInstruction& dot, MatmulSpec* spec) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2) return "not a dot";
  if (HasDynamicDimensions(dot)) return "dynamic dimensions";
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  const Shape& out = dot.shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) return "operands are not arrays";
  const PrimitiveType in = lhs.element_type();
  if (rhs.element_type() != in) return "operands have different element types";
  if (OneDnnType(in) == memory::data_type::undef) {
    return absl::StrCat("element type ", PrimitiveTypeName(in), " (oneDNN takes f32, bf16, f16)");
  }
  if (out.element_type() != in && out.element_type() != xla::F32) {
    return absl::StrCat("result type ", PrimitiveTypeName(out.element_type()), " from ",
                        PrimitiveTypeName(in));
  }
  const xla::DotDimensionNumbers& dn = dot.attrs().dot_dimension_numbers;
  const std::vector<int64_t> lb = ToVector(dn.lhs_batch_dimensions());
  const std::vector<int64_t> rb = ToVector(dn.rhs_batch_dimensions());
  const std::vector<int64_t> lc = ToVector(dn.lhs_contracting_dimensions());
  const std::vector<int64_t> rc = ToVector(dn.rhs_contracting_dimensions());
  if (lb.size() != rb.size() || lc.size() != rc.size()) return "unpaired dimension numbers";
  for (int64_t d : lb) if (d < 0 || d >= lhs.rank()) return "dimension number out of range";
  for (int64_t d : lc) if (d < 0 || d >= lhs.rank()) return "dimension number out of range";
  for (int64_t d : rb) if (d < 0 || d >= rhs.rank()) return "dimension number out of range";
  for (int64_t d : rc) if (d < 0 || d >= rhs.rank()) return "dimension number out of range";
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs.dimensions(lb[i]) != rhs.dimensions(rb[i])) return "batch sizes differ";
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs.dimensions(lc[i]) != rhs.dimensions(rc[i])) return "contracting sizes differ";
  }
  MatmulSpec s;
  s.input_type = in;
  s.output_type = out.element_type();
  s.batched = !lb.empty();
  s.batch = Product(lhs, lb);
  s.k = Product(lhs, lc);
  if (OneDnnRefusal r = ReadOperand(dot, 0, lb, lc, &s.m, &s.a_transposed)) return r;
  bool rhs_contracting_first = false;
  if (OneDnnRefusal r = ReadOperand(dot, 1, rb, rc, &s.n, &rhs_contracting_first)) return r;
  // B is [K, N] when its contracting run comes first, [N, K] otherwise.
  const std::vector<int64_t> rf = Others(rhs.rank(), rb, rc);
  s.b_transposed = !rf.empty() && !rc.empty() && !rhs_contracting_first;
  int64_t out_elements = 1;
  for (int64_t d : out.dimensions()) out_elements *= d;
  if (out_elements != s.batch * s.m * s.n) return "result size differs from batch*M*N";
  if (s.batch == 0 || s.m == 0 || s.n == 0 || s.k == 0) return "an empty dimension";
  *spec = std::move(s);
  return std::nullopt;
}

absl::StatusOr<std::shared_ptr<const OneDnnOperation>> BuildMatmul(const MatmulSpec& spec,
                                                                   const dnnl::engine& engine) {
  const memory::data_type in = OneDnnType(spec.input_type);
  const memory::data_type out = OneDnnType(spec.output_type);
  // Split into row blocks when the problem is large enough to pay for the
  // pieces: at least one per thread, up to four per thread for balance, but
  // blocks of about kMinBlockRows rows where M allows, since every block
  // packs all of B again (f32 256x1024x1024 on 2 threads: 8 blocks of 32 rows
  // took ~1.6x the CPU time of 2 blocks of 128).
  constexpr int64_t kMinBlockRows = 128;
  const int threads = OneDnnContext::DefaultThreads();
  const double macs = static_cast<double>(spec.batch) * spec.m * spec.n * spec.k;
  int64_t block_rows = 0;
  if (threads > 1 && macs >= double{1 << 20}) {
    const int64_t rows = spec.batch * spec.m;
    const int64_t wanted_tasks = std::clamp<int64_t>((rows + kMinBlockRows - 1) / kMinBlockRows,
                                                     threads, 4 * static_cast<int64_t>(threads));
    const int64_t blocks = std::max<int64_t>(1, (wanted_tasks + spec.batch - 1) / spec.batch);
    block_rows = std::max<int64_t>(1, (spec.m + blocks - 1) / blocks);
    if (spec.m > 16) block_rows = std::min(spec.m, (block_rows + 15) / 16 * 16);
    if (block_rows >= spec.m && spec.batch == 1) block_rows = 0;
  }
  // 2-D pieces of `rows` rows over the whole problem's storage, or the whole
  // (possibly batched) problem.
  auto make_piece = [&](int64_t rows, bool whole) -> absl::StatusOr<MatmulPiece> {
    memory::desc a, b, c, vector;
    const memory::data_type vector_type = OneDnnType(spec.epilogue.vector_type);
    if (whole) {
      a = Desc(in, spec.batched, spec.batch, spec.m, spec.k, spec.a_transposed);
      b = Desc(in, spec.batched, spec.batch, spec.k, spec.n, spec.b_transposed);
      c = Desc(out, spec.batched, spec.batch, spec.m, spec.n, false);
      vector = VectorDesc(spec);
    } else {
      a = memory::desc({rows, spec.k}, in,
                       spec.a_transposed ? memory::dims{1, spec.m} : memory::dims{spec.k, 1});
      b = Desc(in, false, 1, spec.k, spec.n, spec.b_transposed);
      c = memory::desc({rows, spec.n}, out, memory::dims{spec.n, 1});
      vector = memory::desc({1, spec.n}, vector_type, memory::dims{spec.n, 1});
    }
    dnnl::primitive_attr attr = spec.epilogue.Attributes(vector);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::desc desc = spec.epilogue.NativeBias() ? dnnl::matmul::desc(a, b, vector, c)
                                                                : dnnl::matmul::desc(a, b, c);
    ScopedOmpThreads one(1);
    dnnl::matmul::primitive_desc pd(desc, attr, engine, /*allow_empty=*/true);
    if (!pd) return absl::UnimplementedError(absl::StrCat("oneDNN has no ", spec.Key()));
    MatmulPiece piece;
    piece.primitive = dnnl::matmul(pd);
    piece.a = a;
    piece.b = b;
    piece.c = c;
    piece.vector = vector;
    piece.scratchpad = pd.scratchpad_desc();
    piece.impl = pd.impl_info_str();
    return piece;
  };
  absl::StatusOr<MatmulPiece> whole = make_piece(spec.m, true);
  if (!whole.ok()) return whole.status();
  std::vector<MatmulPiece> blocks;
  if (block_rows > 0) {
    absl::StatusOr<MatmulPiece> full = make_piece(block_rows, false);
    if (!full.ok()) return full.status();
    blocks.push_back(*std::move(full));
    const int64_t last = spec.m - (spec.m - 1) / block_rows * block_rows;
    if (last != block_rows) {
      absl::StatusOr<MatmulPiece> rest = make_piece(last, false);
      if (!rest.ok()) return rest.status();
      blocks.push_back(*std::move(rest));
    }
  }
  return std::shared_ptr<const OneDnnOperation>(std::make_shared<MatmulOperation>(
      spec, *std::move(whole), block_rows, std::move(blocks)));
}

}  // namespace host
}  // namespace hloc
