// Mutators of HLO text and HloModuleProto (see mutators.h).
#include "tests/mutation/mutators.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/opcode.h"

namespace hloc::mutation {
namespace {

using Rng = std::mt19937_64;

size_t Below(Rng& rng, size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); }

// Replacement numbers: edge values more often than random ones.
std::string SomeNumber(Rng& rng) {
  static const char* const kEdges[] = {"0",  "1",          "-1",         "2",
                                       "3",  "7",          "64",         "255",
                                       "-7", "4294967296", "2147483647", "9223372036854775807",
                                       "99999999999999999999"};
  if (rng() % 4 == 0) return std::to_string(Below(rng, 40));
  return kEdges[Below(rng, sizeof(kEdges) / sizeof(kEdges[0]))];
}

const char* SomeElementType(Rng& rng) {
  static const char* const kTypes[] = {"f32", "s32", "pred", "f16", "bf16", "u8", "s64",
                                       "f64", "c64", "s4",   "f8e4m3fn", "token", "u32"};
  return kTypes[Below(rng, sizeof(kTypes) / sizeof(kTypes[0]))];
}

absl::string_view SomeOpcode(Rng& rng) {
  return HloOpcodeName(static_cast<HloOpcode>(Below(rng, kHloOpcodeCount)));
}

// [begin, end) of every maximal run of characters satisfying `pred`.
template <typename Pred>
std::vector<std::pair<size_t, size_t>> Runs(const std::string& text, Pred pred) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < text.size();) {
    if (!pred(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && pred(static_cast<unsigned char>(text[j]))) ++j;
    runs.push_back({i, j});
    i = j;
  }
  return runs;
}

bool IsWordChar(unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; }

Mutant ReplaceRun(const std::string& text, std::pair<size_t, size_t> run, const std::string& with,
                  absl::string_view kind) {
  Mutant m;
  m.bytes = text.substr(0, run.first) + with + text.substr(run.second);
  m.how = absl::StrCat(kind, " at ", run.first, ": '",
                       text.substr(run.first, std::min<size_t>(run.second - run.first, 40)),
                       "' -> '", with.substr(0, 40), "'");
  return m;
}

std::vector<std::pair<size_t, size_t>> Lines(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> lines;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      lines.push_back({start, std::min(i + 1, text.size())});
      start = i + 1;
    }
  }
  return lines;
}

// Numbers that stand alone (attribute values, dimensions, literals), not
// digits inside names such as add.3.
std::vector<std::pair<size_t, size_t>> StandaloneNumbers(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> numbers;
  for (auto run : Runs(text, [](unsigned char c) { return std::isdigit(c) != 0; })) {
    const unsigned char before = run.first > 0 ? text[run.first - 1] : ' ';
    const unsigned char after = run.second < text.size() ? text[run.second] : ' ';
    if (std::isalpha(before) || before == '.' || before == '_' || std::isalpha(after) ||
        after == '_') {
      continue;
    }
    numbers.push_back(run);
  }
  return numbers;
}

// Defined instruction names ("  ROOT x.1 = ...", "  x.1 = ...") and the
// computations' names ("name {" / "ENTRY name {" lines).
void Names(const std::string& text, std::vector<std::string>* instructions,
           std::vector<std::string>* computations) {
  for (auto line : Lines(text)) {
    std::string l = text.substr(line.first, line.second - line.first);
    const size_t eq = l.find(" = ");
    size_t begin = l.find_first_not_of(' ');
    if (begin == std::string::npos) continue;
    if (l.compare(begin, 5, "ROOT ") == 0) begin += 5;
    if (eq != std::string::npos && eq > begin && l.find(' ', begin) == eq) {
      instructions->push_back(l.substr(begin, eq - begin));
    } else if (l.size() > 2 && l.find('{') != std::string::npos && l.find('=') == std::string::npos) {
      if (l.compare(begin, 6, "ENTRY ") == 0) begin += 6;
      const size_t end = l.find_first_of(" {", begin);
      if (end != std::string::npos && end > begin) computations->push_back(l.substr(begin, end - begin));
    }
  }
}

// An operand or a callee replaced by another defined name: parses, then
// tests the verifier (and everything behind it) on mismatched shapes.
Mutant RewireName(const std::string& text, Rng& rng) {
  std::vector<std::string> instructions, computations;
  Names(text, &instructions, &computations);
  const bool callee = rng() % 3 == 0 && computations.size() >= 2;
  const std::vector<std::string>& pool = callee ? computations : instructions;
  if (pool.size() < 2) return {text, "rewire: too few names"};
  const std::string from = pool[Below(rng, pool.size())];
  const std::string to = pool[Below(rng, pool.size())];
  // A use of `from`: after '(' / ", " for operands, after '=' for callees.
  std::vector<size_t> uses;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
    const char before = at > 0 ? text[at - 1] : ' ';
    const char after = at + from.size() < text.size() ? text[at + from.size()] : ' ';
    if (IsWordChar(static_cast<unsigned char>(after))) continue;
    if (callee ? before == '=' || before == '{' : before == '(' || before == ' ') {
      if (!callee && before == ' ' && (at < 2 || text[at - 2] != ',')) continue;
      uses.push_back(at);
    }
  }
  if (uses.empty()) return {text, "rewire: no use"};
  const size_t at = uses[Below(rng, uses.size())];
  return ReplaceRun(text, {at, at + from.size()}, to, callee ? "callee" : "operand");
}

Mutant MutateTextOnce(const std::string& text, Rng& rng) {
  Mutant m;
  if (text.empty()) return {"x", "empty input"};
  switch (rng() % 12) {
    case 9:
    case 10:
      return RewireName(text, rng);
    case 11: {  // a standalone number (attribute, dimension, literal) edited
      auto numbers = StandaloneNumbers(text);
      if (numbers.empty()) break;
      return ReplaceRun(text, numbers[Below(rng, numbers.size())], SomeNumber(rng),
                        "value-edit");
    }
    case 0: {  // byte flips
      m.bytes = text;
      const int flips = 1 + static_cast<int>(Below(rng, 3));
      m.how = "byte-flip";
      for (int k = 0; k < flips; ++k) {
        const size_t at = Below(rng, m.bytes.size());
        const char c = rng() % 2 ? static_cast<char>(32 + Below(rng, 95))
                                 : static_cast<char>(Below(rng, 256));
        absl::StrAppend(&m.how, " ", at);
        m.bytes[at] = c;
      }
      return m;
    }
    case 1: {  // token swap
      auto words = Runs(text, IsWordChar);
      if (words.size() < 2) break;
      auto a = words[Below(rng, words.size())], b = words[Below(rng, words.size())];
      if (a.first > b.first) std::swap(a, b);
      if (a == b) break;
      m.bytes = text.substr(0, a.first) + text.substr(b.first, b.second - b.first) +
                text.substr(a.second, b.first - a.second) +
                text.substr(a.first, a.second - a.first) + text.substr(b.second);
      m.how = absl::StrCat("token-swap ", a.first, " <-> ", b.first);
      return m;
    }
    case 2: {  // truncation
      const size_t at = Below(rng, text.size());
      return {text.substr(0, at), absl::StrCat("truncate at ", at)};
    }
    case 3: {  // delete or duplicate a line
      auto lines = Lines(text);
      auto line = lines[Below(rng, lines.size())];
      const std::string body = text.substr(line.first, line.second - line.first);
      if (rng() % 2) {
        return ReplaceRun(text, line, "", "delete-line");
      }
      return ReplaceRun(text, {line.second, line.second}, body, "duplicate-line");
    }
    case 4:
    case 5: {  // number edit
      auto numbers = StandaloneNumbers(text);
      if (numbers.empty()) break;
      return ReplaceRun(text, numbers[Below(rng, numbers.size())], SomeNumber(rng), "number-edit");
    }
    case 6: {  // shape edit: the dimension list after an element type
      std::vector<std::pair<size_t, size_t>> dims;  // inside [ ]
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '[' || i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))) {
          continue;
        }
        const size_t close = text.find(']', i);
        if (close == std::string::npos || close - i > 64) continue;
        dims.push_back({i + 1, close});
      }
      if (dims.empty()) break;
      auto run = dims[Below(rng, dims.size())];
      std::string inner = text.substr(run.first, run.second - run.first);
      switch (rng() % 3) {
        case 0: inner = inner.empty() ? SomeNumber(rng) : absl::StrCat(inner, ",", SomeNumber(rng)); break;
        case 1: inner = inner.substr(0, inner.rfind(',') == std::string::npos ? 0 : inner.rfind(',')); break;
        default: inner = SomeNumber(rng); break;
      }
      return ReplaceRun(text, run, inner, "shape-dims");
    }
    case 7: {  // element type swap
      auto words = Runs(text, IsWordChar);
      std::vector<std::pair<size_t, size_t>> types;
      for (auto w : words) {
        if (w.second < text.size() && text[w.second] == '[') types.push_back(w);
      }
      if (types.empty()) break;
      return ReplaceRun(text, types[Below(rng, types.size())], SomeElementType(rng), "element-type");
    }
    default: {  // opcode swap: a word directly before '('
      auto words = Runs(text, IsWordChar);
      std::vector<std::pair<size_t, size_t>> calls;
      for (auto w : words) {
        if (w.second < text.size() && text[w.second] == '(') calls.push_back(w);
      }
      if (calls.empty()) break;
      return ReplaceRun(text, calls[Below(rng, calls.size())], std::string(SomeOpcode(rng)),
                        "opcode");
    }
  }
  const size_t at = Below(rng, text.size());
  return {text.substr(0, at), absl::StrCat("truncate at ", at)};
}

// ---- protos

xla::HloInstructionProto* SomeInstruction(xla::HloModuleProto& proto, Rng& rng) {
  if (proto.computations_size() == 0) return nullptr;
  auto* computation = proto.mutable_computations(static_cast<int>(Below(rng, proto.computations_size())));
  if (computation->instructions_size() == 0) return nullptr;
  return computation->mutable_instructions(
      static_cast<int>(Below(rng, computation->instructions_size())));
}

int64_t SomeId(const xla::HloModuleProto& proto, Rng& rng) {
  if (rng() % 4 == 0) return static_cast<int64_t>(rng() % 5) - 1;  // -1..3: bogus or early ids
  const auto& computation = proto.computations(static_cast<int>(Below(rng, proto.computations_size())));
  if (computation.instructions_size() == 0) return computation.id();
  return computation.instructions(static_cast<int>(Below(rng, computation.instructions_size()))).id();
}

int64_t SomeInt(Rng& rng) {
  static const int64_t kValues[] = {0, 1, -1, 2, 3, 5, 1 << 20, INT64_MAX, INT64_MIN, 4294967296};
  if (rng() % 3 == 0) return static_cast<int64_t>(Below(rng, 8));
  return kValues[Below(rng, sizeof(kValues) / sizeof(kValues[0]))];
}

void MutateShape(xla::ShapeProto* shape, Rng& rng) {
  switch (rng() % 5) {
    case 0: shape->add_dimensions(SomeInt(rng) % 9); break;
    case 1:
      if (shape->dimensions_size() > 0) shape->mutable_dimensions()->RemoveLast();
      break;
    case 2:
      if (shape->dimensions_size() > 0) {
        shape->set_dimensions(static_cast<int>(Below(rng, shape->dimensions_size())), SomeInt(rng));
      }
      break;
    case 3: shape->set_element_type(static_cast<xla::PrimitiveType>(Below(rng, 34))); break;
    default:
      if (shape->has_layout()) {
        shape->mutable_layout()->add_minor_to_major(SomeInt(rng) % 4);
      } else {
        shape->add_tuple_shapes()->set_element_type(xla::F32);
      }
      break;
  }
}

Mutant MutateProtoStructure(xla::HloModuleProto proto, Rng& rng) {
  Mutant m;
  xla::HloInstructionProto* instruction = SomeInstruction(proto, rng);
  if (instruction == nullptr) return {proto.SerializeAsString(), "no instruction"};
  const std::string name = instruction->name();
  switch (rng() % 12) {
    case 0:
      instruction->set_opcode(std::string(SomeOpcode(rng)));
      m.how = absl::StrCat("opcode of ", name, " -> ", instruction->opcode());
      break;
    case 1:
    case 2:
      MutateShape(instruction->mutable_shape(), rng);
      m.how = absl::StrCat("shape of ", name);
      break;
    case 3:
      if (instruction->operand_ids_size() > 0 && rng() % 3) {
        instruction->set_operand_ids(static_cast<int>(Below(rng, instruction->operand_ids_size())),
                                     SomeId(proto, rng));
      } else if (rng() % 2) {
        instruction->add_operand_ids(SomeId(proto, rng));
      } else {
        instruction->clear_operand_ids();
      }
      m.how = absl::StrCat("operands of ", name);
      break;
    case 4:
      if (instruction->dimensions_size() > 0 && rng() % 2) {
        instruction->set_dimensions(static_cast<int>(Below(rng, instruction->dimensions_size())),
                                    SomeInt(rng));
      } else {
        instruction->add_dimensions(SomeInt(rng) % 5);
      }
      m.how = absl::StrCat("dimensions of ", name);
      break;
    case 5:
      instruction->set_tuple_index(SomeInt(rng));
      instruction->set_parameter_number(SomeInt(rng) % 4);
      m.how = absl::StrCat("tuple_index/parameter_number of ", name);
      break;
    case 6: {
      const auto& computation = proto.computations(static_cast<int>(Below(rng, proto.computations_size())));
      if (instruction->called_computation_ids_size() > 0 && rng() % 2) {
        instruction->set_called_computation_ids(
            static_cast<int>(Below(rng, instruction->called_computation_ids_size())), computation.id());
      } else {
        instruction->add_called_computation_ids(rng() % 3 ? computation.id() : SomeInt(rng));
      }
      m.how = absl::StrCat("callees of ", name);
      break;
    }
    case 7:
      if (instruction->has_literal()) {
        xla::LiteralProto* literal = instruction->mutable_literal();
        if (literal->f32s_size() > 0) literal->mutable_f32s()->RemoveLast();
        else if (literal->s32s_size() > 0) literal->add_s32s(7);
        else MutateShape(literal->mutable_shape(), rng);
      } else {
        instruction->add_slice_dimensions()->set_limit(SomeInt(rng));
      }
      m.how = absl::StrCat("literal/slice of ", name);
      break;
    case 8: {
      auto* computation = proto.mutable_computations(static_cast<int>(Below(rng, proto.computations_size())));
      if (rng() % 2) {
        computation->set_root_id(SomeId(proto, rng));
      } else if (computation->instructions_size() > 0) {
        computation->mutable_instructions()->DeleteSubrange(
            static_cast<int>(Below(rng, computation->instructions_size())), 1);
      }
      m.how = absl::StrCat("root/instructions of ", computation->name());
      break;
    }
    case 9:
      if (rng() % 2) {
        proto.set_entry_computation_id(SomeId(proto, rng));
      } else {
        MutateShape(proto.mutable_host_program_shape()->add_parameters(), rng);
      }
      m.how = "entry id / program shape";
      break;
    case 10: {
      auto* alias = proto.mutable_input_output_alias()->add_entries();
      alias->set_parameter_number(SomeInt(rng) % 3);
      if (rng() % 2) alias->add_output_shape_index(SomeInt(rng) % 3);
      if (rng() % 2) alias->add_parameter_shape_index(SomeInt(rng) % 3);
      alias->set_kind(static_cast<xla::Kind>(Below(rng, 4)));
      if (rng() % 2) {
        auto* donor = proto.mutable_buffer_donor()->add_entries();
        donor->set_parameter_number(SomeInt(rng) % 3);
      }
      m.how = "input_output_alias / buffer_donor entry";
      break;
    }
    default:
      instruction->set_id(SomeId(proto, rng));
      m.how = absl::StrCat("id of ", name);
      break;
  }
  m.bytes = proto.SerializeAsString();
  return m;
}

}  // namespace

Mutant MutateText(const std::string& text, uint64_t seed) {
  Rng rng(seed);
  Mutant m = MutateTextOnce(text, rng);
  // Now and then a second edit on top of the first.
  if (rng() % 4 == 0) {
    Mutant again = MutateTextOnce(m.bytes, rng);
    again.how = absl::StrCat(m.how, "; ", again.how);
    return again;
  }
  return m;
}

Mutant MutateProto(const xla::HloModuleProto& proto, uint64_t seed) {
  Rng rng(seed);
  const uint64_t choice = rng() % 10;
  if (choice < 6) return MutateProtoStructure(proto, rng);
  std::string bytes = proto.SerializeAsString();
  if (bytes.empty()) return {bytes, "empty"};
  if (choice < 9) {
    const int flips = 1 + static_cast<int>(Below(rng, 4));
    std::string how = "byte-flip";
    for (int k = 0; k < flips; ++k) {
      const size_t at = Below(rng, bytes.size());
      bytes[at] = static_cast<char>(Below(rng, 256));
      absl::StrAppend(&how, " ", at);
    }
    return {bytes, how};
  }
  const size_t at = Below(rng, bytes.size());
  return {bytes.substr(0, at), absl::StrCat("truncate at ", at)};
}

}  // namespace hloc::mutation
