// The burst split's JSON boundary: reads layer profiles (format in docs/burst-planner.md)
// and renders splits as JSON. LoadProfileJson is the library's only file access.
// Errors name the file, the JSON path, the value and what was expected; unknown keys are errors.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/result.h"
#include "perf/burst/burst_split.h"
#include "perf/burst/profile.h"

namespace elastic::burst {

inline constexpr std::string_view kProfileFormat = "elastic-burst-profile/1";

// `name` only labels errors, which read "<name>: <json path>: <what was expected>". The result
// also passed ValidateProfile.
Result<ModelProfile> ParseProfileJson(std::string_view text, const std::string& name);
Result<ModelProfile> LoadProfileJson(const std::string& path);

// The profile in the same format (round-trips through ParseProfileJson).
nlohmann::json ProfileToJson(const ModelProfile& profile);

// A split, with the best uniform data-parallel split beside it when `uniform` is non-null.
nlohmann::json SplitToJson(const ModelProfile& profile, const BurstSplitOptions& options,
                           const BurstSplit& split, const BurstSplit* uniform);

}  // namespace elastic::burst
