// Communicators of a clique (see nccl_clique.h).
#include "runtime/cuda/nccl_clique.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace cuda {

absl::StatusOr<std::shared_ptr<NcclClique>> NcclClique::Create(std::vector<int> ordinals) {
  if (ordinals.empty()) return absl::InvalidArgumentError("an NCCL clique of no devices");
  absl::StatusOr<const NcclLibrary*> nccl = NcclLibrary::Get();
  if (!nccl.ok()) return nccl.status();
  return CreateWith(*nccl, std::move(ordinals));
}

absl::StatusOr<std::shared_ptr<NcclClique>> NcclClique::CreateWith(const NcclLibrary* nccl,
                                                                   std::vector<int> ordinals) {
  if (ordinals.empty()) return absl::InvalidArgumentError("an NCCL clique of no devices");
  return std::shared_ptr<NcclClique>(new NcclClique(nccl, std::move(ordinals)));
}

void NcclClique::Abort(const absl::Status& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!aborted_.ok()) return;
  aborted_ = reason.ok() ? absl::AbortedError("NCCL communicators aborted") : reason;
  for (auto& [group, comms] : comms_) {
    for (ncclComm_t& comm : comms) {
      // An aborted communicator is freed by the abort: never destroyed.
      if (comm != nullptr) nccl_->ncclCommAbort(comm);
      comm = nullptr;
    }
  }
}

absl::Status NcclClique::aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

NcclClique::~NcclClique() {
  for (auto& [group, comms] : comms_) {
    for (ncclComm_t comm : comms) {
      if (comm != nullptr) nccl_->ncclCommDestroy(comm);
    }
  }
}

absl::StatusOr<ncclComm_t> NcclClique::Communicator(absl::Span<const int64_t> group,
                                                    int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(group.size())) {
    return absl::InvalidArgumentError(absl::StrCat("member ", index, " of a group of ",
                                                   group.size()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!aborted_.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the NCCL communicators were aborted: ", aborted_.message()));
  }
  std::vector<int64_t> key(group.begin(), group.end());
  auto it = comms_.find(key);
  if (it == comms_.end()) {
    std::vector<int> devices;
    for (int64_t d : group) {
      if (d < 0 || d >= size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "device group {", absl::StrJoin(group, ","), "} names a device outside the ",
            size(), " devices of the program"));
      }
      devices.push_back(ordinals_[d]);
    }
    std::vector<ncclComm_t> comms(group.size(), nullptr);
    if (absl::Status s = nccl_->Check(
            nccl_->ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), devices.data()),
            absl::StrCat("ncclCommInitAll on GPUs {", absl::StrJoin(devices, ","), "}"));
        !s.ok()) {
      return s;
    }
    it = comms_.emplace(std::move(key), std::move(comms)).first;
  }
  return it->second[index];
}

}  // namespace cuda
}  // namespace hloc
