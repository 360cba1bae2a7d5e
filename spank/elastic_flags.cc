// Parsing and checking of the --elastic* flags.
#include "spank/elastic_flags.h"

#include <cstring>

namespace elastic::spank {
namespace {

constexpr std::array<FlagSpec, 5> kFlags{{
    {FlagId::kElastic, "elastic", nullptr,
     "Run this job elastically: Slurm's -N MIN-MAX bounds its size; elasticd grows it into idle "
     "nodes and shrinks it when other work needs them",
     "SLURM_ELASTIC"},
    {FlagId::kEst, "elastic-est", "N",
     "Number of EasyScaleThreads (logical data-parallel workers); default MAX nodes x ranks "
     "per node (the job's GPUs per node, else --ntasks-per-node, else 1)",
     "SLURM_ELASTIC_EST"},
    {FlagId::kPlan, "elastic-plan", "PLAN",
     "Execution plan: auto (re-chosen on every resize), dp, ga, gc, zero-dp, zero-offload, tp, "
     "pp, burst [auto]",
     "SLURM_ELASTIC_PLAN"},
    {FlagId::kClass, "elastic-class", "CLASS",
     "Scheduling class: guaranteed, best-effort or background [best-effort]",
     "SLURM_ELASTIC_CLASS"},
    {FlagId::kDeterminism, "elastic-determinism", "LEVEL",
     "Determinism: d0, d1 (bitwise identical across sizes), d2 (also across device types), "
     "statistical [d1]",
     "SLURM_ELASTIC_DETERMINISM"},
}};

std::string FlagError(const FlagSpec& flag, const std::string& problem) {
  return std::string("elastic: --") + flag.name + ": " + problem;
}

bool HasValue(const char* value) {
  return value != nullptr && std::strcmp(value, "(null)") != 0 && value[0] != '\0';
}

template <typename T>
std::string Store(std::optional<T>& slot, const Result<T>& parsed) {
  if (!parsed) return parsed.error;
  slot = parsed.value;
  return {};
}

// Parses a present value into its slot; returns the bare problem ("invalid value ...").
std::string ParseInto(ElasticSettings& settings, FlagId id, std::string_view text) {
  switch (id) {
    case FlagId::kEst: return Store(settings.est, ParsePositiveCount(text));
    case FlagId::kPlan: return Store(settings.plan, ParsePlan(text));
    case FlagId::kClass: return Store(settings.sla_class, ParseSlaClass(text));
    case FlagId::kDeterminism: return Store(settings.determinism, ParseDeterminism(text));
    case FlagId::kElastic: break;
  }
  return {};
}

bool IsSet(const ElasticSettings& s, FlagId id) {
  switch (id) {
    case FlagId::kElastic: return s.elastic;
    case FlagId::kEst: return s.est.has_value();
    case FlagId::kPlan: return s.plan.has_value();
    case FlagId::kClass: return s.sla_class.has_value();
    case FlagId::kDeterminism: return s.determinism.has_value();
  }
  return false;
}

}  // namespace

const std::array<FlagSpec, 5>& Flags() { return kFlags; }

const FlagSpec* FindFlag(FlagId id) {
  for (const auto& flag : kFlags) {
    if (flag.id == id) return &flag;
  }
  return nullptr;
}

std::string ApplyFlag(ElasticSettings& settings, FlagId id, const char* value) {
  const FlagSpec* flag = FindFlag(id);
  if (flag == nullptr) return "elastic: unknown option id " + std::to_string(static_cast<int>(id));
  if (id == FlagId::kElastic) {
    settings.elastic = true;
    return {};
  }
  if (!HasValue(value)) {
    return FlagError(*flag, std::string("missing value: expected --") + flag->name + "=" +
                                flag->arginfo);
  }
  std::string problem = ParseInto(settings, id, value);
  return problem.empty() ? problem : FlagError(*flag, problem);
}

std::string ApplyEnvironmentFallback(ElasticSettings& settings,
                                     const std::function<const char*(const char*)>& getenv) {
  for (const auto& flag : kFlags) {
    if (IsSet(settings, flag.id)) continue;
    const char* value = getenv(flag.env_name);
    if (value == nullptr) continue;
    if (flag.id == FlagId::kElastic) {
      if (std::strcmp(value, "1") != 0 && std::strcmp(value, "0") != 0) {
        return std::string("elastic: ") + flag.env_name + "=\"" + value +
               "\": expected 1 or 0";
      }
      settings.elastic = std::strcmp(value, "1") == 0;
      continue;
    }
    std::string problem = ParseInto(settings, flag.id, value);
    if (!problem.empty()) {
      return std::string("elastic: ") + flag.env_name + " (read because --" + flag.name +
             " was not given): " + problem;
    }
  }
  return {};
}

std::string CheckConsistency(const ElasticSettings& settings) {
  if (!settings.elastic) {
    for (const auto& flag : kFlags) {
      if (flag.id != FlagId::kElastic && IsSet(settings, flag.id)) {
        return std::string("elastic: --") + flag.name + " needs --elastic (add --elastic, or "
               "drop --" + flag.name + ")";
      }
    }
    return {};
  }
  Plan plan = settings.plan.value_or(Plan::kAuto);
  Determinism level = settings.determinism.value_or(Determinism::kD1);
  if (!PlanAllowedUnder(plan, level)) {
    return std::string("elastic: --elastic-plan=") + std::string(ToString(plan)) +
           " is not bitwise reproducible under --elastic-determinism=" +
           std::string(ToString(level)) +
           ": use --elastic-determinism=statistical, or another plan";
  }
  return {};
}

std::vector<std::pair<std::string, std::string>> TaskEnvironment(const ElasticSettings& settings) {
  std::vector<std::pair<std::string, std::string>> env;
  if (!settings.elastic) return env;
  env.emplace_back("SLURM_ELASTIC", "1");
  if (settings.est) env.emplace_back("SLURM_ELASTIC_EST", std::to_string(*settings.est));
  if (settings.plan) env.emplace_back("SLURM_ELASTIC_PLAN", std::string(ToString(*settings.plan)));
  if (settings.sla_class) {
    env.emplace_back("SLURM_ELASTIC_CLASS", std::string(ToString(*settings.sla_class)));
  }
  if (settings.determinism) {
    env.emplace_back("SLURM_ELASTIC_DETERMINISM", std::string(ToString(*settings.determinism)));
  }
  return env;
}

}  // namespace elastic::spank
