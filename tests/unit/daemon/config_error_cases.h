// Shared check for elasticd config tests: each (TOML text, expected message part) is refused by
// ParseDaemonConfig with a ConfigError naming that part.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "common/toml_reader.h"
#include "scheduler/daemon/daemon_config.h"

namespace elastic::daemon {

inline void ExpectConfigErrors(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [text, expected] : cases) {
    try {
      ParseDaemonConfig(text, "bad.toml");
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
          << "input:\n" << text << "error: " << e.what();
    }
  }
}

}  // namespace elastic::daemon
