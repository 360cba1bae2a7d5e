// Tests for --elastic* flag parsing, the env fallback, cross-checks and the task environment.
#include "spank/elastic_flags.h"

#include <gtest/gtest.h>

#include <map>

namespace elastic::spank {
namespace {

TEST(ElasticFlags, TableMatchesDesignContract) {
  std::vector<std::string> names;
  for (const auto& f : Flags()) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"elastic", "elastic-est", "elastic-plan",
                                             "elastic-class", "elastic-determinism"}));
  EXPECT_EQ(FindFlag(FlagId::kElastic)->arginfo, nullptr);
}

TEST(ElasticFlags, AcceptsGoodValues) {
  ElasticSettings s;
  EXPECT_EQ(ApplyFlag(s, FlagId::kElastic, nullptr), "");
  EXPECT_EQ(ApplyFlag(s, FlagId::kEst, "8"), "");
  EXPECT_EQ(ApplyFlag(s, FlagId::kPlan, "zero-offload"), "");
  EXPECT_EQ(ApplyFlag(s, FlagId::kClass, "guaranteed"), "");
  EXPECT_EQ(ApplyFlag(s, FlagId::kDeterminism, "d2"), "");
  EXPECT_TRUE(s.elastic);
  EXPECT_EQ(s.est, 8);
  EXPECT_EQ(s.plan, Plan::kZeroOffload);
  EXPECT_EQ(s.sla_class, SlaClass::kGuaranteed);
  EXPECT_EQ(s.determinism, Determinism::kD2);
  EXPECT_EQ(CheckConsistency(s), "");
}

TEST(ElasticFlags, ForwardedNullValueOfPlainFlagIsAccepted) {
  ElasticSettings s;
  EXPECT_EQ(ApplyFlag(s, FlagId::kElastic, "(null)"), "");
  EXPECT_TRUE(s.elastic);
}

struct BadFlag {
  FlagId id;
  const char* value;
  const char* expected;
};

TEST(ElasticFlags, InvalidInputTable) {
  const std::vector<BadFlag> cases = {
      {FlagId::kEst, "0",
       "elastic: --elastic-est: invalid value \"0\": expected an integer from 1 to 1048576"},
      {FlagId::kEst, "-4", "elastic: --elastic-est: invalid value \"-4\""},
      {FlagId::kEst, "eight", "elastic: --elastic-est: invalid value \"eight\""},
      {FlagId::kEst, "(null)", "elastic: --elastic-est: missing value: expected --elastic-est=N"},
      {FlagId::kEst, nullptr, "elastic: --elastic-est: missing value"},
      {FlagId::kEst, "", "elastic: --elastic-est: missing value"},
      {FlagId::kPlan, "fsdp",
       "elastic: --elastic-plan: invalid value \"fsdp\": expected one of auto, dp, ga, gc, "
       "zero-dp, zero-offload, tp, pp, burst"},
      {FlagId::kClass, "gold",
       "elastic: --elastic-class: invalid value \"gold\": expected one of guaranteed, "
       "best-effort, background"},
      {FlagId::kDeterminism, "D1",
       "elastic: --elastic-determinism: invalid value \"D1\": expected one of d0, d1, d2, "
       "statistical"},
  };
  for (const auto& c : cases) {
    ElasticSettings s;
    std::string error = ApplyFlag(s, c.id, c.value);
    EXPECT_EQ(error.rfind(c.expected, 0), 0u)
        << "value " << (c.value ? c.value : "nullptr") << " gave: " << error;
  }
}

TEST(ElasticFlags, SubFlagsNeedElastic) {
  ElasticSettings s;
  ASSERT_EQ(ApplyFlag(s, FlagId::kEst, "4"), "");
  EXPECT_EQ(CheckConsistency(s),
            "elastic: --elastic-est needs --elastic (add --elastic, or drop --elastic-est)");
}

TEST(ElasticFlags, TensorParallelNeedsStatistical) {
  ElasticSettings s;
  s.elastic = true;
  s.plan = Plan::kTp;
  EXPECT_NE(CheckConsistency(s).find("--elastic-plan=tp is not bitwise reproducible under "
                                     "--elastic-determinism=d1"),
            std::string::npos);
  s.determinism = Determinism::kStatistical;
  EXPECT_EQ(CheckConsistency(s), "");
}

TEST(ElasticFlags, EnvironmentFillsOnlyMissingFlags) {
  std::map<std::string, std::string> env = {{"SLURM_ELASTIC", "1"},
                                            {"SLURM_ELASTIC_EST", "16"},
                                            {"SLURM_ELASTIC_PLAN", "ga"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ElasticSettings s;
  ASSERT_EQ(ApplyFlag(s, FlagId::kEst, "4"), "");
  EXPECT_EQ(ApplyEnvironmentFallback(s, getenv), "");
  EXPECT_TRUE(s.elastic);
  EXPECT_EQ(s.est, 4);  // the command line wins
  EXPECT_EQ(s.plan, Plan::kGa);

  env["SLURM_ELASTIC_CLASS"] = "platinum";
  ElasticSettings t;
  EXPECT_EQ(ApplyEnvironmentFallback(t, getenv),
            "elastic: SLURM_ELASTIC_CLASS (read because --elastic-class was not given): "
            "invalid value \"platinum\": expected one of guaranteed, best-effort, background");
  env.erase("SLURM_ELASTIC_CLASS");
  env["SLURM_ELASTIC"] = "yes";
  ElasticSettings u;
  EXPECT_EQ(ApplyEnvironmentFallback(u, getenv),
            "elastic: SLURM_ELASTIC=\"yes\": expected 1 or 0");
}

TEST(ElasticFlags, TaskEnvironmentCarriesGivenFlagsOnly) {
  ElasticSettings s;
  EXPECT_TRUE(TaskEnvironment(s).empty());
  s.elastic = true;
  s.est = 8;
  s.determinism = Determinism::kStatistical;
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(TaskEnvironment(s), (Env{{"SLURM_ELASTIC", "1"},
                                     {"SLURM_ELASTIC_EST", "8"},
                                     {"SLURM_ELASTIC_DETERMINISM", "statistical"}}));
}

}  // namespace
}  // namespace elastic::spank
