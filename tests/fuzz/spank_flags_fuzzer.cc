// libFuzzer target: the SPANK plugin's pure option handling: --elastic* flags with their
// SLURM_ELASTIC_* fallback and cross-checks, the plugstack.conf arguments and the resize-support
// decision.
//
// Input: lines. "--NAME=VALUE" or "--NAME" applies a flag as sbatch would hand it over (an
// unknown NAME is skipped); "SLURM_ELASTIC...=VALUE" sets an environment variable; any other
// line is a plugstack argument (key=value). The first line is also SchedulerParameters and the
// last AccountingStorageType.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spank/elastic_flags.h"
#include "spank/plugin_args.h"
#include "spank/resize_support.h"

namespace {

using elastic::spank::ElasticSettings;

const elastic::spank::FlagSpec* FlagNamed(std::string_view name) {
  for (const auto& flag : elastic::spank::Flags()) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

// A refusal is one message that names the plugin, as the user sees it from sbatch.
void CheckError(const std::string& error) {
  if (!error.empty() && error.rfind("elastic: ", 0) != 0) std::abort();
}

bool Same(const ElasticSettings& a, const ElasticSettings& b) {
  return a.elastic == b.elastic && a.est == b.est && a.plan == b.plan &&
         a.sla_class == b.sla_class && a.determinism == b.determinism;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    lines.emplace_back(input.substr(0, newline));
    input = newline == input.npos ? std::string_view() : input.substr(newline + 1);
  }

  ElasticSettings settings;
  std::map<std::string, std::string> env;
  std::vector<std::string> plugin_argv;
  bool refused = false;
  for (const std::string& line : lines) {
    if (line.rfind("--", 0) == 0) {
      const std::size_t equals = line.find('=');
      const elastic::spank::FlagSpec* flag =
          FlagNamed(std::string_view(line).substr(2, equals - 2));
      if (flag == nullptr) continue;
      const std::string value = equals == line.npos ? "" : line.substr(equals + 1);
      const std::string error = elastic::spank::ApplyFlag(
          settings, flag->id, equals == line.npos ? nullptr : value.c_str());
      CheckError(error);
      refused |= !error.empty();
    } else if (line.rfind("SLURM_ELASTIC", 0) == 0 && line.find('=') != line.npos) {
      env[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
    } else {
      plugin_argv.push_back(line);
    }
  }
  auto getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  if (!refused) {
    const std::string fallback_error = elastic::spank::ApplyEnvironmentFallback(settings, getenv);
    CheckError(fallback_error);
    const std::string consistency = elastic::spank::CheckConsistency(settings);
    CheckError(consistency);
    if (fallback_error.empty() && consistency.empty()) {
      // The tasks' environment, read back the way the next srun inside the job reads it, gives
      // the same settings: a step inherits exactly what the job was submitted with.
      std::map<std::string, std::string> task_env;
      for (const auto& [name, value] : elastic::spank::TaskEnvironment(settings)) {
        task_env[name] = value;
      }
      ElasticSettings inherited;
      auto task_getenv = [&task_env](const char* name) -> const char* {
        auto it = task_env.find(name);
        return it == task_env.end() ? nullptr : it->second.c_str();
      };
      if (!elastic::spank::ApplyEnvironmentFallback(inherited, task_getenv).empty()) std::abort();
      if (settings.elastic && !Same(settings, inherited)) std::abort();
    }
  }

  elastic::spank::PluginArgsResult args = elastic::spank::ParsePluginArgs(plugin_argv);
  CheckError(args.error);
  if (args.error.empty()) {
    for (const std::string* path : {&args.args.checkpoint_base, &args.args.elasticd_socket}) {
      if (path->empty() || path->front() != '/' || path->find("/../") != path->npos) std::abort();
      for (unsigned char c : *path) {
        if (c < 0x20 || c == 0x7f) std::abort();
      }
    }
  }

  const std::string sched = lines.empty() ? "" : lines.front();
  const std::string accounting = lines.empty() ? "" : lines.back();
  CheckError(elastic::spank::CheckResizeSupport(sched, accounting));
  return 0;
}
