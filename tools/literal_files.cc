#include "tools/literal_files.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hlo/loader.h"
#include "hlo/status_macros.h"

namespace hloc::tools {
namespace {

absl::StatusOr<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

uint64_t Fnv1a(const uint8_t* data, int64_t size) {
  uint64_t hash = 1469598103934665603ULL;
  for (int64_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 1099511628211ULL;
  return hash;
}

void Summarize(const Literal& literal, const std::string& label, std::string* out) {
  if (literal.shape().IsTuple()) {
    for (size_t k = 0; k < literal.tuple_elements().size(); ++k) {
      Summarize(literal.tuple_elements()[k], absl::StrCat(label, "{", k, "}"), out);
    }
    return;
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t finite = 0, nans = 0;
  const bool complex = IsComplex(literal.shape().element_type());
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    double v = complex ? std::abs(literal.GetAsComplex(i)) : literal.GetAsDouble(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (std::isfinite(v)) {
      sum += v;
      ++finite;
    }
  }
  absl::StrAppendFormat(out, "output%s %s: min %g max %g mean %g nan %d checksum %016x\n", label,
                        literal.shape().ToString(false), literal.element_count() ? lo : 0,
                        literal.element_count() ? hi : 0, finite ? sum / finite : 0.0, nans,
                        Fnv1a(literal.raw(), literal.size_bytes()));
}

}  // namespace

absl::StatusOr<Literal> ReadResultLiteral(const std::string& path) {
  HLOC_ASSIGN_OR_RETURN(std::string bytes, ReadBytes(path));
  xla::HloSnapshot snapshot;
  if (ParseProtoQuietly(bytes, &snapshot) && snapshot.has_result() && snapshot.has_hlo()) {
    return LiteralFromProto(snapshot.result());
  }
  xla::LiteralProto proto;
  if (!ParseProtoQuietly(bytes, &proto) || !proto.has_shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " holds neither an HloSnapshot with a result nor a LiteralProto"));
  }
  auto literal = LiteralFromProto(proto);
  if (!literal.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", literal.status().message()));
  }
  return literal;
}

absl::Status WriteSnapshot(const LoadedSnapshot& snapshot, const std::string& path) {
  HLOC_ASSIGN_OR_RETURN(xla::HloSnapshot proto, SnapshotToProto(snapshot));
  std::ofstream out(path, std::ios::binary);
  if (!out || !proto.SerializeToOstream(&out)) {
    return absl::DataLossError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

std::string SummarizeLiteral(const Literal& literal) {
  std::string out;
  Summarize(literal, "", &out);
  return out;
}

}  // namespace hloc::tools
