// Text and JSON forms of the fusion decision ledger.
#include "passes/fusion/fusion_ledger.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\t': out->append("\\t"); break;
      case '\r': out->append("\\r"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(c));
          out->append(buffer);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

}  // namespace

void FusionLedger::AddEdge(absl::string_view pass, absl::string_view computation,
                           absl::string_view event, absl::string_view producer,
                           absl::string_view consumer, bool accepted, absl::string_view rule,
                           absl::string_view reason) {
  LedgerEntry entry;
  entry.pass = std::string(pass);
  entry.computation = std::string(computation);
  entry.event = std::string(event);
  entry.subjects = {std::string(producer), std::string(consumer)};
  entry.accepted = accepted;
  entry.rule = std::string(rule);
  entry.reason = std::string(reason);
  entries_.push_back(std::move(entry));
}

std::vector<const LedgerEntry*> FusionLedger::Find(absl::string_view pass,
                                                   absl::string_view rule) const {
  std::vector<const LedgerEntry*> found;
  for (const LedgerEntry& entry : entries_) {
    if ((pass.empty() || entry.pass == pass) && (rule.empty() || entry.rule == rule)) {
      found.push_back(&entry);
    }
  }
  return found;
}

std::string FusionLedger::ToText() const {
  std::string out;
  for (const LedgerEntry& e : entries_) {
    absl::StrAppend(&out, e.pass, " ", e.computation, ": ", e.event);
    if (!e.result.empty()) absl::StrAppend(&out, " ", e.result);
    if (e.event == "edge" && e.subjects.size() == 2) {
      absl::StrAppend(&out, " ", e.subjects[0], " -> ", e.subjects[1]);
    } else if (!e.subjects.empty()) {
      out += " [";
      for (size_t i = 0; i < e.subjects.size(); ++i) {
        if (i) out += ' ';
        out += e.subjects[i];
      }
      out += ']';
    }
    absl::StrAppend(&out, e.accepted ? " accepted" : " refused", " (", e.rule, ")");
    if (!e.reason.empty()) absl::StrAppend(&out, " ", e.reason);
    out += '\n';
  }
  return out;
}

std::string FusionLedger::ToJson() const {
  std::string out = "[";
  for (size_t k = 0; k < entries_.size(); ++k) {
    const LedgerEntry& e = entries_[k];
    out += k ? ",\n {" : "\n {";
    out += "\"pass\":";
    AppendJsonString(e.pass, &out);
    out += ",\"computation\":";
    AppendJsonString(e.computation, &out);
    out += ",\"event\":";
    AppendJsonString(e.event, &out);
    out += ",\"subjects\":[";
    for (size_t i = 0; i < e.subjects.size(); ++i) {
      if (i) out += ',';
      AppendJsonString(e.subjects[i], &out);
    }
    out += "],\"accepted\":";
    out += e.accepted ? "true" : "false";
    out += ",\"rule\":";
    AppendJsonString(e.rule, &out);
    out += ",\"reason\":";
    AppendJsonString(e.reason, &out);
    out += ",\"result\":";
    AppendJsonString(e.result, &out);
    out += '}';
  }
  out += entries_.empty() ? "]\n" : "\n]\n";
  return out;
}

}  // namespace hloc
