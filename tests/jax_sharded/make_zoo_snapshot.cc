// make_zoo_snapshot NAME OUT.pb: an HloSnapshot of a sharded zoo model's
// NAME.sdy.hlo (global shapes) with JAX's global inputs as its arguments and
// JAX's global outputs as its result, so that `hloc run OUT.pb --devices=4`
// and `hloc compare` check the command line against JAX (tools/hloc_cli_test.sh).
#include <cstdio>
#include <fstream>

#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "tests/jax_sharded/sharded_zoo.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_zoo_snapshot NAME OUT.pb\n");
    return 2;
  }
  absl::StatusOr<hloc::ShardedZooModel> model = hloc::ReadShardedZooModel(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<hloc::HloModule>> module = hloc::ParseHloModule(model->sdy_text);
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", module.status().ToString().c_str());
    return 1;
  }
  hloc::LoadedSnapshot snapshot;
  const bool tuple = (*module)->entry()->root()->shape().IsTuple();
  snapshot.module = *std::move(module);
  snapshot.arguments = model->global_inputs;
  snapshot.result = tuple ? hloc::Literal::Tuple(model->global_outputs) : model->global_outputs[0];
  snapshot.execution_platform = "jax-0.10.2-cpu-4-devices";
  absl::StatusOr<xla::HloSnapshot> proto = hloc::SnapshotToProto(snapshot);
  std::ofstream out(argv[2], std::ios::binary);
  if (!proto.ok() || !out || !proto->SerializeToOstream(&out)) {
    std::fprintf(stderr, "cannot write %s: %s\n", argv[2], proto.status().ToString().c_str());
    return 1;
  }
  return 0;
}
