#include "tests/jax_sharded/sharded_zoo.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hlo/evaluator/compare.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Puts `literal` at [i] of `list`, growing it.
void Place(std::vector<Literal>* list, int64_t i, Literal literal) {
  if (static_cast<int64_t>(list->size()) <= i) list->resize(i + 1);
  (*list)[i] = std::move(literal);
}

}  // namespace

std::string ShardedZooDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr) {
    return absl::StrCat(srcdir, "/", workspace ? workspace : "hloc", "/tests/jax_sharded/zoo");
  }
  return "tests/jax_sharded/zoo";
}

std::vector<std::string> ShardedZooModels() {
  return {"dp_train_step", "tp_mlp", "ring_attention", "moe_all_to_all", "pmap_step"};
}

std::vector<std::string> SpmdZooModels() {
  return {"spmd_mlp_dp", "spmd_tp_matmul", "spmd_reduce", "spmd_reshard_chain", "spmd_mesh2x2",
          "spmd_dp_train_step", "spmd_mesh2x2_mlp", "spmd_attention_2d",
          "spmd_attention_2d_train", "spmd_embedding", "spmd_uneven"};
}

absl::StatusOr<ShardedZooModel> ReadShardedZooModel(const std::string& name) {
  const std::string base = absl::StrCat(ShardedZooDir(), "/", name);
  ShardedZooModel model;
  model.name = name;
  HLOC_ASSIGN_OR_RETURN(model.partitioned_text, ReadFile(base + ".partitioned.hlo"));
  HLOC_ASSIGN_OR_RETURN(model.sdy_text, ReadFile(base + ".sdy.hlo"));
  absl::StatusOr<std::string> proto = ReadFile(base + ".partitioned.pb");
  if (proto.ok()) model.partitioned_proto = *std::move(proto);
  HLOC_ASSIGN_OR_RETURN(std::string io, ReadFile(base + ".io.txt"));
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(io, '\n', absl::SkipEmpty())) {
    ++line_number;
    const std::string where = absl::StrCat(base, ".io.txt:", line_number);
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(' ', 3));
    const bool device = absl::StartsWith(line, "device_");
    if (device) f = absl::StrSplit(line, absl::MaxSplits(' ', 4));
    if (f.size() != (device ? 5u : 4u)) return absl::InvalidArgumentError(where + ": bad line");
    int64_t d = 0, i = 0;
    if ((device && !absl::SimpleAtoi(f[1], &d)) || !absl::SimpleAtoi(f[device ? 2 : 1], &i) ||
        d < 0 || d > 64 || i < 0 || i > 1024) {
      return absl::InvalidArgumentError(where + ": bad index");
    }
    absl::StatusOr<Shape> shape = ParseShape(f[device ? 3 : 2]);
    if (!shape.ok()) return absl::InvalidArgumentError(where + ": " + shape.status().ToString());
    absl::StatusOr<Literal> literal = ParseLiteral(f[device ? 4 : 3], *shape);
    if (!literal.ok()) {
      return absl::InvalidArgumentError(where + ": " + literal.status().ToString());
    }
    std::vector<std::vector<Literal>>* per_device = nullptr;
    if (f[0] == "device_input") per_device = &model.device_inputs;
    if (f[0] == "device_output") per_device = &model.device_outputs;
    if (per_device != nullptr) {
      if (static_cast<int64_t>(per_device->size()) <= d) per_device->resize(d + 1);
      Place(&(*per_device)[d], i, *std::move(literal));
    } else if (f[0] == "global_input") {
      Place(&model.global_inputs, i, *std::move(literal));
    } else if (f[0] == "global_output") {
      Place(&model.global_outputs, i, *std::move(literal));
    } else {
      return absl::InvalidArgumentError(where + ": unknown kind " + std::string(f[0]));
    }
  }
  return model;
}

std::string DeviceOutputMismatches(const ShardedZooModel& model, int64_t device,
                                   const Literal& result) {
  const std::vector<Literal>& expected = model.device_outputs[device];
  const bool tuple = result.shape().IsTuple();
  const size_t outputs = tuple ? result.tuple_elements().size() : 1;
  if (outputs != expected.size()) {
    return absl::StrCat(outputs, " outputs, JAX has ", expected.size(), "\n");
  }
  std::string mismatches;
  for (size_t i = 0; i < expected.size(); ++i) {
    const Literal& actual = tuple ? result.tuple_elements()[i] : result;
    ComparisonReport report = CompareLiterals(expected[i], actual);
    if (!report.ok) absl::StrAppend(&mismatches, "output ", i, ": ", report.ToString(), "\n");
  }
  return mismatches;
}

}  // namespace hloc
