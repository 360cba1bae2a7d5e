// Text coding of the meta record.
#include "agent/checkpoint/meta_record.h"

#include <charconv>

#include "agent/checkpoint/checkpoint_error.h"

namespace elastic::agent::checkpoint {
namespace {

constexpr std::string_view kStepKey = "step";
constexpr std::string_view kFingerprintPrefix = "fingerprint.";

std::uint64_t ParseStep(std::string_view digits) {
  std::uint64_t step = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    throw CheckpointError("meta: step \"" + std::string(digits) + "\" is not an integer >= 0");
  }
  return step;
}

}  // namespace

std::string EncodeMeta(const Meta& meta) {
  std::string text = std::string(kStepKey) + "=" + std::to_string(meta.step) + "\n";
  for (const auto& [key, value] : meta.fingerprint.entries()) {
    text += std::string(kFingerprintPrefix) + key + "=" + value + "\n";
  }
  return text;
}

Meta DecodeMeta(std::string_view text) {
  Meta meta;
  bool has_step = false;
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      throw CheckpointError("meta: line " + std::to_string(line_number) + " is not terminated");
    }
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      throw CheckpointError("meta: line " + std::to_string(line_number) + " has no '='");
    }
    std::string_view key = line.substr(0, equals);
    std::string_view value = line.substr(equals + 1);
    if (key == kStepKey) {
      if (has_step) throw CheckpointError("meta: step is given twice");
      meta.step = ParseStep(value);
      has_step = true;
    } else if (key.starts_with(kFingerprintPrefix)) {
      key.remove_prefix(kFingerprintPrefix.size());
      meta.fingerprint.Add(std::string(key), std::string(value));
    }
  }
  if (!has_step) throw CheckpointError("meta: no step");
  return meta;
}

}  // namespace elastic::agent::checkpoint
