// input_output_alias (with its may/must kind) and buffer_donor survive every
// way a module is read and written: HLO text, HloModuleProto through the
// generated messages (ModuleFromProto) and through the fast reader
// (ModuleFromProtoBytes), HloProto and HloSnapshot wrappers. One unit test per
// form of entry, then the whole corpus ($HLOC_CORPUS_DIR).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "hlo/proto_io.h"
#include "hlo/testing/corpus.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

using google::protobuf::util::MessageDifferencer;

// Empty when `module`'s aliasing equals `expected`'s, else what differs.
std::string AliasingDiff(const HloModule& expected, const HloModule& actual) {
  std::string diff;
  MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  differencer.Compare(expected.config().input_output_alias, actual.config().input_output_alias);
  MessageDifferencer donors;
  donors.ReportDifferencesToString(&diff);
  donors.Compare(expected.config().buffer_donor, actual.config().buffer_donor);
  return diff;
}

// Every read/write path back to a module; each result's aliasing must equal
// the original's. Returns the failures as text.
std::string RoundTripAliasing(const HloModule& module) {
  std::string failures;
  auto check = [&](const char* path, absl::StatusOr<std::unique_ptr<HloModule>> read) {
    if (!read.ok()) {
      absl::StrAppend(&failures, path, ": ", read.status().message(), "\n");
      return;
    }
    std::string diff = AliasingDiff(module, **read);
    if (!diff.empty()) absl::StrAppend(&failures, path, ": ", diff, "\n");
  };
  check("text", ParseHloModule(PrintModule(module)));
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(module);
  if (!proto.ok()) return absl::StrCat("ModuleToProto: ", proto.status().message());
  check("generated messages", ModuleFromProto(*proto));
  const std::string bytes = proto->SerializeAsString();
  check("fast reader", ModuleFromProtoBytes(bytes));
  xla::HloProto hlo_proto;
  *hlo_proto.mutable_hlo_module() = *proto;
  check("HloProto", ModuleFromHloProtoBytes(hlo_proto.SerializeAsString()));
  LoadedSnapshot snapshot;
  snapshot.module = module.Clone();
  absl::StatusOr<xla::HloSnapshot> snapshot_proto = SnapshotToProto(snapshot);
  if (!snapshot_proto.ok()) return absl::StrCat("SnapshotToProto: ", snapshot_proto.status().message());
  absl::StatusOr<LoadedSnapshot> read = SnapshotFromProtoBytes(snapshot_proto->SerializeAsString());
  if (read.ok()) {
    check("HloSnapshot", std::move(read->module));
  } else {
    check("HloSnapshot", read.status());
  }
  // Written again from the proto that was read: a fixed point.
  absl::StatusOr<std::unique_ptr<HloModule>> again = ModuleFromProtoBytes(bytes);
  if (again.ok()) {
    absl::StatusOr<xla::HloModuleProto> reproto = ModuleToProto(**again);
    if (!reproto.ok() ||
        !MessageDifferencer::Equals(proto->input_output_alias(), reproto->input_output_alias()) ||
        !MessageDifferencer::Equals(proto->buffer_donor(), reproto->buffer_donor())) {
      absl::StrAppend(&failures, "proto -> module -> proto changed the aliasing\n");
    }
  }
  return failures;
}

std::unique_ptr<HloModule> Parse(const std::string& header) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(absl::StrCat(
      "HloModule m", header, R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  t = (s32[6], (f32[4], f32[2])) parameter(1)
  r = f32[6] reshape(a)
  ROOT out = (f32[6], (f32[2,3], f32[2])) tuple(r, (f32[2,3], f32[2]) tuple(a, f32[2] constant({1, 2})))
})"));
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

struct AliasCase {
  const char* name;
  const char* header;
  int aliases;
  int donors;
};

class AliasingRoundTrip : public ::testing::TestWithParam<AliasCase> {};

TEST_P(AliasingRoundTrip, EveryPathKeepsTheEntries) {
  std::unique_ptr<HloModule> module = Parse(GetParam().header);
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->config().input_output_alias.entries_size(), GetParam().aliases);
  ASSERT_EQ(module->config().buffer_donor.entries_size(), GetParam().donors);
  EXPECT_EQ(RoundTripAliasing(*module), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AliasingRoundTrip,
    ::testing::Values(
        AliasCase{"may_alias", ", input_output_alias={ {0}: (0, {}, may-alias) }", 1, 0},
        AliasCase{"must_alias", ", input_output_alias={ {0}: (0, {}, must-alias) }", 1, 0},
        AliasCase{"kind_omitted", ", input_output_alias={ {1,1}: (1, {1,1}) }", 1, 0},
        AliasCase{"nested_indices_both_kinds",
                  ", input_output_alias={ {1,0}: (0, {}, must-alias), {0}: (1, {0}, may-alias) }",
                  2, 0},
        AliasCase{"buffer_donor", ", buffer_donor={ (0, {}), (1, {1,0}) }", 0, 2},
        AliasCase{"alias_and_donor",
                  ", input_output_alias={ {0}: (1, {0}, must-alias) }, buffer_donor={ (0, {}) }",
                  1, 1}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(AliasingRoundTripCase, MustAliasKindIsKeptExactly) {
  std::unique_ptr<HloModule> module = Parse(", input_output_alias={ {0}: (0, {}, must-alias) }");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(*module);
  ASSERT_TRUE(proto.ok());
  ASSERT_EQ(proto->input_output_alias().entries_size(), 1);
  EXPECT_EQ(proto->input_output_alias().entries(0).kind(), xla::MUST_ALIAS);
  absl::StatusOr<std::unique_ptr<HloModule>> read = ModuleFromProtoBytes(proto->SerializeAsString());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_NE(PrintModule(**read).find("input_output_alias={ {0}: (0, {}, must-alias) }"),
            std::string::npos)
      << PrintModule(**read);
}

TEST(AliasingRoundTripCorpus, EveryModuleKeepsItsAliasing) {
  const std::string root = testdata::CorpusDir();
  if (root.empty()) GTEST_SKIP() << "no corpus: set HLOC_CORPUS_DIR";
  int modules = 0, with_aliasing = 0;
  std::vector<std::string> failures;
  for (const testdata::CorpusFile& file : testdata::ListCorpusFiles(root)) {
    std::vector<testdata::CorpusModule> pieces;
    if (!testdata::ParseCorpusFile(file, &pieces)) continue;
    for (const testdata::CorpusModule& piece : pieces) {
      if (!piece.module.ok()) continue;
      ++modules;
      const HloModuleConfig& config = (*piece.module)->config();
      if (config.input_output_alias.entries_size() + config.buffer_donor.entries_size() > 0) {
        ++with_aliasing;
      }
      std::string failure = RoundTripAliasing(**piece.module);
      if (!failure.empty()) failures.push_back(absl::StrCat(piece.id, ": ", failure));
    }
  }
  std::printf("%d modules, %d with input_output_alias or buffer_donor\n", modules, with_aliasing);
  EXPECT_GT(modules, 100);
  EXPECT_GE(with_aliasing, 3);  // must_alias, must_alias_with_sharding, transpose_side_outputs_inplace
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
}

}  // namespace
}  // namespace hloc
