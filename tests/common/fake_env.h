// An EnvLookup over a fixed map, for tests of code that reads the environment through the seam.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/env.h"

namespace elastic::testing {

using Env = std::map<std::string, std::string>;

inline agent::EnvLookup FakeEnv(Env values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace elastic::testing
