// Parsing and printing of the elastic job-option vocabulary.
#include "common/job_options.h"

#include <array>
#include <charconv>
#include <utility>

namespace elastic {
namespace {

template <typename T, std::size_t N>
using Table = std::array<std::pair<std::string_view, T>, N>;

constexpr Table<Plan, 9> kPlans{{{"auto", Plan::kAuto},
                                 {"dp", Plan::kDp},
                                 {"ga", Plan::kGa},
                                 {"gc", Plan::kGc},
                                 {"zero-dp", Plan::kZeroDp},
                                 {"zero-offload", Plan::kZeroOffload},
                                 {"tp", Plan::kTp},
                                 {"pp", Plan::kPp},
                                 {"burst", Plan::kBurst}}};
constexpr Table<SlaClass, 3> kClasses{{{"guaranteed", SlaClass::kGuaranteed},
                                       {"best-effort", SlaClass::kBestEffort},
                                       {"background", SlaClass::kBackground}}};
constexpr Table<Determinism, 4> kLevels{{{"d0", Determinism::kD0},
                                         {"d1", Determinism::kD1},
                                         {"d2", Determinism::kD2},
                                         {"statistical", Determinism::kStatistical}}};

constexpr std::int64_t kMaxCount = 1 << 20;

template <typename T, std::size_t N>
Result<T> Lookup(const Table<T, N>& table, std::string_view text, std::string_view choices) {
  for (const auto& [name, value] : table) {
    if (name == text) return Result<T>::Ok(value);
  }
  return Result<T>::Fail("invalid value \"" + std::string(text) + "\": expected one of " +
                         std::string(choices));
}

template <typename T, std::size_t N>
std::string_view NameOf(const Table<T, N>& table, T value) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return "?";
}

}  // namespace

Result<Plan> ParsePlan(std::string_view text) { return Lookup(kPlans, text, PlanChoices()); }
Result<SlaClass> ParseSlaClass(std::string_view text) {
  return Lookup(kClasses, text, SlaClassChoices());
}
Result<Determinism> ParseDeterminism(std::string_view text) {
  return Lookup(kLevels, text, DeterminismChoices());
}

Result<std::int64_t> ParsePositiveCount(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  // from_chars alone accepts a leading '-'; require digits only so "+3", " 3", "3x" all fail.
  bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == text.npos;
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (!digits_only || ec != std::errc() || ptr != end || value < 1 || value > kMaxCount) {
    return Result<std::int64_t>::Fail("invalid value \"" + std::string(text) +
                                      "\": expected an integer from 1 to " +
                                      std::to_string(kMaxCount));
  }
  return Result<std::int64_t>::Ok(value);
}

std::string_view ToString(Plan plan) { return NameOf(kPlans, plan); }
std::string_view ToString(SlaClass sla_class) { return NameOf(kClasses, sla_class); }
std::string_view ToString(Determinism level) { return NameOf(kLevels, level); }

std::string_view PlanChoices() { return "auto, dp, ga, gc, zero-dp, zero-offload, tp, pp, burst"; }
std::string_view SlaClassChoices() { return "guaranteed, best-effort, background"; }
std::string_view DeterminismChoices() { return "d0, d1, d2, statistical"; }

bool PlanAllowedUnder(Plan plan, Determinism level) {
  return plan != Plan::kTp || level == Determinism::kStatistical;
}

}  // namespace elastic
