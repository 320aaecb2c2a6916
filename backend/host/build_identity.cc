#include "backend/host/build_identity.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace host {
namespace {

struct Search {
  uintptr_t address = 0;  // Some code of this object file.
  std::string build_id;   // Hex; empty when the object has none.
  bool found = false;     // The object holding `address` was seen.
};

// The NT_GNU_BUILD_ID note in a PT_NOTE segment, as hex, or "".
std::string BuildIdInNotes(const char* begin, size_t size) {
  const char* p = begin;
  const char* end = begin + size;
  auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
  while (end - p >= static_cast<ptrdiff_t>(sizeof(ElfW(Nhdr)))) {
    ElfW(Nhdr) note;
    std::memcpy(&note, p, sizeof(note));
    const char* name = p + sizeof(note);
    const char* desc = name + align4(note.n_namesz);
    const char* next = desc + align4(note.n_descsz);
    if (next > end || next <= p) break;
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string hex;
      for (size_t i = 0; i < note.n_descsz; ++i) {
        const auto byte = static_cast<unsigned char>(desc[i]);
        hex.push_back(kHex[byte >> 4]);
        hex.push_back(kHex[byte & 15]);
      }
      return hex;
    }
    p = next;
  }
  return "";
}

int VisitObject(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds_address = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (search->address >= start && search->address < start + segment.p_memsz) {
      holds_address = true;
    }
  }
  if (!holds_address) return 0;
  search->found = true;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    search->build_id = BuildIdInNotes(
        reinterpret_cast<const char*>(info->dlpi_addr + segment.p_vaddr), segment.p_memsz);
    if (!search->build_id.empty()) break;
  }
  return 1;  // Stop: this is the object.
}

std::string ComputeIdentity() {
  Search search;
  search.address = reinterpret_cast<uintptr_t>(&EmitterBuildIdentity);
  dl_iterate_phdr(&VisitObject, &search);
  if (!search.build_id.empty()) return absl::StrCat("build-id:", search.build_id);
  // No note (a linker told not to write one): the file itself.
  Dl_info dl;
  if (dladdr(reinterpret_cast<void*>(search.address), &dl) != 0 && dl.dli_fname != nullptr) {
    struct stat st;
    if (stat(dl.dli_fname, &st) == 0) {
      return absl::StrCat("file:", dl.dli_fname, ":", static_cast<int64_t>(st.st_size), ":",
                          static_cast<int64_t>(st.st_mtime));
    }
  }
  // Nothing identifies this build: a key no other process can produce, so
  // nothing written by another build is ever loaded.
  return absl::StrCat("unidentified:", static_cast<int64_t>(getpid()), ":",
                      static_cast<int64_t>(time(nullptr)));
}

}  // namespace

const std::string& EmitterBuildIdentity() {
  static const std::string* const identity = new std::string(ComputeIdentity());
  return *identity;
}

}  // namespace host
}  // namespace hloc
