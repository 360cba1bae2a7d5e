// Encoding and strict decoding of the "loader" checkpoint record.
#include "agent/data/loader_state.h"

#include <charconv>
#include <cstdio>

namespace elastic::agent {
namespace {

std::string Hex16(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

template <typename T>
bool ParseNumber(std::string_view text, T* value, int base = 10) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value, base);
  return ec == std::errc() && end == text.data() + text.size();
}

bool ParseHex16(std::string_view text, std::uint64_t* value) {
  return text.size() == 16 && ParseNumber(text, value, 16);
}

// Splits "a b c" at single spaces.
std::vector<std::string_view> Fields(std::string_view text) {
  std::vector<std::string_view> fields;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t space = text.find(' ', at);
    if (space == std::string_view::npos) space = text.size();
    fields.push_back(text.substr(at, space - at));
    at = space + 1;
  }
  return fields;
}

// The lines of `text`, which ends with a line break.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// Reads "key=value" at line `index`; false when the line is not that key.
bool KeyValue(const std::vector<std::string_view>& lines, std::size_t index, std::string_view key,
              std::string_view* value) {
  if (index >= lines.size() || !lines[index].starts_with(key) ||
      lines[index].substr(key.size(), 1) != "=") {
    return false;
  }
  *value = lines[index].substr(key.size() + 1);
  return true;
}

std::string ParseEstLine(std::string_view value, std::int64_t want_id, EstLoaderState* est) {
  const std::vector<std::string_view> fields = Fields(value);
  if (fields.size() != 2 || !ParseNumber(fields[0], &est->est) ||
      !fields[1].starts_with("stream=") || !ParseHex16(fields[1].substr(7), &est->stream)) {
    return "malformed line \"est=" + std::string(value) + "\"";
  }
  if (est->est != want_id) {
    return "EST " + std::to_string(est->est) + " where EST " + std::to_string(want_id) +
           " was expected (every EST once, in id order)";
  }
  return "";
}

std::string ParsePending(std::string_view value, const LoaderExpectations& expected,
                         EstLoaderState* est) {
  const std::vector<std::string_view> fields = Fields(value);
  PendingBatch batch;
  if (fields.size() != 3 || !ParseNumber(fields[0], &batch.step) ||
      !ParseNumber(fields[1], &batch.epoch) || !ParseHex16(fields[2], &batch.seed)) {
    return "malformed line \"pending=" + std::string(value) + "\"";
  }
  const std::int64_t want_step = expected.step + static_cast<std::int64_t>(est->pending.size());
  if (batch.step != want_step || batch.epoch != batch.step / expected.steps_per_epoch) {
    return "EST " + std::to_string(est->est) + ": pending batch of step " +
           std::to_string(batch.step) + " (epoch " + std::to_string(batch.epoch) + ") where step " +
           std::to_string(want_step) + " (epoch " +
           std::to_string(want_step / expected.steps_per_epoch) + ") was expected";
  }
  est->pending.push_back(batch);
  return "";
}

std::string CheckHeader(const std::vector<std::string_view>& lines,
                        const LoaderExpectations& expected) {
  std::string_view value;
  int version = 0;
  if (!KeyValue(lines, 0, "loader", &value) || !ParseNumber(value, &version)) {
    return "does not start with \"loader=<version>\"";
  }
  if (version != kLoaderRecordVersion) {
    return "has version " + std::string(value) + ": this elastic-agent reads version " +
           std::to_string(kLoaderRecordVersion);
  }
  std::int64_t step = -1;
  if (!KeyValue(lines, 1, "step", &value) || !ParseNumber(value, &step)) {
    return "has no valid \"step=\" line";
  }
  if (step != expected.step) {
    return "is for step " + std::to_string(step) + " but the checkpoint is at step " +
           std::to_string(expected.step);
  }
  if (!KeyValue(lines, 2, "augment", &value) || value != expected.augment) {
    return "was written for augment=\"" + std::string(value) + "\", this run has \"" +
           std::string(expected.augment) + "\"";
  }
  return "";
}

}  // namespace

std::string EncodeEstLoaderLines(std::span<const EstLoaderState> ests) {
  std::string text;
  for (const EstLoaderState& est : ests) {
    text += "est=" + std::to_string(est.est) + " stream=" + Hex16(est.stream) + "\n";
    for (const PendingBatch& batch : est.pending) {
      text += "pending=" + std::to_string(batch.step) + " " + std::to_string(batch.epoch) + " " +
              Hex16(batch.seed) + "\n";
    }
  }
  return text;
}

std::string EncodeLoaderRecord(std::int64_t step, std::string_view augment,
                               std::string_view est_lines) {
  return "loader=" + std::to_string(kLoaderRecordVersion) + "\nstep=" + std::to_string(step) +
         "\naugment=" + std::string(augment) + "\n" + std::string(est_lines);
}

std::string DecodeLoaderRecord(std::string_view text, const LoaderExpectations& expected,
                               std::vector<EstLoaderState>* out) {
  if (!text.ends_with('\n')) return "does not end with a line break (truncated?)";
  const std::vector<std::string_view> lines = Lines(text);
  if (std::string problem = CheckHeader(lines, expected); !problem.empty()) return problem;
  out->clear();
  for (std::size_t i = 3; i < lines.size(); ++i) {
    std::string_view value;
    std::string problem;
    if (KeyValue(lines, i, "est", &value)) {
      out->emplace_back();
      problem = ParseEstLine(value, static_cast<std::int64_t>(out->size()) - 1, &out->back());
    } else if (KeyValue(lines, i, "pending", &value) && !out->empty()) {
      problem = ParsePending(value, expected, &out->back());
    } else {
      problem = "unexpected line " + std::to_string(i + 1) + " \"" + std::string(lines[i]) + "\"";
    }
    if (!problem.empty()) return problem;
  }
  if (static_cast<std::int64_t>(out->size()) != expected.ests) {
    return "has " + std::to_string(out->size()) + " ESTs: expected " +
           std::to_string(expected.ests);
  }
  return "";
}

}  // namespace elastic::agent
