// Real XLA output: every JAX 0.10.2 dump in tests/jax/zoo loads, writes back
// exactly what XLA wrote (up to id numbering), and reaches a fixed point;
// every snapshot's arguments fit its entry computation. Also the file loader
// on the same files: each proto kind, text, saving, and refusals.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "hlo/loader.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

using google::protobuf::util::MessageDifferencer;

std::string ZooDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir && workspace) return std::string(srcdir) + "/" + workspace + "/tests/jax/zoo";
  return "tests/jax/zoo";
}

std::vector<std::string> ZooFiles(absl::string_view suffix) {
  std::vector<std::string> files;
  const std::string dir = ZooDir();
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      if (absl::EndsWith(entry->d_name, suffix)) files.push_back(dir + "/" + entry->d_name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Diff(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  std::string report;
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);  // Constants hold NaNs; bits are checked elsewhere.
  MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  differencer.ReportDifferencesToString(&report);
  differencer.Compare(a, b);
  return report;
}

std::string DeterministicBytes(const google::protobuf::Message& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

int64_t ProtoInstructionCount(const xla::HloModuleProto& proto) {
  int64_t count = 0;
  for (const auto& c : proto.computations()) count += c.instructions_size();
  return count;
}

TEST(JaxDumpTest, ZooIsPresent) {
  EXPECT_GE(ZooFiles(".before.pb").size(), 10u) << "no dumps under " << ZooDir();
  EXPECT_EQ(ZooFiles(".before.pb").size(), ZooFiles(".snapshot.pb").size());
}

// Load, print, write back: the written proto is XLA's, renumbered; a second
// round trip reproduces the first byte for byte.
void CheckModuleRoundTrip(const xla::HloModuleProto& original) {
  auto module = ModuleFromProto(original);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->instruction_count(), ProtoInstructionCount(original));
  EXPECT_EQ((*module)->computation_count(), original.computations_size());
  EXPECT_EQ((*module)->entry()->name(), original.entry_computation_name());
  // The printed text parses back to a module that prints the same. (Text
  // drops what it has no syntax for: scalar layouts, default precision
  // configs, device assignment; so no proto comparison here.)
  const std::string text = PrintModule(**module);
  EXPECT_THAT(text, ::testing::HasSubstr(original.entry_computation_name()));
  auto reparsed = ParseHloModule(text);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  EXPECT_EQ((*reparsed)->instruction_count(), ProtoInstructionCount(original));
  EXPECT_EQ(PrintModule(**reparsed), text);

  auto written = ModuleToProto(**module);
  ASSERT_TRUE(written.ok()) << written.status();
  xla::HloModuleProto expected = original, actual = *written;
  CanonicalizeProtoIds(&expected);
  CanonicalizeProtoIds(&actual);
  EXPECT_EQ(Diff(expected, actual), "");
  // NaN payloads included: literal data is copied bit for bit.
  for (int c = 0; c < expected.computations_size(); ++c) {
    for (int i = 0; i < expected.computations(c).instructions_size(); ++i) {
      EXPECT_EQ(expected.computations(c).instructions(i).literal().SerializeAsString(),
                actual.computations(c).instructions(i).literal().SerializeAsString());
    }
  }

  auto reloaded = ModuleFromProto(*written);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  auto rewritten = ModuleToProto(**reloaded);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_EQ(Diff(*written, *rewritten), "");
  EXPECT_EQ(DeterministicBytes(*written), DeterministicBytes(*rewritten));
}

TEST(JaxDumpTest, ModuleProtosRoundTrip) {
  for (const std::string& path : ZooFiles(".before.pb")) {
    SCOPED_TRACE(path);
    xla::HloModuleProto proto;
    ASSERT_TRUE(proto.ParseFromString(ReadBytes(path)));
    CheckModuleRoundTrip(proto);
  }
}

TEST(JaxDumpTest, SnapshotsLoadAndMatchTheirEntry) {
  for (const std::string& path : ZooFiles(".snapshot.pb")) {
    SCOPED_TRACE(path);
    xla::HloSnapshot proto;
    ASSERT_TRUE(proto.ParseFromString(ReadBytes(path)));
    auto snapshot = SnapshotFromProto(proto);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    const HloComputation* entry = snapshot->module->entry();
    ASSERT_EQ(static_cast<int64_t>(snapshot->arguments.size()), entry->num_parameters());
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      EXPECT_TRUE(snapshot->arguments[i].shape().Compatible(entry->parameter(i)->shape()))
          << "argument " << i << ": " << snapshot->arguments[i].shape().ToString() << " vs "
          << entry->parameter(i)->shape().ToString();
    }
    ASSERT_TRUE(snapshot->result.has_value());
    EXPECT_TRUE(snapshot->result->shape().Compatible(entry->root()->shape()))
        << snapshot->result->shape().ToString() << " vs " << entry->root()->shape().ToString();

    // Arguments and result are written back as XLA wrote them.
    auto written = SnapshotToProto(*snapshot);
    ASSERT_TRUE(written.ok()) << written.status();
    ASSERT_EQ(written->arguments_size(), proto.arguments_size());
    for (int i = 0; i < proto.arguments_size(); ++i) {
      EXPECT_EQ(Diff(proto.arguments(i), written->arguments(i)), "") << "argument " << i;
    }
    EXPECT_EQ(Diff(proto.result(), written->result()), "");
    CheckModuleRoundTrip(proto.hlo().hlo_module());
  }
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(LoaderTest, LoadsEveryProtoKind) {
  for (const std::string& path : ZooFiles(".before.pb")) {
    SCOPED_TRACE(path);
    xla::HloModuleProto proto;
    ASSERT_TRUE(proto.ParseFromString(ReadBytes(path)));
    auto module = LoadModuleFromFile(path);
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ((*module)->instruction_count(), ProtoInstructionCount(proto));

    // The same module inside an HloProto, as --xla_dump_hlo_as_proto writes.
    xla::HloProto hlo_proto;
    *hlo_proto.mutable_hlo_module() = proto;
    const std::string wrapped = TempPath("wrapped.pb");
    WriteBytes(wrapped, hlo_proto.SerializeAsString());
    auto from_hlo_proto = LoadModuleFromFile(wrapped);
    ASSERT_TRUE(from_hlo_proto.ok()) << from_hlo_proto.status();
    EXPECT_EQ((*from_hlo_proto)->instruction_count(), ProtoInstructionCount(proto));
  }
  for (const std::string& path : ZooFiles(".snapshot.pb")) {
    SCOPED_TRACE(path);
    auto module = LoadModuleFromFile(path);
    ASSERT_TRUE(module.ok()) << module.status();
    auto snapshot = LoadSnapshotFromFile(path);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    EXPECT_EQ(static_cast<int64_t>(snapshot->arguments.size()),
              snapshot->module->entry()->num_parameters());
    EXPECT_EQ((*module)->instruction_count(), snapshot->module->instruction_count());
  }
}

TEST(LoaderTest, TextDumpsMatchTheirProtos) {
  for (const std::string& pb : ZooFiles(".before.pb")) {
    const std::string txt = pb.substr(0, pb.size() - 3) + ".txt";
    SCOPED_TRACE(txt);
    auto from_text = LoadModuleFromFile(txt);
    ASSERT_TRUE(from_text.ok()) << from_text.status();
    auto from_proto = LoadModuleFromFile(pb);
    ASSERT_TRUE(from_proto.ok()) << from_proto.status();
    EXPECT_EQ((*from_text)->instruction_count(), (*from_proto)->instruction_count());
    EXPECT_EQ((*from_text)->entry()->name(), (*from_proto)->entry()->name());
  }
}

TEST(LoaderTest, SavesProtoAndText) {
  const std::vector<std::string> dumps = ZooFiles(".before.pb");
  ASSERT_FALSE(dumps.empty());
  auto module = LoadModuleFromFile(dumps.front());
  ASSERT_TRUE(module.ok()) << module.status();
  auto expected = ModuleToProto(**module);
  ASSERT_TRUE(expected.ok());

  const std::string pb = TempPath("saved.pb");
  ASSERT_TRUE(SaveModuleToFile(**module, pb).ok());
  xla::HloModuleProto saved;
  ASSERT_TRUE(saved.ParseFromString(ReadBytes(pb)));
  EXPECT_EQ(Diff(saved, *expected), "");

  const std::string hlo = TempPath("saved.hlo");
  ASSERT_TRUE(SaveModuleToFile(**module, hlo).ok());
  EXPECT_EQ(ReadBytes(hlo), PrintModule(**module));
}

TEST(LoaderTest, RefusesBadFiles) {
  auto missing = LoadModuleFromFile(TempPath("does_not_exist.pb"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);

  const std::string garbage = TempPath("garbage.pb");
  WriteBytes(garbage, std::string("\xff\xff\xff\x01 not a proto", 17));
  auto bad = LoadModuleFromFile(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr(garbage));
  EXPECT_FALSE(LoadSnapshotFromFile(garbage).ok());

  // A sparse file just over the limit: refused from its size, never read.
  const std::string huge = TempPath("huge.pb");
  const int fd = open(huge.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, kMaxModuleFileBytes + 1), 0);
  close(fd);
  auto too_big = LoadModuleFromFile(huge);
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  unlink(huge.c_str());
}

}  // namespace
}  // namespace hloc
