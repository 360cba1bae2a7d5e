// elasticd's configuration (etc/elasticd.toml): a plain struct with named defaults and a loader.
#pragma once

#include <chrono>
#include <string>

namespace elastic::daemon {

enum class LogLevel { kError, kWarn, kInfo, kDebug };

struct DaemonConfig {
  // [daemon]
  std::string socket = "/run/elasticd/elasticd.sock";
  std::string state_dir = "/var/lib/elasticd";
  LogLevel log_level = LogLevel::kInfo;
  std::string log_file;      // empty: stderr (journald under systemd)
  std::string munge_socket;  // empty: libmunge's default socket
  // [scheduler]
  std::string policy = "elastic";
  std::chrono::milliseconds cycle_interval{std::chrono::seconds(10)};
  std::chrono::milliseconds min_resize_interval{std::chrono::seconds(60)};
  double reconfig_penalty = 0.97;  // Rubick §5: resize only if (T - N*delta)/T >= this
};

// Throws elastic::ConfigError naming file, line, key, value and expected form.
DaemonConfig LoadDaemonConfig(const std::string& path);
DaemonConfig ParseDaemonConfig(const std::string& text, const std::string& source_name);

const char* ToString(LogLevel level);

}  // namespace elastic::daemon
