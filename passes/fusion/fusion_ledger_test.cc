// Tests of the decision ledger: what it records, its text and JSON forms, and
// determinism (same input, same ledger and module, byte for byte).
#include "passes/fusion/fusion_ledger.h"

#include "gtest/gtest.h"
#include "passes/fusion/fusion_test_util.h"
#include "passes/fusion/horizontal_fusion.h"
#include "passes/fusion/multi_output_fusion.h"
#include "passes/fusion/post_dominator_fusion.h"
#include "passes/fusion/producer_consumer_fusion.h"

namespace hloc {
namespace {

constexpr char kModel[] = R"(
HloModule small_model
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[8,128] parameter(0)
  w = f32[128,64] parameter(1)
  bias = f32[64] parameter(2)
  ninf = f32[] constant(-inf)
  mx = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mxb = f32[8,128] broadcast(mx), dimensions={0}
  sub = f32[8,128] subtract(x, mxb)
  e = f32[8,128] exponential(sub)
  zero = f32[] constant(0)
  sum = f32[8] reduce(e, zero), dimensions={1}, to_apply=add_f32
  sumb = f32[8,128] broadcast(sum), dimensions={0}
  p = f32[8,128] divide(e, sumb)
  d = f32[8,64] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,64] broadcast(bias), dimensions={1}
  a = f32[8,64] add(d, bb)
  zb = f32[8,64] broadcast(zero), dimensions={}
  r = f32[8,64] maximum(a, zb)
  small = f32[8] negate(sum)
  ROOT t = (f32[8,64], f32[8], f32[8]) tuple(r, small, mx)
})";

struct Outcome {
  std::string module, json, text;
};

Outcome RunAll(bool post_dominator) {
  auto module = fusion_test::Parse(kModel);
  FusionLedger ledger;
  std::unique_ptr<HloPass> first;
  if (post_dominator) first = std::make_unique<PostDominatorFusion>(FusionRules(), &ledger);
  else first = std::make_unique<ProducerConsumerFusion>(FusionRules(), &ledger);
  MultiOutputFusion multi_output(FusionRules(), &ledger);
  HorizontalFusion horizontal(FusionRules(), &ledger);
  fusion_test::RunAndVerify(*first, *module);
  fusion_test::RunAndVerify(multi_output, *module);
  fusion_test::RunAndVerify(horizontal, *module);
  return {PrintModule(*module), ledger.ToJson(), ledger.ToText()};
}

TEST(FusionLedger, SameInputSameLedgerAndModule) {
  for (bool post_dominator : {false, true}) {
    Outcome a = RunAll(post_dominator);
    Outcome b = RunAll(post_dominator);
    EXPECT_EQ(a.module, b.module);
    EXPECT_EQ(a.json, b.json);
    EXPECT_EQ(a.text, b.text);
    EXPECT_NE(a.text.find(" group "), std::string::npos) << a.text;
    EXPECT_NE(a.text.find(" refused "), std::string::npos) << a.text;
  }
}

TEST(FusionLedger, RecordsEdgesAndGroups) {
  auto module = fusion_test::Parse(kModel);
  FusionLedger ledger;
  ProducerConsumerFusion pass(FusionRules(), &ledger);
  fusion_test::RunAndVerify(pass, *module);
  int groups = 0, edges = 0;
  for (const LedgerEntry& entry : ledger.entries()) {
    EXPECT_EQ(entry.pass, "producer-consumer-fusion");
    EXPECT_EQ(entry.computation, "main");
    EXPECT_FALSE(entry.rule.empty());
    if (entry.event == "group") {
      ++groups;
      EXPECT_TRUE(entry.accepted);
      EXPECT_FALSE(entry.result.empty());
    }
    if (entry.event == "edge") ++edges;
  }
  EXPECT_EQ(groups, static_cast<int>(fusion_test::EntryFusions(*module).size()));
  EXPECT_GT(edges, groups);

  FusionLedger groups_only(FusionLedger::Detail::kGroups);
  auto again = fusion_test::Parse(kModel);
  ProducerConsumerFusion quiet(FusionRules(), &groups_only);
  fusion_test::RunAndVerify(quiet, *again);
  for (const LedgerEntry& entry : groups_only.entries()) EXPECT_EQ(entry.event, "group");
}

TEST(FusionLedger, TextAndJsonForms) {
  FusionLedger ledger;
  ledger.AddEdge("outline-library-calls", "main", "edge", "a", "b\"q", false, "rule-x",
                 "why\nnot");
  LedgerEntry entry;
  entry.pass = "outline-library-calls";
  entry.computation = "main";
  entry.event = "group";
  entry.subjects = {"m1", "m2"};
  entry.accepted = true;
  entry.rule = "committed";
  entry.result = "call.1";
  ledger.Add(entry);
  EXPECT_EQ(ledger.ToText(),
            "outline-library-calls main: edge a -> b\"q refused (rule-x) why\nnot\n"
            "outline-library-calls main: group call.1 [m1 m2] accepted (committed)\n");
  EXPECT_EQ(ledger.ToJson(),
            "[\n {\"pass\":\"outline-library-calls\",\"computation\":\"main\",\"event\":\"edge\","
            "\"subjects\":[\"a\",\"b\\\"q\"],\"accepted\":false,\"rule\":\"rule-x\","
            "\"reason\":\"why\\nnot\",\"result\":\"\"},\n"
            " {\"pass\":\"outline-library-calls\",\"computation\":\"main\",\"event\":\"group\","
            "\"subjects\":[\"m1\",\"m2\"],\"accepted\":true,\"rule\":\"committed\","
            "\"reason\":\"\",\"result\":\"call.1\"}\n]\n");
  EXPECT_EQ(ledger.Find("outline-library-calls", "rule-x").size(), 1u);
}

}  // namespace
}  // namespace hloc
