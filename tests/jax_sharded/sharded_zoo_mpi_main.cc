// One MPI rank of the sharded zoo: run under `mpirun -np 4`, each process
// compiles the model's per-device module for the host with an
// MpiCommunicator, runs its own device on JAX's inputs for that device, and
// compares its outputs with JAX's. Exit status 0 only when every output of
// this device matches; rank 0 prints one line per model for the whole job.
//
//   mpirun -np 4 sharded_zoo_mpi_main MODEL...
#include <cstdio>
#include <string>
#include <vector>

#include "backend/host/host_compiler.h"
#include "hlo/text_parser.h"
#include "runtime/mpi/mpi_communicator.h"
#include "tests/jax_sharded/sharded_zoo.h"

namespace hloc {
namespace {

// This device's mismatches for `name` (0: all match); errors are printed.
int RunModel(const std::string& name, const std::shared_ptr<runtime::MpiSession>& session,
             const std::shared_ptr<runtime::Communicator>& communicator) {
  const int64_t rank = session->rank();
  absl::StatusOr<ShardedZooModel> model = ReadShardedZooModel(name);
  if (!model.ok()) {
    std::fprintf(stderr, "rank %lld %s: %s\n", static_cast<long long>(rank), name.c_str(),
                 std::string(model.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(model->partitioned_text);
  if (!module.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), std::string(module.status().message()).c_str());
    return 1;
  }
  const int64_t devices = (*module)->config().replica_count * (*module)->config().num_partitions;
  if (devices != session->size()) {
    std::fprintf(stderr, "%s runs on %lld devices, the MPI job has %lld ranks\n", name.c_str(),
                 static_cast<long long>(devices), static_cast<long long>(session->size()));
    return 1;
  }
  host::HostCompileOptions options;
  options.communicator = communicator;
  absl::StatusOr<std::unique_ptr<host::HostProgram>> program =
      host::CompileForHost(**module, options);
  if (!program.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), std::string(program.status().message()).c_str());
    return 1;
  }
  if ((*program)->report().interpreter_calls != 0) {
    std::fprintf(stderr, "%s: %lld interpreter ops\n", name.c_str(),
                 static_cast<long long>((*program)->report().interpreter_calls));
    return 1;
  }
  absl::StatusOr<Literal> result =
      (*program)->Execute(model->device_inputs[rank], /*pool=*/nullptr, {});
  if (!result.ok()) {
    std::fprintf(stderr, "rank %lld %s: %s\n", static_cast<long long>(rank), name.c_str(),
                 std::string(result.status().message()).c_str());
    return 1;
  }
  const std::string mismatches = DeviceOutputMismatches(*model, rank, *result);
  if (!mismatches.empty()) {
    std::fprintf(stderr, "rank %lld %s:\n%s", static_cast<long long>(rank), name.c_str(),
                 mismatches.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace hloc

int main(int argc, char** argv) {
  absl::StatusOr<std::shared_ptr<hloc::runtime::MpiSession>> session =
      hloc::runtime::MpiSession::Initialize(&argc, &argv);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", std::string(session.status().message()).c_str());
    return 2;
  }
  auto communicator = std::make_shared<hloc::runtime::MpiCommunicator>(*session);
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    const int mine = hloc::RunModel(argv[i], *session, communicator);
    // Every rank's count, so rank 0 reports for the whole job.
    std::vector<int> all((*session)->size());
    if (!(*session)->GatherBytes(&mine, all.data(), sizeof(int)).ok()) return 2;
    int total = 0;
    for (int v : all) total += v;
    if ((*session)->rank() == 0) {
      std::printf("%s: %s on %lld MPI ranks\n", argv[i],
                  total == 0 ? "matches JAX" : "MISMATCH", static_cast<long long>(all.size()));
    }
    failed += mine;
  }
  communicator.reset();
  return failed == 0 ? 0 : 1;
}
