// The program builder's buffer table (see buffer_table.h).
#include "backend/common/buffer_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/common/literal_leaves.h"
#include "backend/llvm/array_leaves.h"

namespace hloc {
namespace backend {

using runtime::BufferSpec;

BufferId BufferTable::Add(BufferSpec spec) {
  buffers_.push_back(std::move(spec));
  return static_cast<BufferId>(buffers_.size() - 1);
}

BufferId BufferTable::NewTemp(int64_t bytes, std::string name) {
  BufferSpec spec;
  spec.kind = BufferSpec::Kind::kTemp;
  spec.size = bytes;
  spec.live = {spec.size, step_, step_};
  spec.name = std::move(name);
  return Add(std::move(spec));
}

std::vector<BufferId> BufferTable::NewTemps(const HloInstruction& hlo) {
  std::vector<BufferId> ids;
  for (const ArrayLeaf& leaf : ArrayLeaves(hlo.shape())) {
    std::string name = absl::StrCat("%", hlo.name());
    if (!leaf.index.empty()) absl::StrAppend(&name, "{", absl::StrJoin(leaf.index, ","), "}");
    ids.push_back(NewTemp(LeafBytes(*leaf.shape), std::move(name)));
  }
  return ids;
}

std::vector<BufferId> BufferTable::NewConstants(const HloInstruction& constant) {
  std::vector<const Literal*> literal_leaves;
  CollectLiteralLeaves(constant.literal(), &literal_leaves);
  std::vector<BufferId> ids;
  for (const Literal* leaf : literal_leaves) {
    BufferSpec spec;
    spec.kind = BufferSpec::Kind::kConstant;
    spec.size = leaf->size_bytes();
    spec.data.assign(leaf->raw(), leaf->raw() + leaf->size_bytes());
    spec.name = absl::StrCat("%", constant.name());
    ids.push_back(Add(std::move(spec)));
  }
  return ids;
}

void BufferTable::Use(BufferId id) {
  KeepLive(id);
  sharing_.Read(id, step_);
}

void BufferTable::KeepLive(BufferId id) {
  BufferSpec& b = buffers_[id];
  if (b.kind == BufferSpec::Kind::kTemp) b.live.last_use = std::max(b.live.last_use, step_);
}

void BufferTable::Bind(const HloInstruction* hlo, std::vector<BufferId> leaves) {
  leaves_[hlo] = std::move(leaves);
}

std::vector<BufferId> BufferTable::OperandLeaves(const HloInstruction& hlo) const {
  std::vector<BufferId> ids;
  for (const HloInstruction* operand : hlo.operands()) {
    const std::vector<BufferId>& leaves = leaves_.at(operand);
    ids.insert(ids.end(), leaves.begin(), leaves.end());
  }
  return ids;
}

std::vector<BufferId> BufferTable::UseOperands(const HloInstruction& hlo) {
  std::vector<BufferId> ids = OperandLeaves(hlo);
  for (BufferId id : ids) Use(id);
  return ids;
}

}  // namespace backend
}  // namespace hloc
