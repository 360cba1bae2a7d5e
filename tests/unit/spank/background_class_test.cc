// Submission side of --elastic-class=background: refusals, the control variable job_submit.lua
// reads, and the plugstack argument naming the background partition.
#include "spank/background_class.h"

#include <gtest/gtest.h>

#include "spank/plugin_args.h"

namespace elastic::spank {
namespace {

ElasticSettings WithClass(SlaClass sla_class) {
  ElasticSettings settings;
  settings.elastic = true;
  settings.sla_class = sla_class;
  return settings;
}

TEST(BackgroundClass, RefusedWhereTheClusterHasNoBackgroundPartition) {
  std::string error = CheckBackgroundClass(WithClass(SlaClass::kBackground), "", true, false);
  EXPECT_NE(error.find("elastic: --elastic-class=background: this cluster has no background "
                       "partition"), std::string::npos) << error;
  EXPECT_NE(error.find("background_partition="), std::string::npos) << error;
  EXPECT_NE(error.find("--elastic-class=best-effort"), std::string::npos) << error;
}

TEST(BackgroundClass, NewJobsFromSrunAreRefusedWithTheCommandsThatWork) {
  std::string error = CheckBackgroundClass(WithClass(SlaClass::kBackground), "bg", true, true);
  EXPECT_NE(error.find("submit background jobs with sbatch or salloc"), std::string::npos)
      << error;
}

TEST(BackgroundClass, AcceptedWithAPartitionAndNeverCheckedInsideARunningJob) {
  EXPECT_EQ(CheckBackgroundClass(WithClass(SlaClass::kBackground), "bg", true, false), "");
  // Steps and expansion sallocs inherit the flags: never refused, whatever the configuration.
  EXPECT_EQ(CheckBackgroundClass(WithClass(SlaClass::kBackground), "", false, true), "");
  EXPECT_EQ(CheckBackgroundClass(WithClass(SlaClass::kBackground), "", false, false), "");
}

TEST(BackgroundClass, OtherClassesAreUntouched) {
  for (SlaClass c : {SlaClass::kGuaranteed, SlaClass::kBestEffort}) {
    EXPECT_EQ(CheckBackgroundClass(WithClass(c), "", true, true), "");
    EXPECT_TRUE(BackgroundControlEnvironment(WithClass(c), "bg").empty());
  }
  EXPECT_EQ(CheckBackgroundClass(ElasticSettings{}, "", true, true), "");
  EXPECT_TRUE(BackgroundControlEnvironment(ElasticSettings{}, "bg").empty());
}

TEST(BackgroundClass, ABackgroundJobCarriesThePartitionForJobSubmitLua) {
  auto env = BackgroundControlEnvironment(WithClass(SlaClass::kBackground), "bg");
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].first, "ELASTIC_BACKGROUND_PARTITION");
  EXPECT_EQ(env[0].second, "bg");
  EXPECT_TRUE(BackgroundControlEnvironment(WithClass(SlaClass::kBackground), "").empty());
}

TEST(BackgroundClass, PartitionNames) {
  for (const char* ok : {"background", "bg-1", "low_prio.cpu", "B"}) {
    EXPECT_TRUE(IsPartitionName(ok)) << ok;
  }
  for (const char* bad : {"", "a b", "a,b", "a;b", "a\nb", "../x", "a=b", "\xc3\xa9"}) {
    EXPECT_FALSE(IsPartitionName(bad)) << bad;
  }
  EXPECT_FALSE(IsPartitionName(std::string(65, 'a')));
}

TEST(BackgroundClass, PlugstackArgumentIsOffByDefaultAndValidated) {
  EXPECT_EQ(ParsePluginArgs({}).args.background_partition, "");
  auto parsed = ParsePluginArgs({"background_partition=background"});
  EXPECT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.args.background_partition, "background");
  for (const char* bad : {"background_partition=", "background_partition=a,b",
                          "background_partition=/abs"}) {
    auto refused = ParsePluginArgs({bad});
    EXPECT_NE(refused.error.find("expected a Slurm partition name"), std::string::npos)
        << bad << " gave: " << refused.error;
  }
}

}  // namespace
}  // namespace elastic::spank
