// libFuzzer target: elastic-agent's job config loader (train.toml into JobConfig, with the
// SLURM_ELASTIC_* overrides the SPANK plugin exports).
//
// Input: the TOML text. Comment lines of the form "#!NAME=VALUE" also set NAME in the
// environment the loader sees, so a seed stays a valid config file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "agent/config/job_config.h"
#include "common/toml_reader.h"

namespace {

std::map<std::string, std::string, std::less<>> EnvFromComments(std::string_view text) {
  std::map<std::string, std::string, std::less<>> env;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == text.npos ? std::string_view() : text.substr(newline + 1);
    if (!line.starts_with("#!")) continue;
    line.remove_prefix(2);
    const std::size_t equals = line.find('=');
    if (equals == line.npos) continue;
    env[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
  }
  return env;
}

// A loaded config satisfies every rule the loader documents.
void CheckConfig(const elastic::agent::JobConfig& c) {
  const auto& t = c.train;
  if (t.ests < 1 || t.global_batch < 1 || t.global_batch % t.ests != 0) std::abort();
  if (c.est_batch() < 1) std::abort();
  if (!(t.lr > 0) || !(t.momentum >= 0 && t.momentum < 1)) std::abort();
  if (t.steps < 1 || t.threads < 1 || t.threads > elastic::agent::kMaxThreads) std::abort();
  if (!elastic::PlanAllowedUnder(t.plan, t.determinism)) std::abort();
  if (c.data.path.empty() || c.data.path.front() != '/') std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto env_vars = EnvFromComments(text);
  elastic::agent::EnvLookup env = [&env_vars](std::string_view name) -> std::optional<std::string> {
    auto it = env_vars.find(name);
    if (it == env_vars.end()) return std::nullopt;
    return it->second;
  };
  try {
    elastic::TomlReader reader = elastic::TomlReader::FromString(text, "train.toml");
    // Relative data paths resolve against the config's directory: this one holds the dataset
    // (Debian's dataset-fashion-mnist) when it is installed, so valid configs get past the check.
    CheckConfig(elastic::agent::ParseJobConfig(reader, env, "/usr/share/datasets"));
  } catch (const elastic::ConfigError&) {
    // The documented error model; everything else escaping is a bug.
  }
  return 0;
}
