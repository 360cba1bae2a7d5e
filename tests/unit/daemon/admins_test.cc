// elasticd's admin set at start-up: root, plus SlurmUser when Slurm answers; root alone, with the
// reason logged, when it does not (U9).
#include "scheduler/daemon/admins.h"

#include <gtest/gtest.h>

#include "scheduler/daemon/daemon_state.h"
#include "scheduler/slurm/slurm_client.h"

namespace elastic::daemon {
namespace {

TEST(Admins, SlurmUserJoinsRoot) {
  DaemonState state;
  EXPECT_EQ(AddSlurmUser(state.admin_uids, [] { return uid_t{64030}; }), "");
  EXPECT_EQ(state.admin_uids, (std::set<uid_t>{0, 64030}));
  // SlurmUser=root (as on the local clusters): still root alone.
  DaemonState root_only;
  EXPECT_EQ(AddSlurmUser(root_only.admin_uids, [] { return uid_t{0}; }), "");
  EXPECT_EQ(root_only.admin_uids, (std::set<uid_t>{0}));
}

TEST(Admins, WithoutSlurmOnlyRootAndTheReasonIsReturned) {
  DaemonState state;
  const std::string warning = AddSlurmUser(state.admin_uids, []() -> uid_t {
    throw slurm::SlurmError("slurm_load_ctl_conf: Unable to contact slurm controller");
  });
  EXPECT_EQ(warning,
            "SlurmUser unknown, only root is admin: slurm_load_ctl_conf: Unable to "
            "contact slurm controller");
  EXPECT_EQ(state.admin_uids, (std::set<uid_t>{0}));
}

}  // namespace
}  // namespace elastic::daemon
