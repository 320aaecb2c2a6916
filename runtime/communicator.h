// Communicators: how the devices of one program exchange data. The runtime's
// collective thunks (collective_thunks.h) call one; which one is a choice of
// whoever runs the program:
//
//   SharedMemoryCommunicator   N devices as N threads of one process
//                              (shared_memory_communicator.h)
//   MpiCommunicator            one device per MPI process (runtime/mpi/)
//   SelfCommunicator           one device alone: every group is {0}
//
// Devices are named by their global id (0 .. size-1); a group lists the ids
// taking part, in rank order (the order all-gather concatenates in). Every
// member of a group calls the same operation with the same group, counts and
// key; `key` names the op instance (instruction name and how many times this
// device ran it) so that implementations that match calls by name (the
// shared-memory one) can tell instances apart. Implementations that match
// calls by order (MPI) ignore it.
//
// Reductions run in rank order (r0 op r1 op r2 ...), as the interpreter's do,
// so floating-point results agree with it bit for bit when the
// implementation allows (the shared-memory one does).
#ifndef HLOC_RUNTIME_COMMUNICATOR_H_
#define HLOC_RUNTIME_COMMUNICATOR_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace hloc {
namespace runtime {

// Element types a reduction understands (the runtime knows nothing of HLO's).
enum class ElementType {
  kPred, kS8, kS16, kS32, kS64, kU8, kU16, kU32, kU64, kF16, kBF16, kF32, kF64
};
enum class ReductionKind { kSum, kProduct, kMin, kMax, kAnd, kOr };

int ElementBytes(ElementType type);
absl::string_view ElementTypeName(ElementType type);
absl::string_view ReductionKindName(ReductionKind kind);
// kAnd / kOr need integers or pred; the rest take every type.
absl::Status CheckReduction(ElementType type, ReductionKind kind);
// accumulator[i] = accumulator[i] op value[i] for i < count. f16 and bf16
// compute in f32 and round to nearest even after every step, as the
// interpreter's elementwise ops do.
void ReduceInto(ElementType type, ReductionKind kind, void* accumulator, const void* value,
                int64_t count);

struct CollectiveKey {
  std::string name;      // The instruction ("%all-reduce.3").
  int64_t sequence = 0;  // How many times this device has run it before.
};

using DeviceGroup = absl::Span<const int64_t>;

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int64_t rank() const = 0;  // This device's global id.
  virtual int64_t size() const = 0;  // How many devices.

  // output = input_0 op input_1 op ... over the group; `count` elements.
  // input == output is allowed.
  virtual absl::Status AllReduce(const CollectiveKey& key, DeviceGroup group, ElementType type,
                                 ReductionKind kind, const void* input, void* output,
                                 int64_t count) = 0;
  // output holds group.size() blocks of `bytes`: member i's input in block i.
  virtual absl::Status AllGather(const CollectiveKey& key, DeviceGroup group, const void* input,
                                 void* output, int64_t bytes) = 0;
  // input holds group.size() blocks of `count` elements; the member of rank
  // i gets block i reduced over the group.
  virtual absl::Status ReduceScatter(const CollectiveKey& key, DeviceGroup group,
                                     ElementType type, ReductionKind kind, const void* input,
                                     void* output, int64_t count) = 0;
  // input and output hold group.size() blocks of `bytes`: block j of the
  // input goes to the member of rank j, block i of the output came from the
  // member of rank i.
  virtual absl::Status AllToAll(const CollectiveKey& key, DeviceGroup group, const void* input,
                                void* output, int64_t bytes) = 0;
  // Each (source, target) pair sends source's input to target's output.
  // Every device named in `pairs` calls this with the same pairs; a device
  // that is no target gets zeros. Devices not in `pairs` need not call.
  virtual absl::Status CollectivePermute(const CollectiveKey& key,
                                         absl::Span<const std::pair<int64_t, int64_t>> pairs,
                                         const void* input, void* output, int64_t bytes) = 0;
  // output = the input of the group's member of rank `root`.
  virtual absl::Status Broadcast(const CollectiveKey& key, DeviceGroup group, int64_t root,
                                 const void* input, void* output, int64_t bytes) = 0;
};

// The only device: every group must be {0}; the ops copy their input.
class SelfCommunicator : public Communicator {
 public:
  int64_t rank() const override { return 0; }
  int64_t size() const override { return 1; }
  absl::Status AllReduce(const CollectiveKey& key, DeviceGroup group, ElementType type,
                         ReductionKind kind, const void* input, void* output,
                         int64_t count) override;
  absl::Status AllGather(const CollectiveKey& key, DeviceGroup group, const void* input,
                         void* output, int64_t bytes) override;
  absl::Status ReduceScatter(const CollectiveKey& key, DeviceGroup group, ElementType type,
                             ReductionKind kind, const void* input, void* output,
                             int64_t count) override;
  absl::Status AllToAll(const CollectiveKey& key, DeviceGroup group, const void* input,
                        void* output, int64_t bytes) override;
  absl::Status CollectivePermute(const CollectiveKey& key,
                                 absl::Span<const std::pair<int64_t, int64_t>> pairs,
                                 const void* input, void* output, int64_t bytes) override;
  absl::Status Broadcast(const CollectiveKey& key, DeviceGroup group, int64_t root,
                         const void* input, void* output, int64_t bytes) override;
};

// Checks that `group` is non-empty, names devices below `size` once each
// and contains `rank`; returns rank's index in it. Errors name `key`.
absl::Status CheckGroup(const CollectiveKey& key, DeviceGroup group, int64_t rank, int64_t size,
                        int64_t* index);

}  // namespace runtime
}  // namespace hloc

#endif  // HLOC_RUNTIME_COMMUNICATOR_H_
