// Human-readable durations for config files: "250ms", "30s", "5m", "2h".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace elastic {

// Returns nullopt for anything but <non-negative integer><ms|s|m|h>.
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace elastic
