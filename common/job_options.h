// Vocabulary of elastic job options (design.md §2): plans, SLA classes, determinism levels.
// Shared by the SPANK plugin, elastic-agent and elasticd so a value means the same everywhere.
// Pure: no I/O, no exceptions; errors come back as text naming the option and expected form.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.h"

namespace elastic {

enum class Plan { kAuto, kDp, kGa, kGc, kZeroDp, kZeroOffload, kTp, kPp, kBurst };
enum class SlaClass { kGuaranteed, kBestEffort, kBackground };
enum class Determinism { kD0, kD1, kD2, kStatistical };

Result<Plan> ParsePlan(std::string_view text);
Result<SlaClass> ParseSlaClass(std::string_view text);
Result<Determinism> ParseDeterminism(std::string_view text);
// A positive count such as --elastic-est (1 .. 1,048,576), decimal digits only.
Result<std::int64_t> ParsePositiveCount(std::string_view text);

std::string_view ToString(Plan plan);
std::string_view ToString(SlaClass sla_class);
std::string_view ToString(Determinism level);

// Comma-separated list of accepted spellings, for error messages and --help text.
std::string_view PlanChoices();
std::string_view SlaClassChoices();
std::string_view DeterminismChoices();

// Whether a plan keeps parameters bitwise identical to DP under the given level (design.md §4:
// TP changes the arithmetic, so only `statistical` admits it). `auto` is always allowed: the
// planner restricts itself to the admissible plans.
bool PlanAllowedUnder(Plan plan, Determinism level);

}  // namespace elastic
