// Loading and validating elasticd.toml.
#include "scheduler/daemon/daemon_config.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/duration.h"
#include "common/toml_text.h"
#include "common/toml_reader.h"

namespace elastic::daemon {
namespace {

constexpr std::array<std::string_view, 4> kPolicies{"backfill", "easyscale", "rubick", "elastic"};
constexpr std::array<std::string_view, 4> kLevels{"error", "warn", "info", "debug"};

void RequireAbsolute(const TomlReader& reader, std::string_view key, const std::string& path,
                     bool allow_empty) {
  if (path.empty() && allow_empty) return;
  if (path.empty() || path.front() != '/') {
    reader.Fail(key, "invalid value \"" + path + "\": expected an absolute path");
  }
}

// A Slurm partition name or empty: letters, digits, '_', '-', '.' (what elasticd hands to
// slurm_update_partition is the admin's, but a typo should be caught here, not by Slurm).
void RequirePartitionName(const TomlReader& reader, std::string_view key, const std::string& name) {
  bool ok = name.size() <= 64;
  for (unsigned char c : name) ok = ok && (std::isalnum(c) || c == '_' || c == '-' || c == '.');
  if (!ok) {
    reader.Fail(key, "invalid value \"" + name +
                         "\": expected a Slurm partition name (letters, digits, _ - .) or \"\"");
  }
}

// The keys of a table whose key names are Slurm's (accounts, node types): plain names only (a
// dot would make a nested key), each refused by name otherwise.
std::vector<std::string> SlurmNamedKeys(TomlReader& reader, std::string_view text,
                                        const std::string& table, const std::string& what) {
  std::vector<std::string> names = TomlTableKeys(text, table);
  for (const std::string& name : names) {
    bool plain = !name.empty() && name.size() <= 64;
    for (unsigned char c : name) plain = plain && (std::isalnum(c) || c == '_' || c == '-');
    if (!plain) {
      reader.Fail(table + "." + name, "invalid " + what + " name \"" + name + "\": expected a " +
                                          "Slurm " + what + " (letters, digits, _ -)");
    }
  }
  return names;
}

// [quotas]: devices per Slurm account.
std::optional<std::map<std::string, int>> ReadQuotas(TomlReader& reader, std::string_view text) {
  if (!TomlHasTable(text, "quotas")) return std::nullopt;
  std::map<std::string, int> quotas;
  for (const std::string& account : SlurmNamedKeys(reader, text, "quotas", "account")) {
    if (auto devices = reader.Integer("quotas." + account, 0, 1 << 20)) {
      quotas[account] = static_cast<int>(*devices);
    }
  }
  return quotas;
}

// [node_types]: capability per node type, (0, 1000].
std::map<std::string, double> ReadNodeTypes(TomlReader& reader, std::string_view text) {
  std::map<std::string, double> types;
  for (const std::string& type : SlurmNamedKeys(reader, text, "node_types", "node type")) {
    const std::string key = "node_types." + type;
    if (auto capability = reader.Double(key, 0.0, 1000.0)) {
      if (*capability <= 0.0) reader.Fail(key, "must be above 0 (a reference GPU is 1)");
      types[type] = *capability;
    }
  }
  return types;
}

template <std::size_t N>
std::size_t IndexIn(const TomlReader& reader, std::string_view key, const std::string& value,
                    const std::array<std::string_view, N>& choices) {
  for (std::size_t i = 0; i < N; ++i) {
    if (choices[i] == value) return i;
  }
  std::string expected;
  for (auto choice : choices) expected += (expected.empty() ? "" : ", ") + std::string(choice);
  reader.Fail(key, "invalid value \"" + value + "\": expected one of " + expected);
}

DaemonConfig Read(TomlReader& reader, std::string_view text) {
  DaemonConfig config;
  if (auto v = reader.String("daemon.socket")) config.socket = *v;
  RequireAbsolute(reader, "daemon.socket", config.socket, false);
  if (auto v = reader.String("daemon.state_dir")) config.state_dir = *v;
  RequireAbsolute(reader, "daemon.state_dir", config.state_dir, false);
  if (auto v = reader.String("daemon.log_level")) {
    config.log_level = static_cast<LogLevel>(IndexIn(reader, "daemon.log_level", *v, kLevels));
  }
  if (auto v = reader.String("daemon.log_file")) config.log_file = *v;
  RequireAbsolute(reader, "daemon.log_file", config.log_file, true);
  if (auto v = reader.String("daemon.munge_socket")) config.munge_socket = *v;
  RequireAbsolute(reader, "daemon.munge_socket", config.munge_socket, true);

  if (auto v = reader.String("scheduler.policy")) {
    config.policy = std::string(kPolicies[IndexIn(reader, "scheduler.policy", *v, kPolicies)]);
  }
  if (auto v = reader.Duration("scheduler.cycle_interval")) config.cycle_interval = *v;
  if (config.cycle_interval < std::chrono::milliseconds(100)) {
    reader.Fail("scheduler.cycle_interval", "must be at least 100ms");
  }
  if (auto v = reader.Duration("scheduler.min_resize_interval")) config.min_resize_interval = *v;
  if (auto v = reader.Double("scheduler.reconfig_penalty", 0.0, 1.0)) config.reconfig_penalty = *v;
  if (auto v = reader.Duration("scheduler.resize_cost")) config.resize_cost = *v;
  if (auto v = reader.Bool("scheduler.preemption")) config.preemption = *v;
  if (auto v = reader.Bool("scheduler.preempt_for_rigid")) config.preempt_for_rigid = *v;
  if (auto v = reader.Integer("scheduler.elastic_nice", 0, 1'000'000'000)) config.elastic_nice = *v;
  if (auto v = reader.Double("scheduler.nice_lift_after", 0.0, 1e6)) config.nice_lift_after = *v;
  config.quotas = ReadQuotas(reader, text);
  config.node_types = ReadNodeTypes(reader, text);

  if (auto v = reader.String("cleanup.checkpoint_base")) config.checkpoint_base = *v;
  RequireAbsolute(reader, "cleanup.checkpoint_base", config.checkpoint_base, false);
  if (auto v = reader.String("cleanup.retention")) {
    auto retention = ParseRetention(*v);
    if (!retention) {
      reader.Fail("cleanup.retention", "invalid value \"" + *v +
                                           "\": expected a duration such as \"7d\", \"12h\", "
                                           "\"0s\", or \"never\"");
    }
    config.checkpoint_retention = *retention;
  }
  if (auto v = reader.String("background.partition")) config.background_partition = *v;
  RequirePartitionName(reader, "background.partition", config.background_partition);
  if (auto v = reader.Integer("background.max_per_node", 1, 64)) {
    config.background_max_per_node = static_cast<int>(*v);
  }
  reader.RejectUnknownKeys();
  return config;
}

}  // namespace

std::optional<std::optional<std::chrono::seconds>> ParseRetention(std::string_view text) {
  using Retention = std::optional<std::chrono::seconds>;
  if (text == "never") return Retention(std::nullopt);
  if (text.size() >= 2 && text.back() == 'd') {
    // Days are not in the shared duration syntax; read "<n>d" as <n * 24>h.
    auto hours = ParseDuration(std::string(text.substr(0, text.size() - 1)) + "h");
    if (!hours || hours->count() > INT64_MAX / 24) return std::nullopt;
    return Retention(std::chrono::duration_cast<std::chrono::seconds>(*hours * 24));
  }
  auto duration = ParseDuration(text);
  if (!duration) return std::nullopt;
  return Retention(std::chrono::duration_cast<std::chrono::seconds>(*duration));
}

DaemonConfig ParseDaemonConfig(const std::string& text, const std::string& source_name) {
  TomlReader reader = TomlReader::FromString(text, source_name);
  return Read(reader, text);
}

DaemonConfig LoadDaemonConfig(const std::string& path) {
  return ParseDaemonConfig(ReadConfigFile(path), path);
}

const char* ToString(LogLevel level) { return kLevels[static_cast<int>(level)].data(); }

}  // namespace elastic::daemon
