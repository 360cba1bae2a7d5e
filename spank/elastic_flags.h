// The --elastic* submission flags (design.md §2): their table, parsing, cross-checks and the
// environment handed to tasks. Pure C++ with no spank.h, so GoogleTest covers all of it.
// Error model: functions return an empty string on success, else one complete message such as
// `elastic: --elastic-est: invalid value "0": expected an integer from 1 to 1048576`.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/job_options.h"

namespace elastic::spank {

enum class FlagId : int { kElastic = 1, kEst, kPlan, kClass, kDeterminism };

struct FlagSpec {
  FlagId id;
  const char* name;      // without the leading "--"
  const char* arginfo;   // nullptr for flags without a value
  const char* usage;
  const char* env_name;  // SLURM_ELASTIC_* fallback and the variable tasks see
};

const std::array<FlagSpec, 5>& Flags();
const FlagSpec* FindFlag(FlagId id);

struct ElasticSettings {
  bool elastic = false;
  std::optional<std::int64_t> est;
  std::optional<Plan> plan;
  std::optional<SlaClass> sla_class;
  std::optional<Determinism> determinism;

  bool AnySet() const { return elastic || est || plan || sla_class || determinism; }
};

// Applies one flag. `value` may be null, or the literal "(null)" that Slurm forwards for a
// flag given without a value; both mean "no value".
std::string ApplyFlag(ElasticSettings& settings, FlagId id, const char* value);

// Fills flags not given on the command line from SLURM_ELASTIC_* variables, looked up through
// `getenv` (injected so tests need no real environment). An invalid value names the variable.
std::string ApplyEnvironmentFallback(ElasticSettings& settings,
                                     const std::function<const char*(const char*)>& getenv);

// Rules across flags, checked before anything is queued.
std::string CheckConsistency(const ElasticSettings& settings);

// Variables for the job's tasks: SLURM_ELASTIC=1 and one SLURM_ELASTIC_* per flag given.
std::vector<std::pair<std::string, std::string>> TaskEnvironment(const ElasticSettings& settings);

}  // namespace elastic::spank
