// The libslurm adapter against a real 4-node cluster: ReadSlurmView sees drained nodes, a
// running and a pending job (with Slurm's backfill plan) and a reservation as scontrol does;
// SetAdminComment shows in `scontrol show job`; SlurmUserId is the cluster's SlurmUser.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "scheduler/slurm/slurm_client.h"
#include "scheduler/slurm/slurm_records.h"
#include "tests/common/local_cluster.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

using policy::SlurmJob;
using policy::SlurmJobState;
using policy::SlurmView;
using Names = std::vector<std::string>;

class SlurmReader : public ClusterSuite {
 protected:
  static void SetUpTestSuite() {
    LocalCluster::Options options;
    options.with_plugin = false;
    options.gpus_per_node = 2;  // stand-ins: what elasticd reads of GPUs (gres) is real
    StartSuiteCluster(options);
    // libslurm in this process reads the cluster's slurm.conf on first use.
    setenv("SLURM_CONF", cluster().Export("SLURM_CONF").c_str(), 1);
  }

  static const SlurmJob* FindJob(const SlurmView& view, std::uint32_t id) {
    for (const SlurmJob& job : view.jobs) {
      if (job.job_id == id) return &job;
    }
    return nullptr;
  }
  // Reads views until `done` holds or `timeout_s` passes; returns the last view.
  template <typename Done>
  static SlurmView ReadUntil(Done done, int timeout_s) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    SlurmView view = slurm::ReadSlurmView();
    while (!done(view) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      view = slurm::ReadSlurmView();
    }
    return view;
  }
  std::uint32_t Submit(const std::string& args) {
    CommandResult r = cluster().Run("sbatch --parsable " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return static_cast<std::uint32_t>(std::strtoul(r.output.c_str(), nullptr, 10));
  }
};

TEST_F(SlurmReader, NodesWithPartitionsAndDrainedNodeUnavailable) {
  ASSERT_EQ(
      cluster().Run("scontrol update NodeName=n4 State=DRAIN Reason=slurm_reader_test").exit_code,
      0);
  SlurmView view = slurm::ReadSlurmView();
  ASSERT_EQ(view.nodes.size(), 4u);
  EXPECT_GT(view.now, 0);
  for (int i = 0; i < 4; ++i) {
    const policy::SlurmNode& node = view.nodes[i];
    EXPECT_EQ(node.name, "n" + std::to_string(i + 1));
    EXPECT_EQ(node.cpus, 4);
    EXPECT_EQ(node.alloc_cpus, 0);
    EXPECT_EQ(node.partitions, Names{"main"});
    EXPECT_EQ(node.devices, 2) << node.name;  // gres gpu:2
    EXPECT_EQ(node.available, i < 3) << node.name;
    EXPECT_EQ(node.idle(), i < 3) << node.name;
  }
  ASSERT_EQ(cluster().Run("scontrol update NodeName=n4 State=RESUME").exit_code, 0);
  view = ReadUntil([](const SlurmView& v) { return v.nodes[3].available; }, 30);
  EXPECT_TRUE(view.nodes[3].idle());
}

// The GPUs each running job holds, from Slurm's own record (its gres total): one of n1's two,
// both of a node, none for a job that asked for no gres. elasticd grows only jobs that hold
// every GPU of their nodes (resize_decision.h).
TEST_F(SlurmReader, RunningJobsGpusFromTheirGres) {
  std::uint32_t one = Submit("-N 1 -n 1 --gres=gpu:1 -t 5 -J one --wrap 'sleep 300'");
  std::uint32_t both = Submit("-N 1 -n 1 --gres=gpu:2 -t 5 -J both --wrap 'sleep 300'");
  std::uint32_t none = Submit("-N 1 -n 1 -t 5 -J none --wrap 'sleep 300'");
  SlurmView view = ReadUntil(
      [&](const SlurmView& v) {
        for (std::uint32_t id : {one, both, none}) {
          const SlurmJob* job = FindJob(v, id);
          if (job == nullptr || job->state != SlurmJobState::kRunning) return false;
        }
        return true;
      },
      30);
  ASSERT_NE(FindJob(view, one), nullptr);
  ASSERT_NE(FindJob(view, both), nullptr);
  ASSERT_NE(FindJob(view, none), nullptr);
  EXPECT_EQ(FindJob(view, one)->gpus, 1);
  EXPECT_EQ(FindJob(view, both)->gpus, 2);
  EXPECT_EQ(FindJob(view, none)->gpus, 0);
  for (std::uint32_t id : {one, both, none}) {
    EXPECT_EQ(cluster().Run("scancel " + std::to_string(id)).exit_code, 0);
  }
  ReadUntil(
      [&](const SlurmView& v) {
        for (const policy::SlurmNode& node : v.nodes) {
          if (!node.idle()) return false;
        }
        return true;
      },
      60);
}

TEST_F(SlurmReader, RunningAndPendingJobsAndAReservation) {
  std::uint32_t running = Submit("-N 4 --exclusive -t 5 -J running --wrap 'sleep 300'");
  ReadUntil(
      [&](const SlurmView& v) {
        const SlurmJob* job = FindJob(v, running);
        return job != nullptr && job->state == SlurmJobState::kRunning;
      },
      30);
  std::uint32_t pending = Submit("-N 4 --exclusive -t 5 -J waiting --wrap 'sleep 300'");
  ASSERT_EQ(cluster()
                .Run("scontrol create reservation ReservationName=maint StartTime=now+2hours "
                     "Duration=30 Nodes=n[3-4] Users=root")
                .exit_code,
            0);
  // Slurm's plan for the pending job (expected start, nodes) comes from the backfill pass.
  SlurmView view = ReadUntil(
      [&](const SlurmView& v) {
        const SlurmJob* job = FindJob(v, pending);
        return job != nullptr && !job->reason.empty() && job->reason != "None" &&
               job->start_time > 0 && !job->sched_nodes.empty();
      },
      90);

  const SlurmJob* run = FindJob(view, running);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->state, SlurmJobState::kRunning);
  EXPECT_EQ(run->name, "running");
  EXPECT_EQ(run->partition, "main");
  EXPECT_EQ(run->uid, 0u);
  EXPECT_EQ(run->nodes, (Names{"n1", "n2", "n3", "n4"}));
  EXPECT_EQ(run->batch_host, "n1");
  EXPECT_EQ(run->min_nodes, 4);
  EXPECT_TRUE(run->exclusive);
  EXPECT_FALSE(run->finished);
  EXPECT_GT(run->start_time, view.now - 120);
  EXPECT_LE(run->start_time, view.now);
  EXPECT_EQ(run->end_time, run->start_time + 300);
  for (const auto& node : view.nodes) {
    EXPECT_EQ(node.alloc_cpus, 4) << node.name;
    EXPECT_FALSE(node.available) << node.name;
  }

  const SlurmJob* wait = FindJob(view, pending);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->state, SlurmJobState::kPending);
  EXPECT_TRUE(wait->reason == "Resources" || wait->reason == "Priority") << wait->reason;
  EXPECT_TRUE(slurm::WaitsForNodes(*wait));
  EXPECT_EQ(wait->min_nodes, 4);
  EXPECT_TRUE(wait->nodes.empty());
  EXPECT_EQ(wait->start_time, run->end_time);  // starts when the running job must end
  EXPECT_EQ(wait->sched_nodes, (Names{"n1", "n2", "n3", "n4"}));
  EXPECT_LT(view.jobs.front().job_id, view.jobs.back().job_id);

  ASSERT_EQ(view.reservations.size(), 1u);
  const policy::SlurmReservation& resv = view.reservations[0];
  EXPECT_EQ(resv.name, "maint");
  EXPECT_EQ(resv.nodes, (Names{"n3", "n4"}));
  EXPECT_EQ(resv.users, Names{"root"});
  EXPECT_NEAR(static_cast<double>(resv.start_time), static_cast<double>(view.now + 7200), 120);
  EXPECT_EQ(resv.end_time, resv.start_time + 30 * 60);

  // AdminComment: written through libslurm, visible to scontrol and in the next view.
  const std::string comment = "elastic:est=8,nodes=4/1-4,plan=dp,gen=1";
  EXPECT_EQ(slurm::SetAdminComment(running, comment), "");
  CommandResult shown = cluster().Run("scontrol show job " + std::to_string(running));
  EXPECT_NE(shown.output.find("AdminComment=" + comment), std::string::npos) << shown.output;
  EXPECT_EQ(FindJob(slurm::ReadSlurmView(), running)->admin_comment, comment);

  // Once cancelled, both jobs are still listed (MinJobAge) but no longer unfinished.
  cluster().Run("scancel " + std::to_string(running) + " " + std::to_string(pending));
  cluster().Run("scontrol delete ReservationName=maint");
  view = ReadUntil(
      [&](const SlurmView& v) {
        auto live = slurm::UnfinishedJobIds(v);
        return !live.contains(running) && !live.contains(pending);
      },
      60);
  ASSERT_NE(FindJob(view, running), nullptr);
  EXPECT_TRUE(FindJob(view, running)->finished);
  EXPECT_EQ(FindJob(view, running)->state, SlurmJobState::kOther);
  EXPECT_TRUE(FindJob(view, pending)->finished);
  EXPECT_TRUE(view.reservations.empty());
}

TEST_F(SlurmReader, AdminCommentOnUnknownJobIsAnError) {
  std::string error = slurm::SetAdminComment(4'000'000, "elastic:x");
  EXPECT_NE(error.find("slurm_update_job(JobId=4000000 AdminComment) failed: Invalid job id"),
            std::string::npos)
      << error;
}

TEST_F(SlurmReader, SlurmUserIsRoot) {
  EXPECT_EQ(slurm::SlurmUserId(), 0u);  // local-cluster.sh runs slurmctld as SlurmUser=root
}

}  // namespace
}  // namespace elastic::testing
