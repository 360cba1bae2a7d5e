// Fingerprint validation and the mismatch message that a refused resume shows the user.
#include "agent/checkpoint/fingerprint.h"

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/format.h"

namespace elastic::agent {
namespace {

constexpr std::string_view kUnset = "<unset>";

// Keys are written as key=value lines in the meta record, so '=' cannot appear in a key and a
// line break cannot appear in either.
std::string CheckKey(std::string_view key) {
  if (key.empty() || key.size() > checkpoint::kMaxNameLength) {
    return "fingerprint key " + checkpoint::QuoteForMessage(key) + ": expected 1.." +
           std::to_string(checkpoint::kMaxNameLength) + " bytes";
  }
  for (char c : key) {
    if (c <= ' ' || c > '~' || c == '=') {
      return "fingerprint key " + checkpoint::QuoteForMessage(key) +
             ": expected printable ASCII without spaces or '='";
    }
  }
  return "";
}

// Values with spaces (or none at all) are quoted so the list of differences stays readable.
std::string Show(std::string_view key, const std::optional<std::string>& value) {
  std::string shown(key);
  shown += '=';
  if (!value) return shown + std::string(kUnset);
  if (value->empty() || value->find_first_of(" \t") != std::string::npos) {
    return shown + checkpoint::QuoteForMessage(*value);
  }
  return shown + *value;
}

}  // namespace

void Fingerprint::Add(std::string key, std::string value) {
  if (std::string problem = CheckKey(key); !problem.empty()) throw CheckpointError(problem);
  if (value.find_first_of("\r\n") != std::string::npos) {
    throw CheckpointError("fingerprint value of " + key + " contains a line break");
  }
  if (Find(key)) throw CheckpointError("fingerprint key " + key + " is added twice");
  entries_.emplace_back(std::move(key), std::move(value));
}

std::optional<std::string> Fingerprint::Find(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::string DescribeMismatch(const Fingerprint& saved, const Fingerprint& current) {
  std::vector<std::string> differing;
  for (const auto& [key, value] : saved.entries()) {
    if (current.Find(key) != value) differing.push_back(key);
  }
  for (const auto& [key, value] : current.entries()) {
    if (!saved.Find(key)) differing.push_back(key);
  }
  if (differing.empty()) return "";
  std::string was = "checkpoint was written for";
  std::string now = "this run has";
  for (const std::string& key : differing) {
    was += ' ' + Show(key, saved.Find(key));
    now += ' ' + Show(key, current.Find(key));
  }
  return was + ", " + now;
}

}  // namespace elastic::agent
