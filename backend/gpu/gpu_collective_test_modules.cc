// Collective test modules (see gpu_collective_test_modules.h).
#include "backend/gpu/gpu_collective_test_modules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/evaluator/evaluator_test_util.h"

namespace hloc {
namespace gpu {
namespace test_modules {
namespace {

constexpr char kReducers[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
and_pred {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT m = pred[] and(a, b)
}
)";

// "HloModule <name>, replica_count=N" + reducers + `entry` with every
// "{W}" replaced by the argument's width 6N, "{WN}" by 6N x N, "{H}" by 3N,
// "{2N}" by 2N and "{N}" by N.
std::string Module(const std::string& name, int n, const std::string& entry) {
  std::string text = absl::StrCat("HloModule ", name, ", replica_count=", n, "\n", kReducers,
                                   entry);
  auto replace = [&](const std::string& key, int value) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key)) {
      text.replace(at, key.size(), std::to_string(value));
    }
  };
  replace("{W}", 6 * n);
  replace("{H}", 3 * n);
  replace("{WN}", 6 * n * n);
  replace("{2N}", 2 * n);
  replace("{N}", n);
  return text;
}

std::string Ring(int n) {
  std::vector<std::string> pairs;
  for (int d = 0; d < n; ++d) pairs.push_back(absl::StrCat("{", d, ",", (d + 1) % n, "}"));
  return absl::StrCat("{", absl::StrJoin(pairs, ","), "}");
}

}  // namespace

std::vector<CollectiveCase> CollectiveCases(int n) {
  std::vector<CollectiveCase> cases;
  cases.push_back({"all-reduce", Module("all_reduce", n, R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  twice = f32[2,{W}] add(p, p)
  ar = f32[2,{W}] all-reduce(twice), replica_groups={}, to_apply=add
  i = s32[2,{W}] convert(p)
  mx = s32[2,{W}] all-reduce(i), replica_groups={}, to_apply=max_s32
  z = f32[] constant(3000)
  zb = f32[2,{W}] broadcast(z), dimensions={}
  big = pred[2,{W}] compare(p, zb), direction=GT
  all = pred[2,{W}] all-reduce(big), replica_groups={}, to_apply=and_pred
  s = f32[2,{W}] all-reduce-start(p), replica_groups={}, to_apply=add
  d = f32[2,{W}] all-reduce-done(s)
  out = f32[2,{W}] add(ar, d)
  ROOT t = (f32[2,{W}], s32[2,{W}], pred[2,{W}]) tuple(out, mx, all)
}
)")});
  cases.push_back({"all-gather", Module("all_gather", n, R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  outer = f32[{2N},{W}] all-gather(p), replica_groups={}, dimensions={0}
  inner = f32[2,{WN}] all-gather(p), replica_groups={}, dimensions={1}
  neg = f32[2,{WN}] negate(inner)
  s = (f32[2,{W}], f32[2,{WN}]) all-gather-start(p), replica_groups={}, dimensions={1}
  d = f32[2,{WN}] all-gather-done(s)
  ROOT t = (f32[{2N},{W}], f32[2,{WN}], f32[2,{WN}]) tuple(outer, neg, d)
}
)")});
  cases.push_back({"reduce-scatter", Module("reduce_scatter", n, R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  inner = f32[2,6] reduce-scatter(p), replica_groups={}, dimensions={1}, to_apply=add
  c = f32[2,6] constant({{1,2,3,4,5,6},{7,8,9,10,11,12}})
  out = f32[2,6] add(inner, c)
  ROOT t = (f32[2,6]) tuple(out)
}
)")});
  cases.push_back({"all-to-all", Module("all_to_all", n, R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  inner = f32[2,{W}] all-to-all(p), replica_groups={}, dimensions={1}
  r = f32[{W},2] transpose(p), dimensions={1,0}
  outer = f32[{W},2] all-to-all(r), replica_groups={}, dimensions={0}
  ROOT t = (f32[2,{W}], f32[{W},2]) tuple(inner, outer)
}
)")});
  cases.push_back({"collective-permute",
                   Module("collective_permute", n, absl::StrCat(R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  ring = f32[2,{W}] collective-permute(p), source_target_pairs=)",
                                                                Ring(n), R"(
  one = f32[2,{W}] collective-permute(p), source_target_pairs={{0,{LAST}}}
  sum = f32[2,{W}] add(ring, one)
  s = (f32[2,{W}], f32[2,{W}], u32[], u32[]) collective-permute-start(p), source_target_pairs={{{LAST},0}}
  d = f32[2,{W}] collective-permute-done(s)
  ROOT t = (f32[2,{W}], f32[2,{W}], f32[2,{W}]) tuple(sum, one, d)
}
)"))});
  // {LAST}: the last device.
  for (size_t at = cases.back().text.find("{LAST}"); at != std::string::npos;
       at = cases.back().text.find("{LAST}")) {
    cases.back().text.replace(at, 6, std::to_string(n - 1));
  }
  // Device d sends peer j 1 + (d + j) % 2 rows from row 2 j of its input to
  // row 2 d of j's output, so what it receives from j is what it sends j.
  cases.push_back({"ragged-all-to-all", Module("ragged_all_to_all", n, R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  input = f32[{W},2] transpose(p), dimensions={1,0}
  output = f32[{W},2] negate(input)
  j = s32[{N}] iota(), iota_dimension=0
  id = u32[] replica-id()
  ids = s32[] convert(id)
  d = s32[{N}] broadcast(ids), dimensions={}
  one = s32[] constant(1)
  ones = s32[{N}] broadcast(one), dimensions={}
  two = s32[] constant(2)
  twos = s32[{N}] broadcast(two), dimensions={}
  dj = s32[{N}] add(d, j)
  parity = s32[{N}] remainder(dj, twos)
  sizes = s32[{N}] add(parity, ones)
  input_offsets = s32[{N}] multiply(j, twos)
  output_offsets = s32[{N}] multiply(d, twos)
  r = f32[{W},2] ragged-all-to-all(input, output, input_offsets, sizes, output_offsets, sizes), replica_groups={}
  ROOT out = f32[{W},2] add(r, input)
}
)")});
  cases.push_back({"collective-broadcast", Module("collective_broadcast", n, R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  b = f32[2,{W}] collective-broadcast(p), replica_groups={}
  ROOT out = f32[2,{W}] subtract(b, p)
}
)")});
  cases.push_back({"replica-id", Module("replica_id", n, R"(
ENTRY e {
  p = f32[2,{W}] parameter(0)
  id = u32[] replica-id()
  f = f32[] convert(id)
  fb = f32[2,{W}] broadcast(f), dimensions={}
  out = f32[2,{W}] add(p, fb)
  ROOT t = (f32[2,{W}], u32[]) tuple(out, id)
}
)")});
  return cases;
}

Literal CollectiveArgument(int device, int devices) {
  const int width = 6 * devices;
  std::vector<std::string> rows;
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> values;
    for (int c = 0; c < width; ++c) values.push_back(absl::StrCat(1000 * device + width * r + c));
    rows.push_back(absl::StrCat("{", absl::StrJoin(values, ", "), "}"));
  }
  return testing_util::L(absl::StrCat("f32[2,", width, "]"),
                         absl::StrCat("{", absl::StrJoin(rows, ", "), "}"));
}

}  // namespace test_modules
}  // namespace gpu
}  // namespace hloc
