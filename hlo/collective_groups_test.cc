#include "hlo/collective_groups.h"

#include <string>

#include "absl/strings/str_cat.h"

#include "gtest/gtest.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// A module with header `header` whose root is `op` on p0 = f32[8,4].
std::unique_ptr<HloModule> Module(const std::string& header, const std::string& shape,
                                  const std::string& op) {
  std::string text = "HloModule m" + header + "\n" + kAdd + "\nENTRY e {\n" +
                     "  p0 = f32[8,4] parameter(0)\n  ROOT r = " + shape + " " + op + "\n}\n";
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? *std::move(module) : nullptr;
}

Groups DeviceGroups(const std::string& header, const std::string& op, DeviceMesh mesh) {
  auto module = Module(header, "f32[8,4]", op);
  if (module == nullptr) return {};
  absl::StatusOr<Groups> groups = DeviceGroupsOf(*module->entry()->root(), mesh);
  EXPECT_TRUE(groups.ok()) << groups.status();
  return groups.ok() ? *groups : Groups{{-1}};
}

TEST(CollectiveGroupsTest, IotaForms) {
  xla::IotaReplicaGroupListProto iota;
  iota.set_num_replica_groups(2);
  iota.set_num_devices_per_group(2);
  iota.add_iota_reshape_dims(4);
  EXPECT_EQ(*ExpandIotaGroups(iota), (Groups{{0, 1}, {2, 3}}));
  iota.clear_iota_reshape_dims();
  iota.add_iota_reshape_dims(2);
  iota.add_iota_reshape_dims(2);
  iota.add_iota_transpose_perm(1);
  iota.add_iota_transpose_perm(0);
  EXPECT_EQ(*ExpandIotaGroups(iota), (Groups{{0, 2}, {1, 3}}));
  // [2,4]<=[2,2,2]T(2,1,0): ids with their bits reversed.
  xla::IotaReplicaGroupListProto three;
  three.set_num_replica_groups(2);
  three.set_num_devices_per_group(4);
  for (int d : {2, 2, 2}) three.add_iota_reshape_dims(d);
  for (int p : {2, 1, 0}) three.add_iota_transpose_perm(p);
  EXPECT_EQ(*ExpandIotaGroups(three), (Groups{{0, 4, 2, 6}, {1, 5, 3, 7}}));
  three.set_num_devices_per_group(3);
  EXPECT_FALSE(ExpandIotaGroups(three).ok());
}

// XLA's mesh form: devices that agree on the unlisted axes form a group,
// ranked by the listed axes in the order listed.
TEST(CollectiveGroupsTest, MeshAxesForms) {
  const DeviceMesh four{1, 4}, eight{1, 8};
  auto groups = [&](const std::string& list, DeviceMesh mesh) {
    std::string header = absl::StrCat(", num_partitions=", mesh.num_partitions);
    return DeviceGroups(header,
                        "all-reduce(p0), channel_id=1, replica_groups=" + list +
                            ", use_global_device_ids=true, to_apply=add",
                        mesh);
  };
  EXPECT_EQ(groups("mesh['x'=2,'y'=2] {'y'}", four), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(groups("mesh['x'=2,'y'=2] {'x'}", four), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(groups("mesh['x'=2,'y'=2] {'x','y'}", four), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(groups("mesh['x'=2,'y'=2] {'y','x'}", four), (Groups{{0, 2, 1, 3}}));
  EXPECT_EQ(groups("mesh['x'=2,'y'=2] {}", four), (Groups{{0}, {1}, {2}, {3}}));
  // The forms of JAX 0.10.2's partitioned dumps (size-1 axes included).
  EXPECT_EQ(groups("mesh['axis_0'=4,'axis_1'=1] {'axis_0'}", four), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(groups("mesh['axis_0'=1,'axis_1'=4] {'axis_1'}", four), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(groups("mesh['axis_0'=2,'axis_1'=1,'axis_2'=2] {'axis_0'}", four),
            (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(groups("mesh['axis_0'=2,'axis_1'=1,'axis_2'=1,'axis_3'=2] {'axis_0'}", four),
            (Groups{{0, 2}, {1, 3}}));
  // A device order: positions as above, then named through device_ids.
  EXPECT_EQ(groups("mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'a'}", four),
            (Groups{{3, 1}, {2, 0}}));
  // The iota device order (XLA's text and MeshProto.iota_transform): iota(8)
  // reshaped to [2,4] and transposed is the device list 0,4,1,5,2,6,3,7.
  EXPECT_EQ(groups("mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)) {'a'}", eight),
            (Groups{{0, 2}, {4, 6}, {1, 3}, {5, 7}}));
  EXPECT_EQ(groups("mesh['a'=2,'b'=2], device_ids=([2,2]T(1,0)) {'a'}", four),
            groups("mesh['a'=2,'b'=2], device_ids=(0,2,1,3) {'a'}", four));
  // Sub-axes: 'a':(p)k is the middle factor of a viewed as [p, k, n/(p*k)].
  EXPECT_EQ(groups("mesh['a'=4] {'a':(1)2}", four), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(groups("mesh['a'=4] {'a':(2)2}", four), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(groups("mesh['a'=8] {'a':(1)2,'a':(4)2}", eight),
            (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(groups("mesh['a'=8] {'a':(4)2,'a':(1)2}", eight),
            (Groups{{0, 4, 1, 5}, {2, 6, 3, 7}}));
  EXPECT_EQ(groups("mesh['x'=2,'a'=4] {'a':(2)2,'x'}", eight),
            (Groups{{0, 4, 1, 5}, {2, 6, 3, 7}}));
}

TEST(CollectiveGroupsTest, ModesFollowChannelAndGlobalIds) {
  const DeviceMesh mesh{2, 2};  // devices: r0p0=0 r0p1=1 r1p0=2 r1p1=3
  // No channel: replicas of one partition talk.
  EXPECT_EQ(DeviceGroups("", "all-reduce(p0), replica_groups={}, to_apply=add", mesh),
            (Groups{{0, 2}, {1, 3}}));
  // Channel, use_global_device_ids=false: the replicas of a group, every partition.
  EXPECT_EQ(DeviceGroups("", "all-reduce(p0), channel_id=1, replica_groups={{0},{1}}, "
                             "to_apply=add",
                         mesh),
            (Groups{{0, 1}, {2, 3}}));
  // Flattened ids, iota form.
  EXPECT_EQ(DeviceGroups("", "all-reduce(p0), channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0), "
                             "use_global_device_ids=true, to_apply=add",
                         mesh),
            (Groups{{0, 2}, {1, 3}}));
  // all-to-all has no use_global_device_ids: a channel means partitions.
  EXPECT_EQ(DeviceGroups("", "all-to-all(p0), channel_id=1, replica_groups={{1,0}}, "
                             "dimensions={0}",
                         mesh),
            (Groups{{1, 0}, {3, 2}}));
  auto module = Module("", "f32[8,4]", "all-reduce(p0), replica_groups={{0,1}}, to_apply=add");
  EXPECT_FALSE(DeviceGroupsOf(*module->entry()->root(), {3, 1}).ok());  // 2 not covered
  EXPECT_FALSE(DeviceGroupsOf(*module->entry()->root(), {1, 1}).ok());  // 1 out of range
}

TEST(CollectiveGroupsTest, PermutePairsPerReplica) {
  auto module = Module("", "f32[8,4]",
                       "collective-permute(p0), channel_id=1, source_target_pairs={{0,1},{1,0}}");
  auto pairs = DevicePairsOf(*module->entry()->root(), {2, 2});
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_EQ(*pairs, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}, {2, 3}, {3, 2}}));
}

// The verifier's device-groups rule, with the message naming the instruction.
std::string Verify(const std::string& header, const std::string& shape, const std::string& op) {
  auto module = Module(header, shape, op);
  if (module == nullptr) return "parse error";
  absl::Status status = VerifyModule(*module);
  return status.ok() ? "ok" : std::string(status.message());
}

TEST(CollectiveGroupsTest, VerifierRules) {
  EXPECT_EQ(Verify(", replica_count=4", "f32[8,4]",
                   "all-reduce(p0), replica_groups={{0,1},{2,3}}, to_apply=add"),
            "ok");
  EXPECT_EQ(Verify(", num_partitions=4", "f32[8,16]",
                   "all-gather(p0), channel_id=1, replica_groups=[1,4]<=[4], "
                   "use_global_device_ids=true, dimensions={1}"),
            "ok");
  const std::string range = Verify(", replica_count=2", "f32[8,4]",
                                   "all-reduce(p0), replica_groups={{0,1,2}}, to_apply=add");
  EXPECT_NE(range.find("%r"), std::string::npos) << range;
  EXPECT_NE(range.find("replica id 2"), std::string::npos) << range;
  const std::string twice = Verify(", replica_count=4", "f32[8,4]",
                                   "all-reduce(p0), replica_groups={{0,1},{1,2}}, to_apply=add");
  EXPECT_NE(twice.find("appears twice"), std::string::npos) << twice;
  const std::string cover = Verify(", replica_count=4", "f32[8,4]",
                                   "all-reduce(p0), replica_groups={{0,1}}, to_apply=add");
  EXPECT_NE(cover.find("every one must be in a group"), std::string::npos) << cover;
  const std::string gather = Verify(", replica_count=4", "f32[8,8]",
                                    "all-gather(p0), replica_groups={}, dimensions={1}");
  EXPECT_NE(gather.find("must be 8"), std::string::npos) << gather;
  const std::string scatter = Verify(", replica_count=4", "f32[4,4]",
                                     "reduce-scatter(p0), replica_groups={}, dimensions={0}, "
                                     "to_apply=add");
  EXPECT_NE(scatter.find("scattering"), std::string::npos) << scatter;
  const std::string a2a = Verify(", replica_count=3", "f32[8,4]",
                                 "all-to-all(p0), replica_groups={}, dimensions={0}");
  EXPECT_NE(a2a.find("not divisible by the group size 3"), std::string::npos) << a2a;
  const std::string sizes = Verify(", replica_count=3", "f32[8,4]",
                                   "all-to-all(p0), replica_groups={{0,1},{2}}, dimensions={1}");
  EXPECT_NE(sizes.find("different sizes"), std::string::npos) << sizes;
  const std::string permute =
      Verify(", replica_count=4", "f32[8,4]",
             "collective-permute(p0), source_target_pairs={{0,1},{2,1}}");
  EXPECT_NE(permute.find("receives twice"), std::string::npos) << permute;
  const std::string global = Verify(", replica_count=4", "f32[8,4]",
                                    "all-reduce(p0), replica_groups={}, "
                                    "use_global_device_ids=true, to_apply=add");
  EXPECT_NE(global.find("needs a channel_id"), std::string::npos) << global;
  // One-device header: groups are taken as written, but still disjoint.
  EXPECT_EQ(Verify("", "f32[8,4]", "all-reduce(p0), replica_groups={{0,1}}, to_apply=add"), "ok");
  EXPECT_NE(Verify("", "f32[8,4]", "all-reduce(p0), replica_groups={{0,1},{1}}, to_apply=add"),
            "ok");
}

TEST(CollectiveGroupsTest, MeshAxesMustCoverTheDevices) {
  const std::string more = Verify(", num_partitions=4", "f32[8,4]",
                                  "all-reduce(p0), channel_id=1, replica_groups=mesh['a'=2,'b'=4] "
                                  "{'a'}, use_global_device_ids=true, to_apply=add");
  EXPECT_NE(more.find("%r"), std::string::npos) << more;
  EXPECT_NE(more.find("is a mesh of 8 devices; the module has 4 devices"), std::string::npos)
      << more;
  const std::string fewer = Verify(", num_partitions=4", "f32[8,4]",
                                   "all-reduce(p0), channel_id=1, replica_groups=mesh['a'=2] "
                                   "{'a'}, use_global_device_ids=true, to_apply=add");
  EXPECT_NE(fewer.find("is a mesh of 2 devices"), std::string::npos) << fewer;
  // A bad mesh in the IR (a proto can hold one) is the verifier's error.
  auto module = Module(", num_partitions=4", "f32[8,4]",
                       "all-reduce(p0), channel_id=1, replica_groups=mesh['a'=4] {'a'}, "
                       "use_global_device_ids=true, to_apply=add");
  ASSERT_NE(module, nullptr);
  HloInstruction* root = module->entry()->root();
  xla::MeshAxesReplicaGroupListProto list = *root->attrs().mesh_replica_groups;
  list.mutable_axes(0)->set_mesh_axis_index(3);
  root->mutable_attrs()->mesh_replica_groups = list;
  absl::Status status = VerifyModule(*module);
  EXPECT_NE(status.message().find("axis index 3 is not one of the mesh's 1 axes"),
            std::string::npos)
      << status;
}

}  // namespace
}  // namespace hloc
