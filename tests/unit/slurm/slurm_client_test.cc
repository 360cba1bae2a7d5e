// The libslurm client without a cluster: a missing slurm.conf is reported as an error (libslurm
// itself would retry for 60 s and then exit the process). Its own binary, so libslurm is never
// initialized here before the test sets SLURM_CONF.
#include "scheduler/slurm/slurm_client.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace elastic::slurm {
namespace {

constexpr const char* kMissing = "/nonexistent/slurm-elastic-test/slurm.conf";

TEST(SlurmClient, MissingSlurmConfIsAnErrorNotAnExit) {
  ASSERT_EQ(setenv("SLURM_CONF", kMissing, 1), 0);
  const std::string expected = std::string("slurm: no readable slurm.conf (SLURM_CONF=") + kMissing;
  try {
    ReadSlurmView();
    ADD_FAILURE() << "ReadSlurmView succeeded without a slurm.conf";
  } catch (const SlurmError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
  }
  EXPECT_THROW(SlurmUserId(), SlurmError);
  EXPECT_EQ(SetAdminComment(1, "elastic:x").rfind(expected, 0), 0u);
}

}  // namespace
}  // namespace elastic::slurm
