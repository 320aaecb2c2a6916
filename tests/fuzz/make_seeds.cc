// Writes the fuzzers' seed corpora from the XLA corpus (HLOC_CORPUS_DIR):
//   OUT/text/      every "// -----" piece of every corpus file, as written;
//   OUT/proto/     every piece that parses, as a serialized HloModuleProto;
//   OUT/pipeline/  the canonical text (up to 16 KiB) of every piece that
//                  verifies and has at most 60 instructions (the pipeline
//                  target's guards);
//   OUT/hlo.dict   a libFuzzer dictionary: opcode names, element types and
//                  the text format's keywords.
// Usage: make_seeds OUT_DIR   (prints the counts).
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "hlo/opcode.h"
#include "hlo/primitive_type.h"
#include "hlo/proto_io.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"

namespace hloc::fuzz {
namespace {

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// "// -----" pieces of a corpus file, with their text as written.
std::vector<std::string> SplitPieces(const std::string& text) {
  std::vector<std::string> pieces(1);
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StripTrailingAsciiWhitespace(line) == "// -----") {
      pieces.emplace_back();
      continue;
    }
    absl::StrAppend(&pieces.back(), line, "\n");
  }
  return pieces;
}

std::string Dictionary() {
  std::set<std::string> words = {
      "HloModule", "ENTRY", "ROOT", "parameter", "constant", "metadata=", "sharding=",
      "dimensions={", "to_apply=", "calls=", "body=", "condition=", "branch_computations={",
      "slice={", "padding=", "window={", "size=", "stride=", "pad=", "lhs_dilate=",
      "rhs_dilate=", "dim_labels=", "lhs_contracting_dims={", "rhs_contracting_dims={",
      "lhs_batch_dims={", "rhs_batch_dims={", "direction=", "EQ", "NE", "LT", "GT", "LE",
      "GE", "index=", "iota_dimension=", "kind=", "kLoop", "kInput", "kOutput", "custom_call_target=",
      "offset_dims={", "collapsed_slice_dims={", "start_index_map={", "index_vector_dim=",
      "slice_sizes={", "update_window_dims={", "inserted_window_dims={",
      "scatter_dims_to_operand_dims={", "is_stable=", "num_carries=", "is_reverse=",
      "is_associative=", "true", "false", "{0}", "{1,0}",
      "input_output_alias={", "buffer_donor={", "entry_computation_layout={", "->", "// -----",
      "feature_group_count=", "batch_group_count=", "backend_config=", "exponent_bits=",
      "mantissa_bits=", "distribution=", "rng_distribution_uniform", "tuple_index=",
      "fft_type=", "fft_length={", "replica_groups={}", "replica_groups=mesh['x'=2] {'x'}", "device_ids=(", "':(", "channel_id=", "inf", "-inf", "nan"};
  for (int i = 0; i < kHloOpcodeCount; ++i) {
    words.insert(std::string(HloOpcodeName(static_cast<HloOpcode>(i))));
  }
  for (int i = xla::PrimitiveType_MIN; i <= xla::PrimitiveType_MAX; ++i) {
    if (xla::PrimitiveType_IsValid(i)) {
      words.insert(std::string(PrimitiveTypeName(static_cast<PrimitiveType>(i))));
    }
  }
  std::string out;
  for (const std::string& word : words) {
    if (word.empty()) continue;
    std::string escaped;
    for (char c : word) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    absl::StrAppend(&out, "\"", escaped, "\"\n");
  }
  return out;
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR (reads $HLOC_CORPUS_DIR)\n");
    return 2;
  }
  const std::string out = argv[1];
  const std::string root = testdata::CorpusDir();
  if (root.empty()) {
    std::fprintf(stderr, "make_seeds: no corpus ($HLOC_CORPUS_DIR)\n");
    return 1;
  }
  for (const char* sub : {"", "/text", "/proto", "/pipeline"}) mkdir((out + sub).c_str(), 0755);
  int texts = 0, protos = 0, runnable = 0;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(root)) {
    std::string contents;
    if (!testdata::ReadFile(file.path, &contents)) continue;
    for (const std::string& piece : SplitPieces(contents)) {
      if (piece.size() > (64 << 10)) continue;
      const std::string name = absl::StrCat(texts);
      Write(absl::StrCat(out, "/text/", name, ".hlo"), piece);
      ++texts;
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(piece);
      if (!module.ok()) continue;
      absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(**module);
      if (proto.ok() && proto->ByteSizeLong() <= (64 << 10)) {
        Write(absl::StrCat(out, "/proto/", name, ".pb"), proto->SerializeAsString());
        ++protos;
      }
      if ((*module)->instruction_count() <= 60 && VerifyModule(**module).ok()) {
        const std::string printed = PrintModule(**module);
        if (printed.size() <= (16 << 10)) {  // the pipeline target's limit
          Write(absl::StrCat(out, "/pipeline/", name, ".hlo"), printed);
          ++runnable;
        }
      }
    }
  }
  Write(out + "/hlo.dict", Dictionary());
  std::printf("make_seeds: %d text, %d proto, %d pipeline seeds in %s\n", texts, protos, runnable,
              out.c_str());
  return texts > 0 ? 0 : 1;
}

}  // namespace
}  // namespace hloc::fuzz

int main(int argc, char** argv) { return hloc::fuzz::Main(argc, argv); }
