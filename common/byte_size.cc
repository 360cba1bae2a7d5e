// Parsing and printing of config memory sizes.
#include "common/byte_size.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace elastic {
namespace {

constexpr double kMaxBytes = 4611686018427387904.0;  // 2^62

// The multiplier of a suffix ("", "K", "MiB", "gb", ...); 0 when it is not one.
double Multiplier(std::string_view suffix) {
  if (suffix.empty()) return 1;
  const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
  std::string_view rest = suffix.substr(1);
  if (!(rest.empty() || rest == "B" || rest == "b" || rest == "iB" || rest == "ib")) return 0;
  switch (unit) {
    case 'K': return 1024.0;
    case 'M': return 1024.0 * 1024.0;
    case 'G': return 1024.0 * 1024.0 * 1024.0;
    case 'T': return 1024.0 * 1024.0 * 1024.0 * 1024.0;
    default: return 0;
  }
}

}  // namespace

std::optional<std::int64_t> ParseByteSize(std::string_view text) {
  const std::size_t end = text.find_first_not_of("0123456789.");
  const std::string_view number = text.substr(0, end);
  const std::string_view suffix = end == text.npos ? std::string_view() : text.substr(end);
  if (number.empty() || number.front() == '.' || number.back() == '.') return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value,
                                   std::chars_format::fixed);
  if (ec != std::errc() || ptr != number.data() + number.size()) return std::nullopt;
  const double multiplier = Multiplier(suffix);
  if (multiplier == 0) return std::nullopt;
  // Plain bytes are whole numbers: "2.5" bytes is a mistake, not a size.
  if (suffix.empty() && number.find('.') != number.npos) return std::nullopt;
  const double bytes = std::floor(value * multiplier);
  if (!(bytes >= 1) || bytes > kMaxBytes) return std::nullopt;
  return static_cast<std::int64_t>(bytes);
}

std::string FormatByteSize(double bytes) {
  char text[48];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  } else if (bytes < 1024.0 * 1024.0) {
    std::snprintf(text, sizeof text, "%.2f KiB", bytes / 1024.0);
  } else if (bytes < 1024.0 * 1024.0 * 1024.0) {
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1024.0 * 1024.0));
  } else {
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  }
  return text;
}

}  // namespace elastic
