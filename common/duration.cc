// Parsing and printing of config durations.
#include "common/duration.h"

#include <charconv>
#include <cstdint>

namespace elastic {

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::size_t digits = text.find_first_not_of("0123456789");
  if (digits == 0 || digits == text.npos) return std::nullopt;
  std::int64_t count = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, count);
  if (ec != std::errc()) return std::nullopt;
  std::string_view unit = text.substr(digits);
  std::int64_t scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else return std::nullopt;
  if (count > INT64_MAX / scale) return std::nullopt;
  return std::chrono::milliseconds(count * scale);
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  auto ms = duration.count();
  if (ms % 3'600'000 == 0 && ms != 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0 && ms != 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace elastic
