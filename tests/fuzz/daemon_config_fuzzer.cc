// libFuzzer target: elasticd's config loader (strict TOML reading of elasticd.toml) and the
// cleanup retention syntax.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/toml_reader.h"
#include "scheduler/daemon/daemon_config.h"

namespace {

bool Absolute(const std::string& path) { return !path.empty() && path.front() == '/'; }

// A loaded config holds only what the loader promises to have checked.
void CheckConfig(const elastic::daemon::DaemonConfig& config) {
  if (!Absolute(config.socket) || !Absolute(config.state_dir) ||
      !Absolute(config.checkpoint_base)) {
    std::abort();
  }
  if (!config.log_file.empty() && !Absolute(config.log_file)) std::abort();
  if (!config.munge_socket.empty() && !Absolute(config.munge_socket)) std::abort();
  if (config.cycle_interval < std::chrono::milliseconds(100)) std::abort();
  if (!(config.reconfig_penalty >= 0.0 && config.reconfig_penalty <= 1.0)) std::abort();
  if (config.checkpoint_retention && config.checkpoint_retention->count() < 0) std::abort();
  if (elastic::daemon::ToString(config.log_level) == nullptr) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    CheckConfig(elastic::daemon::ParseDaemonConfig(text, "elasticd.toml"));
  } catch (const elastic::ConfigError& e) {
    // The documented error: it names the file first.
    if (std::string_view(e.what()).substr(0, 13) != "elasticd.toml") std::abort();
  }
  if (size <= 32) {
    auto retention = elastic::daemon::ParseRetention(text);
    if (retention && *retention && (*retention)->count() < 0) std::abort();
  }
  return 0;
}
