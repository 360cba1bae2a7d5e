// Tests for the submission-time resize check: which slurm.conf settings are refused, with what
// message, and which submissions are checked at all.
#include "spank/resize_support.h"

#include <gtest/gtest.h>

namespace elastic::spank {
namespace {

constexpr const char* kDbd = "accounting_storage/slurmdbd";

TEST(CheckResizeSupport, ReadyClusterIsAccepted) {
  EXPECT_EQ(CheckResizeSupport("permit_job_expansion", kDbd), "");
  EXPECT_EQ(CheckResizeSupport("bf_interval=5,permit_job_expansion,batch_sched_delay=0", kDbd), "");
  // slurmctld itself matches case-insensitively.
  EXPECT_EQ(CheckResizeSupport("Permit_Job_Expansion", kDbd), "");
}

TEST(CheckResizeSupport, MissingExpansionIsRefusedWithTheReasonAndTheFix) {
  for (const char* params : {"", "batch_sched_delay=0", "permit_job_expansio"}) {
    std::string error = CheckResizeSupport(params, kDbd);
    EXPECT_EQ(error.rfind("elastic: --elastic: this cluster cannot resize jobs: ", 0), 0u) << error;
    EXPECT_NE(error.find("SchedulerParameters lacks permit_job_expansion"), std::string::npos);
    EXPECT_NE(error.find("Requested operation not supported"), std::string::npos);
    EXPECT_NE(error.find("Submit without --elastic"), std::string::npos);
    EXPECT_NE(error.find("/etc/slurm-elastic/slurm.conf.elastic"), std::string::npos);
    EXPECT_EQ(error.find("AccountingStorageType"), std::string::npos) << error;
  }
}

TEST(CheckResizeSupport, AccountingWithoutSlurmdbdIsRefused) {
  for (const char* type : {"accounting_storage/none", "", "accounting_storage/slurmdbd2"}) {
    std::string error = CheckResizeSupport("permit_job_expansion", type);
    EXPECT_NE(error.find("AccountingStorageType is \"" + std::string(type) +
                         "\", not accounting_storage/slurmdbd"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("resized only once"), std::string::npos);
    EXPECT_EQ(error.find("permit_job_expansion"), std::string::npos) << error;
  }
}

TEST(CheckResizeSupport, BothProblemsAreNamedInOneMessage) {
  std::string error = CheckResizeSupport("", "accounting_storage/none");
  EXPECT_NE(error.find("lacks permit_job_expansion"), std::string::npos) << error;
  EXPECT_NE(error.find("; AccountingStorageType is \"accounting_storage/none\""), std::string::npos)
      << error;
}

TEST(ShouldCheckResizeSupport, OnlyNewElasticAllocations) {
  // elastic, inside_job, is_sbatch
  EXPECT_TRUE(ShouldCheckResizeSupport(true, false, true));   // sbatch from a login shell
  EXPECT_TRUE(ShouldCheckResizeSupport(true, false, false));  // salloc/srun outside a job
  EXPECT_TRUE(ShouldCheckResizeSupport(true, true, true));    // sbatch from inside a job
  // srun steps and expansion sallocs inside a running elastic job inherit --elastic.
  EXPECT_FALSE(ShouldCheckResizeSupport(true, true, false));
  for (bool inside : {false, true}) {
    for (bool sbatch : {false, true}) {
      EXPECT_FALSE(ShouldCheckResizeSupport(false, inside, sbatch));
    }
  }
}

}  // namespace
}  // namespace elastic::spank
