// The fast proto reader against the reference path: for every input, loading
// bytes with ModuleFromProtoBytes / SnapshotFromProtoBytes must give what
// protobuf's parse plus ModuleFromProto / SnapshotFromProto gives: the same
// printed module and the same re-exported proto (carried fields included),
// or the same error. Inputs: every module of $HLOC_CORPUS_DIR (converted to
// protos here), the JAX zoo dumps and snapshots, the XLA fuzz snapshots, hand
// made protos with unusual encodings, and truncated or byte-flipped copies.
// Run under --config=asan as well.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "hlo/testing/corpus.h"
#include "hlo/proto_fast_internal.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

// Protobuf logs every refused string field; thousands of mutants would
// drown the test log.
const bool kQuietProtobuf = [] {
  google::protobuf::SetLogHandler(
      [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  return true;
}();

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<fs::path> FilesWithSuffix(const fs::path& dir, absl::string_view suffix) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.is_regular_file() && absl::EndsWith(entry.path().filename().string(), suffix)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

fs::path RepoDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir && workspace) return fs::path(srcdir) / workspace;
  return fs::path(".");
}

std::string Deterministic(const google::protobuf::Message& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

// Everything observable of a loaded module: its text and its proto.
std::string Fingerprint(const HloModule& module) {
  auto proto = ModuleToProto(module);
  return absl::StrCat(PrintModule(module), "\n---\n",
                      proto.ok() ? Deterministic(*proto) : std::string(proto.status().message()));
}

absl::StatusOr<std::unique_ptr<HloModule>> ReferenceModule(const std::string& bytes) {
  xla::HloModuleProto proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::DataLossError("not a valid HloModuleProto (protobuf parse failed)");
  }
  return ModuleFromProto(proto);
}

// Counts of what CompareModule saw, for the report and sanity checks.
struct Tally {
  int inputs = 0;
  int loaded = 0;
  int rejected = 0;
};

void CompareModule(const std::string& label, const std::string& bytes, Tally* tally) {
  SCOPED_TRACE(label);
  ++tally->inputs;
  auto reference = ReferenceModule(bytes);
  auto fast = ModuleFromProtoBytes(bytes);
  ASSERT_EQ(fast.ok(), reference.ok()) << (fast.ok() ? reference.status() : fast.status());
  if (!reference.ok()) {
    ++tally->rejected;
    EXPECT_EQ(fast.status(), reference.status());
    return;
  }
  ++tally->loaded;
  EXPECT_EQ(Fingerprint(**fast), Fingerprint(**reference));
}

std::string SnapshotFingerprint(const LoadedSnapshot& snapshot) {
  std::string out = Fingerprint(*snapshot.module);
  for (const Literal& argument : snapshot.arguments) {
    absl::StrAppend(&out, "\narg ", argument.shape().ToString(), " ",
                    Deterministic(LiteralToProto(argument)));
  }
  if (snapshot.result) {
    absl::StrAppend(&out, "\nresult ", snapshot.result->shape().ToString(), " ",
                    Deterministic(LiteralToProto(*snapshot.result)));
  }
  absl::StrAppend(&out, "\nplatform ", snapshot.execution_platform);
  return out;
}

void CompareSnapshot(const std::string& label, const std::string& bytes, Tally* tally) {
  SCOPED_TRACE(label);
  ++tally->inputs;
  absl::StatusOr<LoadedSnapshot> reference = absl::DataLossError(
      "not a valid HloSnapshot (protobuf parse failed)");
  xla::HloSnapshot proto;
  if (proto.ParseFromString(bytes)) reference = SnapshotFromProto(proto);
  auto fast = SnapshotFromProtoBytes(bytes);
  ASSERT_EQ(fast.ok(), reference.ok()) << (fast.ok() ? reference.status() : fast.status());
  if (!reference.ok()) {
    ++tally->rejected;
    EXPECT_EQ(fast.status(), reference.status());
    return;
  }
  ++tally->loaded;
  EXPECT_EQ(SnapshotFingerprint(*fast), SnapshotFingerprint(*reference));
}

// HLOC_FUZZ_SCALE=n runs n times as many random mutants (default 1).
int FuzzScale() {
  const char* scale = std::getenv("HLOC_FUZZ_SCALE");
  return scale ? std::max(1, std::atoi(scale)) : 1;
}

// Truncations, and corruptions of one to three bytes, of `bytes`.
template <typename Compare>
void CompareMutants(const std::string& label, const std::string& bytes, int flips,
                    Compare compare, Tally* tally) {
  flips *= FuzzScale();
  std::mt19937 random(static_cast<uint32_t>(bytes.size() * FuzzScale()));
  const size_t cuts = std::min<size_t>(bytes.size(), 24);
  for (size_t k = 1; k <= cuts; ++k) {
    const size_t at = bytes.size() * k / (cuts + 1);
    compare(absl::StrCat(label, " cut at ", at), bytes.substr(0, at), tally);
  }
  for (int k = 0; k < flips && !bytes.empty(); ++k) {
    std::string mutant = bytes;
    std::string where;
    const int changes = 1 + static_cast<int>(random() % 3);
    for (int c = 0; c < changes; ++c) {
      const size_t at = random() % mutant.size();
      const uint8_t values[] = {0x00, 0xff, 0x80, 0x7f, 0x08, 0x12, 0x01,
                                static_cast<uint8_t>(random())};
      mutant[at] = static_cast<char>(values[random() % 8]);
      absl::StrAppend(&where, " byte ", at, " = ", static_cast<int>(uint8_t(mutant[at])));
    }
    compare(absl::StrCat(label, where), mutant, tally);
  }
}

TEST(ProtoFastReaderTest, CorpusModules) {
  const char* corpus = std::getenv("HLOC_CORPUS_DIR");
  if (corpus == nullptr || *corpus == '\0') GTEST_SKIP() << "HLOC_CORPUS_DIR is not set";
  Tally tally, mutants;
  proto_fast_internal::FastReadStats stats;
  int file_index = 0;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(corpus)) {
    auto modules = ParseEachHloModule(ReadBytes(file.path));
    for (size_t i = 0; i < modules.size(); ++i) {
      if (!modules[i].ok()) continue;
      auto proto = ModuleToProto(**modules[i]);
      if (!proto.ok()) continue;
      const std::string label = absl::StrCat(file.name, "#", i);
      const std::string bytes = proto->SerializeAsString();
      CompareModule(label, bytes, &tally);
      (void)proto_fast_internal::TryFastModule(bytes, &stats);
      // Mutants of a sample, to keep the test quick.
      if (++file_index % 16 == 0) CompareMutants(label, bytes, 40, CompareModule, &mutants);
    }
  }
  std::printf("corpus: %d modules compared (%d loaded); %d mutants (%d loaded, %d rejected)\n",
              tally.inputs, tally.loaded, mutants.inputs, mutants.loaded, mutants.rejected);
  std::printf("corpus: %d instructions built fast, %d the reference way\n",
              stats.fast_instructions, stats.reference_instructions);
  EXPECT_GT(tally.loaded, 400);
  EXPECT_GT(stats.fast_instructions, 5 * stats.reference_instructions);
  EXPECT_GT(mutants.rejected, 0);
}

TEST(ProtoFastReaderTest, ZooDumpsAndSnapshots) {
  const fs::path zoo = RepoDir() / "tests/jax/zoo";
  Tally tally, mutants;
  for (const fs::path& file : FilesWithSuffix(zoo, ".before.pb")) {
    const std::string bytes = ReadBytes(file);
    CompareModule(file.filename().string(), bytes, &tally);
    CompareMutants(file.filename().string(), bytes, 60, CompareModule, &mutants);
  }
  for (const fs::path& file : FilesWithSuffix(zoo, ".snapshot.pb")) {
    const std::string bytes = ReadBytes(file);
    CompareSnapshot(file.filename().string(), bytes, &tally);
    CompareMutants(file.filename().string(), bytes, 20, CompareSnapshot, &mutants);
  }
  // The fast builder, not the per-instruction fallback, reads real dumps.
  proto_fast_internal::FastReadStats stats;
  for (const fs::path& file : FilesWithSuffix(zoo, ".before.pb")) {
    SCOPED_TRACE(file.string());
    EXPECT_TRUE(proto_fast_internal::TryFastModule(ReadBytes(file), &stats).ok());
  }
  std::printf("zoo: %d instructions built fast, %d the reference way\n", stats.fast_instructions,
              stats.reference_instructions);
  EXPECT_GT(stats.fast_instructions, 20 * stats.reference_instructions);
  std::printf("zoo: %d inputs (%d loaded); %d mutants (%d loaded, %d rejected)\n", tally.inputs,
              tally.loaded, mutants.inputs, mutants.loaded, mutants.rejected);
  EXPECT_GE(tally.loaded, 20);
  EXPECT_EQ(tally.loaded, tally.inputs);
}

TEST(ProtoFastReaderTest, XlaFuzzSnapshots) {
  Tally tally, mutants;
  for (const fs::path& file : FilesWithSuffix(RepoDir() / "tests/xla_refs", ".snapshot.pb")) {
    const std::string bytes = ReadBytes(file);
    CompareSnapshot(file.filename().string(), bytes, &tally);
    if (bytes.size() < (1 << 20)) {
      CompareMutants(file.filename().string(), bytes, 10, CompareSnapshot, &mutants);
    }
  }
  std::printf("xla_refs: %d snapshots (%d loaded); %d mutants (%d loaded, %d rejected)\n",
              tally.inputs, tally.loaded, mutants.inputs, mutants.loaded, mutants.rejected);
  EXPECT_GE(tally.loaded, 40);
  EXPECT_EQ(tally.loaded, tally.inputs);
}

// ---- hand-made encodings ----

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Tag(int field, int wire_type) { return Varint(uint64_t(field) << 3 | wire_type); }
std::string LengthDelimited(int field, const std::string& payload) {
  return Tag(field, 2) + Varint(payload.size()) + payload;
}

constexpr char kModule[] = R"(
HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  c = f32[] constant(2)
  bc = f32[4]{0} broadcast(c), dimensions={}
  m = f32[4]{0} multiply(a, bc)
  cmp = pred[4]{0} compare(m, b), direction=LT
  sel = f32[4]{0} select(cmp, m, b)
  z = f32[] constant(0)
  r = f32[] reduce(sel, z), dimensions={0}, to_apply=add
  rb = f32[4]{0} broadcast(r), dimensions={}
  ROOT out = f32[4]{0} add(sel, rb)
}
)";

google::protobuf::UnknownFieldSet* Unknown(google::protobuf::Message* message) {
  return message->GetReflection()->MutableUnknownFields(message);
}

xla::HloModuleProto BaseProto() {
  auto module = ParseHloModule(kModule);
  EXPECT_TRUE(module.ok()) << module.status();
  auto proto = ModuleToProto(**module);
  EXPECT_TRUE(proto.ok()) << proto.status();
  return *proto;
}

xla::HloInstructionProto* Find(xla::HloModuleProto* proto, absl::string_view name) {
  for (auto& c : *proto->mutable_computations()) {
    for (auto& i : *c.mutable_instructions()) {
      if (i.name() == name) return &i;
    }
  }
  ADD_FAILURE() << "no " << name;
  return proto->mutable_computations(0)->mutable_instructions(0);
}

TEST(ProtoFastReaderTest, UnusualEncodingsLoadTheSame) {
  Tally tally;
  const xla::HloModuleProto base = BaseProto();
  CompareModule("base", base.SerializeAsString(), &tally);

  // Each case edits one instruction's proto; the module is re-serialized.
  struct Case {
    const char* label;
    const char* instruction;
    std::function<void(xla::HloInstructionProto*)> edit;
  };
  const std::vector<Case> cases = {
      {"unknown field", "m",
       [](auto* i) { Unknown(i)->AddVarint(5000, 7); }},
      {"unknown length-delimited field", "m",
       [](auto* i) { Unknown(i)->AddLengthDelimited(5001, "abc"); }},
      {"known field with a wrong wire type", "m",
       [](auto* i) { Unknown(i)->AddFixed32(14, 3); }},
      {"empty conv dnums on an add", "out",
       [](auto* i) { i->mutable_convolution_dimension_numbers(); }},
      {"empty dot dnums on a multiply", "m", [](auto* i) { i->mutable_dot_dimension_numbers(); }},
      {"empty padding config on a select", "sel", [](auto* i) { i->mutable_padding_config(); }},
      {"empty window on an add", "out", [](auto* i) { i->mutable_window(); }},
      {"statistics", "m",
       [](auto* i) { i->mutable_statistics_viz()->set_stat_index_to_visualize(1); }},
      {"no statistics", "m", [](auto* i) { i->clear_statistics_viz(); }},
      {"shape without layout", "m", [](auto* i) { i->mutable_shape()->clear_layout(); }},
      {"layout without tail padding", "m",
       [](auto* i) { i->mutable_shape()->mutable_layout()->clear_tail_padding_alignment_in_elements(); }},
      {"layout with memory space", "m",
       [](auto* i) { i->mutable_shape()->mutable_layout()->set_memory_space(1); }},
      {"shape without dynamic flags", "m",
       [](auto* i) { i->mutable_shape()->clear_is_dynamic_dimension(); }},
      {"dynamic dimension", "m",
       [](auto* i) { i->mutable_shape()->set_is_dynamic_dimension(0, true); }},
      {"non-ascii name", "m", [](auto* i) { i->set_name("m\xc3\xa9"); }},
      {"parameter number on a multiply", "m", [](auto* i) { i->set_parameter_number(3); }},
      {"tuple index on a multiply", "m", [](auto* i) { i->set_tuple_index(1); }},
      {"fusion kind on a multiply", "m", [](auto* i) { i->set_fusion_kind("kLoop"); }},
      {"direction on a multiply", "m", [](auto* i) { i->set_comparison_direction("LT"); }},
      {"negative channel id", "m", [](auto* i) { i->set_channel_id(-2); }},
      {"positive channel id", "m", [](auto* i) { i->set_channel_id(2); }},
      {"comparison type given", "cmp", [](auto* i) { i->set_comparison_type("FLOAT"); }},
      {"comparison type unusual", "cmp", [](auto* i) { i->set_comparison_type("TOTALORDER"); }},
      {"comparison type unknown", "cmp", [](auto* i) { i->set_comparison_type("FUZZY"); }},
      {"no comparison direction", "cmp", [](auto* i) { i->clear_comparison_direction(); }},
      {"metadata", "m",
       [](auto* i) {
         i->mutable_metadata()->set_op_name("jit(f)/mul");
         i->mutable_metadata()->set_source_line(12);
       }},
      {"metadata with columns and a stack frame", "m",
       [](auto* i) {
         i->mutable_metadata()->set_source_file("f.py");
         i->mutable_metadata()->set_source_column(4);
         i->mutable_metadata()->set_stack_frame_id(2);
         i->mutable_metadata()->set_scheduling_name("s");
       }},
      {"metadata with a profile after plain fields", "m",
       [](auto* i) {
         i->mutable_metadata()->set_op_type("mul");
         i->mutable_metadata()->set_size_of_generated_code_in_bytes(64);
       }},
      {"metadata with a non-ascii file", "m",
       [](auto* i) { i->mutable_metadata()->set_source_file("caf\xc3\xa9.py"); }},
      {"metadata with an unknown field", "m",
       [](auto* i) {
         i->mutable_metadata()->set_op_name("x");
         Unknown(i->mutable_metadata())->AddVarint(900, 1);
       }},
      {"frontend attributes", "m",
       [](auto* i) { (*i->mutable_frontend_attributes()->mutable_map())["k"] = "v"; }},
      {"sharding", "m", [](auto* i) { i->mutable_sharding()->set_type(xla::OpSharding::REPLICATED); }},
      {"backend config", "m", [](auto* i) { i->set_backend_config("{\"x\":1}"); }},
      {"original value", "m", [](auto* i) { i->mutable_original_value(); }},
      {"epsilon and feature index", "m",
       [](auto* i) {
         i->set_epsilon(0.5f);
         i->set_feature_index(1);
       }},
      {"literal with wrong shape", "c",
       [](auto* i) { i->mutable_literal()->mutable_shape()->add_dimensions(2); }},
      {"literal with layout details", "c",
       [](auto* i) { i->mutable_literal()->mutable_shape()->mutable_layout()->set_memory_space(3); }},
      {"literal as f64", "c",
       [](auto* i) {
         i->mutable_literal()->clear_f32s();
         i->mutable_literal()->add_f64s(2);
       }},
      {"constant without literal", "c", [](auto* i) { i->clear_literal(); }},
      {"unknown opcode", "m", [](auto* i) { i->set_opcode("multiply-ish"); }},
      {"bad enum in shape", "m",
       [](auto* i) { i->mutable_shape()->set_element_type(static_cast<xla::PrimitiveType>(777)); }},
      // Open proto enums: numbers XLA never defined (a fuzzer's rng_algorithm = 7
      // printed as "algorithm=" and did not parse back).
      {"undefined rng_algorithm", "m",
       [](auto* i) { i->set_rng_algorithm(static_cast<xla::RandomAlgorithm>(7)); }},
      {"undefined distribution", "m",
       [](auto* i) { i->set_distribution(static_cast<xla::RandomDistribution>(9)); }},
      {"undefined fft_type", "m", [](auto* i) { i->set_fft_type(static_cast<xla::FftType>(-3)); }},
      {"undefined custom_call_schedule", "m",
       [](auto* i) { i->set_custom_call_schedule(static_cast<xla::CustomCallSchedule>(11)); }},
      {"dimensions on a multiply", "m", [](auto* i) { i->add_dimensions(0); }},
      {"slice dimensions on a multiply", "m",
       [](auto* i) {
         auto* s = i->add_slice_dimensions();
         s->set_start(1);
         s->set_limit(3);
         s->set_stride(1);
       }},
      {"is_composite on a multiply", "m", [](auto* i) { i->set_is_composite(true); }},
      {"custom call target on a multiply", "m",
       [](auto* i) { i->set_custom_call_target("foo"); }},
      {"precision config on a multiply", "m",
       [](auto* i) { i->mutable_precision_config()->add_operand_precision(xla::PrecisionConfig::HIGH); }},
  };
  for (const Case& c : cases) {
    xla::HloModuleProto proto = base;
    c.edit(Find(&proto, c.instruction));
    CompareModule(c.label, proto.SerializeAsString(), &tally);
  }

  // Module-level fields other than the computations.
  {
    xla::HloModuleProto proto = base;
    Unknown(&proto)->AddVarint(4000, 1);
    proto.set_is_dynamic(true);
    proto.mutable_schedule();
    CompareModule("module extras", proto.SerializeAsString(), &tally);
  }
  // Fields written twice, unpacked repeated fields, fields after the
  // computations: all legal wire format.
  {
    const std::string bytes = base.SerializeAsString();
    CompareModule("name again at the end", bytes + LengthDelimited(1, "renamed"), &tally);
    CompareModule("entry id again", bytes + Tag(6, 0) + Varint(12345), &tally);
    CompareModule("computation field as varint", bytes + Tag(3, 0) + Varint(1), &tally);
    CompareModule("group", bytes + Tag(77, 3) + Tag(77, 4), &tally);
    CompareModule("field number 0", bytes + Tag(0, 0) + Varint(1), &tally);
  }
  // The module's host_program_shape and the computations' program shapes,
  // which the fast reader decodes or checks without protobuf.
  {
    const std::string bytes = base.SerializeAsString();
    const std::string shape = base.host_program_shape().SerializeAsString();
    CompareModule("host program shape again", bytes + LengthDelimited(4, shape), &tally);
    CompareModule("host program shape with a third parameter",
                  bytes + LengthDelimited(4, LengthDelimited(1, base.host_program_shape()
                                                                   .parameters(0)
                                                                   .SerializeAsString())),
                  &tally);
    xla::HloModuleProto proto = base;
    proto.mutable_host_program_shape()->add_parameter_names("a");
    CompareModule("host program shape with names", proto.SerializeAsString(), &tally);
    proto.mutable_host_program_shape()->add_parameter_names("b");
    proto.mutable_host_program_shape()->add_parameter_names("c");
    CompareModule("more names than parameters", proto.SerializeAsString(), &tally);
    proto = base;
    proto.mutable_host_program_shape()->mutable_parameters(0)->set_element_type(xla::S32);
    CompareModule("host program shape not the entry's", proto.SerializeAsString(), &tally);
    proto = base;
    proto.mutable_host_program_shape()->mutable_result()->mutable_layout()->set_memory_space(1);
    CompareModule("host program shape with a memory space", proto.SerializeAsString(), &tally);
    proto = base;
    proto.mutable_host_program_shape()->clear_result();
    CompareModule("host program shape without result", proto.SerializeAsString(), &tally);
    proto = base;
    Unknown(proto.mutable_host_program_shape())->AddVarint(99, 1);
    CompareModule("host program shape with unknown field", proto.SerializeAsString(), &tally);
    proto = base;
    proto.mutable_host_program_shape()->mutable_parameters(1)->mutable_layout()->add_tiles()
        ->add_dimensions(2);
    CompareModule("host program shape with a tile", proto.SerializeAsString(), &tally);
    proto = base;
    proto.mutable_host_program_shape()->add_parameter_names("caf\xc3\xa9");
    CompareModule("host program shape with a UTF-8 name", proto.SerializeAsString(), &tally);
    proto = base;
    auto* program_shape = proto.mutable_computations(0)->mutable_program_shape();
    program_shape->add_parameter_names("x\xc3\xa9");
    Unknown(program_shape->add_parameters())->AddFixed32(7, 1);
    program_shape->mutable_result()->mutable_layout()->set_dynamic_shape_metadata_prefix_bytes(8);
    CompareModule("computation program shape with extras", proto.SerializeAsString(), &tally);
    proto = base;
    proto.mutable_computations(0)->mutable_program_shape()->add_parameter_names("\xff");
    CompareModule("computation program shape with a bad string", proto.SerializeAsString(),
                  &tally);
  }
  {
    // Instructions re-encoded with unpacked operand ids and a second name.
    xla::HloModuleProto proto = base;
    for (auto& c : *proto.mutable_computations()) {
      for (auto& i : *c.mutable_instructions()) {
        std::string extra;
        for (int64_t id : i.operand_ids()) extra += Tag(36, 0) + Varint(id);
        extra += LengthDelimited(1, i.name() + "_again");
        i.clear_operand_ids();
        xla::HloInstructionProto reparsed;
        ASSERT_TRUE(reparsed.ParseFromString(i.SerializeAsString() + extra));
        ASSERT_EQ(reparsed.name(), i.name() + "_again");
        i = reparsed;
      }
    }
    CompareModule("unpacked operands", proto.SerializeAsString(), &tally);
  }
  EXPECT_GT(tally.loaded, 30);
  EXPECT_GT(tally.rejected, 3);
}

TEST(ProtoFastReaderTest, TruncationsOfEveryLength) {
  Tally tally;
  const std::string bytes = BaseProto().SerializeAsString();
  for (size_t n = 0; n < bytes.size(); ++n) CompareModule("prefix", bytes.substr(0, n), &tally);
  EXPECT_GT(tally.rejected, 0);
}

TEST(ProtoFastReaderTest, EveryByteFlipped) {
  Tally tally;
  const std::string bytes = BaseProto().SerializeAsString();
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x80}}) {
      std::string mutant = bytes;
      mutant[at] = static_cast<char>(value);
      CompareModule(absl::StrCat("byte ", at, " = ", int{value}), mutant, &tally);
    }
  }
  std::printf("flips: %d (%d loaded, %d rejected)\n", tally.inputs, tally.loaded, tally.rejected);
}

TEST(ProtoFastReaderTest, HloProtoWrapper) {
  xla::HloProto wrapper;
  *wrapper.mutable_hlo_module() = BaseProto();
  auto fast = ModuleFromHloProtoBytes(wrapper.SerializeAsString());
  ASSERT_TRUE(fast.ok()) << fast.status();
  auto reference = ModuleFromProto(wrapper.hlo_module());
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(Fingerprint(**fast), Fingerprint(**reference));
  EXPECT_FALSE(ModuleFromHloProtoBytes(std::string("\x0a\x05", 2)).ok());
  EXPECT_FALSE(ModuleFromHloProtoBytes("").ok());
}

}  // namespace
}  // namespace hloc
