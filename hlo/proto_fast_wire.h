// A strict reader of protobuf's wire format for the fast proto readers
// (proto_fast_reader.cc, proto_fast_instruction.cc). Not a public API.
//
// Strict means: whatever this reader accepts, protobuf's own parser accepts
// and reads the same way. It refuses more than protobuf does (groups,
// over-long varints, non-ASCII strings), and every refusal sends the caller
// back to protobuf's parser, which has the final word. So callers never need
// to reproduce protobuf's error behavior, only its successful reads.
#ifndef HLOC_HLO_PROTO_FAST_WIRE_H_
#define HLOC_HLO_PROTO_FAST_WIRE_H_

#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"

namespace hloc {
namespace proto_fast_internal {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5,
};

class WireReader {
 public:
  explicit WireReader(absl::string_view bytes)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}

  bool done() const { return p_ == end_; }
  const char* position() const { return reinterpret_cast<const char*>(p_); }

  // Each Read* leaves the position unchanged when it fails.
  bool ReadVarint(uint64_t* value) {
    if (p_ < end_ && *p_ < 0x80) {
      *value = *p_++;
      return true;
    }
    const uint8_t* p = p_;
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end_) return false;
      const uint8_t byte = *p++;
      // The tenth byte may only hold the top bit of a 64-bit value.
      if (shift == 63 && byte > 1) return false;
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) {
        *value = result;
        p_ = p;
        return true;
      }
    }
    return false;
  }

  // A field's number and wire type. Refuses field number 0, tags beyond 32
  // bits and the group wire types.
  bool ReadTag(uint32_t* field, uint32_t* wire_type) {
    const uint8_t* start = p_;
    uint64_t tag;
    if (!ReadVarint(&tag)) return false;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    if (tag > 0xffffffffu || *field == 0 ||
        !(*wire_type == kVarint || *wire_type == kFixed64 || *wire_type == kLengthDelimited ||
          *wire_type == kFixed32)) {
      p_ = start;
      return false;
    }
    return true;
  }

  bool ReadLengthDelimited(absl::string_view* payload) {
    const uint8_t* start = p_;
    uint64_t length;
    if (!ReadVarint(&length)) return false;
    if (length > static_cast<uint64_t>(end_ - p_)) {
      p_ = start;
      return false;
    }
    *payload = absl::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(length));
    p_ += length;
    return true;
  }

  bool ReadFixed32(uint32_t* value) {
    if (end_ - p_ < 4) return false;
    std::memcpy(value, p_, 4);  // Little-endian hosts only (x86-64, aarch64).
    p_ += 4;
    return true;
  }

  bool ReadFixed64(uint64_t* value) {
    if (end_ - p_ < 8) return false;
    std::memcpy(value, p_, 8);
    p_ += 8;
    return true;
  }

  // Skips a field's value (the tag already read); checks it is well formed.
  bool Skip(uint32_t wire_type) {
    uint64_t unused;
    absl::string_view payload;
    switch (wire_type) {
      case kVarint: return ReadVarint(&unused);
      case kFixed64: return ReadFixed64(&unused);
      case kLengthDelimited: return ReadLengthDelimited(&payload);
      case kFixed32: {
        uint32_t unused32;
        return ReadFixed32(&unused32);
      }
      default: return false;
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Proto3 `string` fields must hold UTF-8 or protobuf refuses the message;
// the fast readers take plain ASCII and leave anything else to protobuf.
inline bool IsAscii(absl::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Calls `each(value)` for every varint of a packed repeated field's payload;
// false when the payload is malformed.
template <typename Each>
bool ForEachPackedVarint(absl::string_view payload, Each each) {
  WireReader reader(payload);
  while (!reader.done()) {
    uint64_t value;
    if (!reader.ReadVarint(&value)) return false;
    each(value);
  }
  return true;
}

}  // namespace proto_fast_internal
}  // namespace hloc

#endif  // HLOC_HLO_PROTO_FAST_WIRE_H_
