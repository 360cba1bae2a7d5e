// Tests for the libslurm record conversion: node availability by state flags, job states,
// hostlists, reason names, and whole job/node/reservation records built by hand (no cluster).
#include "scheduler/slurm/slurm_records.h"

#include <gtest/gtest.h>

namespace elastic::slurm {
namespace {

using policy::SlurmJobState;
using Names = std::vector<std::string>;

TEST(NodeStateAvailable, IdleAndMixedAreUsable) {
  EXPECT_TRUE(NodeStateAvailable(NODE_STATE_IDLE, 4, 0));
  EXPECT_TRUE(NodeStateAvailable(NODE_STATE_MIXED, 4, 2));
  // slurmctld reports a partly used node as ALLOCATED: usable while CPUs are left.
  EXPECT_TRUE(NodeStateAvailable(NODE_STATE_ALLOCATED, 4, 3));
  EXPECT_FALSE(NodeStateAvailable(NODE_STATE_ALLOCATED, 4, 4));
  // Harmless flags: in a reservation, planned by backfill, cloud node.
  EXPECT_TRUE(NodeStateAvailable(NODE_STATE_IDLE | NODE_STATE_RES, 4, 0));
  EXPECT_TRUE(NodeStateAvailable(NODE_STATE_IDLE | NODE_STATE_PLANNED, 4, 0));
  EXPECT_TRUE(NodeStateAvailable(NODE_STATE_IDLE | NODE_STATE_CLOUD, 4, 0));
}

TEST(NodeStateAvailable, UnusableStatesAndFlags) {
  for (std::uint32_t base : {NODE_STATE_DOWN, NODE_STATE_UNKNOWN, NODE_STATE_FUTURE}) {
    EXPECT_FALSE(NodeStateAvailable(base, 4, 0)) << base;
  }
  const std::vector<std::pair<std::uint32_t, const char*>> flags = {
      {NODE_STATE_DRAIN, "DRAIN"},
      {NODE_STATE_FAIL, "FAIL"},
      {NODE_STATE_MAINT, "MAINT"},
      {NODE_STATE_POWERED_DOWN, "POWERED_DOWN"},
      {NODE_STATE_POWER_DOWN, "POWER_DOWN"},
      {NODE_STATE_POWERING_DOWN, "POWERING_DOWN"},
      {NODE_STATE_POWERING_UP, "POWERING_UP"},
      {NODE_STATE_NO_RESPOND, "NOT_RESPONDING"},
      {NODE_STATE_COMPLETING, "COMPLETING"},
      {NODE_STATE_REBOOT_ISSUED, "REBOOT_ISSUED"},
  };
  for (const auto& [flag, name] : flags) {
    EXPECT_FALSE(NodeStateAvailable(NODE_STATE_IDLE | flag, 4, 0)) << "IDLE+" << name;
    EXPECT_FALSE(NodeStateAvailable(NODE_STATE_MIXED | flag, 4, 1)) << "MIXED+" << name;
  }
}

TEST(JobState, BaseStateAndFinished) {
  EXPECT_EQ(JobStateOf(JOB_PENDING), SlurmJobState::kPending);
  EXPECT_EQ(JobStateOf(JOB_RUNNING), SlurmJobState::kRunning);
  EXPECT_EQ(JobStateOf(JOB_RUNNING | JOB_RESIZING), SlurmJobState::kRunning);
  EXPECT_EQ(JobStateOf(JOB_SUSPENDED), SlurmJobState::kOther);
  EXPECT_EQ(JobStateOf(JOB_COMPLETE), SlurmJobState::kOther);
  // Requeued, its last run still ending: not waiting yet (Slurm rewrites its record after).
  EXPECT_EQ(JobStateOf(JOB_PENDING | JOB_COMPLETING), SlurmJobState::kOther);

  EXPECT_FALSE(JobFinished(JOB_PENDING));
  EXPECT_FALSE(JobFinished(JOB_RUNNING | JOB_RESIZING));
  EXPECT_FALSE(JobFinished(JOB_SUSPENDED));
  EXPECT_FALSE(JobFinished(JOB_COMPLETE | JOB_COMPLETING));  // still cleaning up on its nodes
  EXPECT_TRUE(JobFinished(JOB_COMPLETE));
  EXPECT_TRUE(JobFinished(JOB_CANCELLED));
  EXPECT_TRUE(JobFinished(JOB_TIMEOUT));
  EXPECT_TRUE(JobFinished(JOB_FAILED));
}

TEST(Lists, HostlistsAndCommaLists) {
  EXPECT_EQ(ExpandHostlist("n[1-3],m7"), (Names{"n1", "n2", "n3", "m7"}));
  EXPECT_EQ(ExpandHostlist("n[09-11]"), (Names{"n09", "n10", "n11"}));
  EXPECT_EQ(ExpandHostlist(""), Names{});
  EXPECT_EQ(ExpandHostlist(nullptr), Names{});
  EXPECT_EQ(SplitCommaList("a,b,,c"), (Names{"a", "b", "c"}));
  EXPECT_EQ(SplitCommaList("only"), (Names{"only"}));
  EXPECT_EQ(SplitCommaList(""), Names{});
  EXPECT_EQ(SplitCommaList(nullptr), Names{});
}

TEST(Reasons, SlurmNamesAndWhichWaitForNodes) {
  EXPECT_EQ(ReasonName(WAIT_RESOURCES), "Resources");
  EXPECT_EQ(ReasonName(WAIT_PRIORITY), "Priority");
  EXPECT_EQ(ReasonName(WAIT_DEPENDENCY), "Dependency");
  EXPECT_EQ(ReasonName(WAIT_HELD_USER), "JobHeldUser");
  EXPECT_EQ(ReasonName(WAIT_TIME), "BeginTime");
  EXPECT_EQ(ReasonName(WAIT_NO_REASON), "None");

  policy::SlurmJob job;
  job.state = SlurmJobState::kPending;
  for (const char* reason : {"Resources", "Priority"}) {
    job.reason = reason;
    EXPECT_TRUE(WaitsForNodes(job)) << reason;
  }
  for (const char* reason : {"Dependency", "JobHeldUser", "BeginTime", "None"}) {
    job.reason = reason;
    EXPECT_FALSE(WaitsForNodes(job)) << reason;
  }
  job.state = SlurmJobState::kRunning;
  job.reason = "Resources";
  EXPECT_FALSE(WaitsForNodes(job));
}

TEST(ToNode, CopiesNameCpusPartitionsAndAvailability) {
  node_info_t node{};
  node.name = const_cast<char*>("n2");
  node.partitions = const_cast<char*>("main,gpu");
  node.cpus = 8;
  node.node_state = NODE_STATE_ALLOCATED;
  policy::SlurmNode out = ToNode(node, 8);
  EXPECT_EQ(out.name, "n2");
  EXPECT_EQ(out.partitions, (Names{"main", "gpu"}));
  EXPECT_EQ(out.cpus, 8);
  EXPECT_EQ(out.alloc_cpus, 8);
  EXPECT_FALSE(out.available);
  EXPECT_TRUE(ToNode(node, 2).available);
  EXPECT_FALSE(ToNode(node, 2).idle());
  node.node_state = NODE_STATE_IDLE;
  EXPECT_TRUE(ToNode(node, 0).idle());
}

// A node's devices are its GPUs from the gres string; no gres (null) or no GPU gres is 1.
TEST(ToNode, CountsTheGresGpusAsDevices) {
  node_info_t node{};
  node.name = const_cast<char*>("g1");
  EXPECT_EQ(ToNode(node, 0).devices, 1);
  node.gres = const_cast<char*>("gpu:a100:4(S:0-1),mps:400");
  EXPECT_EQ(ToNode(node, 0).devices, 4);
  node.gres = const_cast<char*>("mps:400");
  EXPECT_EQ(ToNode(node, 0).devices, 1);
  node.gres = const_cast<char*>("gpu:a100:4(S:0-1");
  EXPECT_EQ(ToNode(node, 0).devices, 1);
}

// What NodeTypeOf reads: the gres GPU type and the node's features.
TEST(ToNode, GpuTypeAndFeatures) {
  node_info_t node{};
  node.name = const_cast<char*>("g1");
  EXPECT_EQ(ToNode(node, 0).gpu_type, "");
  EXPECT_TRUE(ToNode(node, 0).features.empty());
  node.gres = const_cast<char*>("gpu:a100:4(S:0-1),mps:400");
  node.features = const_cast<char*>("ib,fast");
  const policy::SlurmNode out = ToNode(node, 0);
  EXPECT_EQ(out.gpu_type, "a100");
  EXPECT_EQ(out.features, (std::vector<std::string>{"ib", "fast"}));
}

TEST(ToJob, RunningJob) {
  slurm_job_info_t job{};
  job.job_id = 42;
  job.user_id = 1000;
  job.name = const_cast<char*>("train");
  job.partition = const_cast<char*>("main");
  job.job_state = JOB_RUNNING;
  job.nodes = const_cast<char*>("n[3,1-2]");
  job.batch_host = const_cast<char*>("n1");
  job.num_nodes = 3;
  job.max_nodes = 4;
  job.priority = 77;
  job.start_time = 1000;
  job.end_time = 1600;
  job.time_limit = 10;
  job.shared = JOB_SHARED_NONE;
  job.admin_comment = const_cast<char*>("elastic:gen=1");
  job.state_reason = WAIT_RESOURCES;  // stale; a running job has no pending reason
  policy::SlurmJob out = ToJob(job);
  EXPECT_EQ(out.job_id, 42u);
  EXPECT_EQ(out.uid, 1000u);
  EXPECT_EQ(out.name, "train");
  EXPECT_EQ(out.partition, "main");
  EXPECT_EQ(out.state, SlurmJobState::kRunning);
  EXPECT_EQ(out.nodes, (Names{"n1", "n2", "n3"}));
  EXPECT_EQ(out.batch_host, "n1");
  EXPECT_EQ(out.min_nodes, 3);
  EXPECT_EQ(out.max_nodes, 4);
  EXPECT_EQ(out.priority, 77u);
  EXPECT_EQ(out.start_time, 1000);
  EXPECT_EQ(out.end_time, 1600);
  EXPECT_EQ(out.admin_comment, "elastic:gen=1");
  EXPECT_EQ(out.reason, "");
  EXPECT_TRUE(out.exclusive);
  EXPECT_FALSE(out.finished);

  job.time_limit = INFINITE;
  job.shared = JOB_SHARED_OK;
  out = ToJob(job);
  EXPECT_EQ(out.end_time, 0);
  EXPECT_FALSE(out.exclusive);
}

// The GPUs a running job holds, from its gres total: none without one, unknown when malformed
// (and when pending).
TEST(ToJob, AllocatedGpusFromTheGresTotal) {
  slurm_job_info_t job{};
  job.job_state = JOB_RUNNING;
  job.nodes = const_cast<char*>("n1");
  EXPECT_EQ(ToJob(job).gpus, 0);
  job.gres_total = const_cast<char*>("gpu:2");
  EXPECT_EQ(ToJob(job).gpus, 2);
  job.gres_total = const_cast<char*>("gpu:a100:8");
  EXPECT_EQ(ToJob(job).gpus, 8);
  job.gres_total = const_cast<char*>("mps:100");
  EXPECT_EQ(ToJob(job).gpus, 0);
  job.gres_total = const_cast<char*>("gpu:x:");
  EXPECT_EQ(ToJob(job).gpus, -1);
  job.job_state = JOB_PENDING;
  job.gres_total = const_cast<char*>("gpu:2");
  EXPECT_EQ(ToJob(job).gpus, -1);
}

// Whether Slurm may requeue the job: a grow by requeue of a --no-requeue job would only fail.
TEST(ToJob, RequeueFromTheJobsOption) {
  slurm_job_info_t job{};
  job.job_state = JOB_RUNNING;
  job.nodes = const_cast<char*>("n1");
  EXPECT_FALSE(ToJob(job).requeue);
  job.requeue = 1;
  EXPECT_TRUE(ToJob(job).requeue);
  job.restart_cnt = 2;
  EXPECT_EQ(ToJob(job).restarts, 2);
}

TEST(ToJob, PendingJobWithBackfillPlan) {
  slurm_job_info_t job{};
  job.job_id = 43;
  job.partition = const_cast<char*>("gpu,main");
  job.job_state = JOB_PENDING;
  job.state_reason = WAIT_PRIORITY;
  job.num_nodes = 2;
  job.max_nodes = NO_VAL;
  job.start_time = 5000;
  job.sched_nodes = const_cast<char*>("n[4-5]");
  job.shared = NO_VAL16;
  job.submit_time = 4000;
  job.time_limit = 90;                 // minutes
  job.nice = NICE_OFFSET + 1'000'007;  // job_submit.lua's nice on the owner's 7
  policy::SlurmJob out = ToJob(job);
  EXPECT_EQ(out.submit_time, 4000);
  EXPECT_EQ(out.time_limit_s, 5400);
  EXPECT_EQ(out.nice, 1'000'007);
  EXPECT_EQ(out.state, SlurmJobState::kPending);
  EXPECT_EQ(out.partition, "gpu");
  EXPECT_EQ(out.reason, "Priority");
  EXPECT_EQ(out.min_nodes, 2);
  EXPECT_EQ(out.max_nodes, 0);
  EXPECT_EQ(out.start_time, 5000);
  EXPECT_EQ(out.sched_nodes, (Names{"n4", "n5"}));
  EXPECT_TRUE(out.nodes.empty());
  EXPECT_EQ(out.name, "");  // null strings become empty
  EXPECT_EQ(out.account, "");
  EXPECT_EQ(out.sla_class, SlaClass::kBestEffort);  // no record: best-effort
  EXPECT_FALSE(out.elastic);                        // ... and rigid
  EXPECT_FALSE(out.exclusive);
}

TEST(ToJob, TimeLimitsWithoutALimitAreZero) {
  EXPECT_EQ(TimeLimitSeconds(INFINITE), 0);
  EXPECT_EQ(TimeLimitSeconds(NO_VAL), 0);
  EXPECT_EQ(TimeLimitSeconds(1), 60);
}

// The account and job_submit.lua's record (class, and that the job is elastic): what quotas and
// preemption read.
TEST(ToJob, AccountAndTheRecordedClass) {
  slurm_job_info_t job{};
  job.job_id = 44;
  job.job_state = JOB_PENDING;
  job.account = const_cast<char*>("physics");
  job.admin_comment = const_cast<char*>("elastic:nodes=0/4-4,class=guaranteed");
  policy::SlurmJob out = ToJob(job);
  EXPECT_EQ(out.account, "physics");
  EXPECT_EQ(out.sla_class, SlaClass::kGuaranteed);
  EXPECT_TRUE(out.elastic);  // job_submit.lua's bounds record: submitted with --elastic
  job.admin_comment = const_cast<char*>("elastic:est=8,nodes=2/1-4,class=gold,last=0");
  EXPECT_EQ(ToJob(job).sla_class, SlaClass::kBestEffort);  // not a class word
  EXPECT_TRUE(ToJob(job).elastic);
  job.admin_comment = const_cast<char*>("class=guaranteed");  // not an elastic: record
  EXPECT_EQ(ToJob(job).sla_class, SlaClass::kBestEffort);
  EXPECT_FALSE(ToJob(job).elastic);
}

TEST(ToJob, FinishedJobIsNotLive) {
  slurm_job_info_t job{};
  job.job_id = 7;
  job.job_state = JOB_COMPLETE | JOB_COMPLETING;
  job.nodes = const_cast<char*>("n1");
  policy::SlurmView view;
  view.jobs.push_back(ToJob(job));
  job.job_id = 8;
  job.job_state = JOB_COMPLETE;
  view.jobs.push_back(ToJob(job));
  job.job_id = 9;
  job.job_state = JOB_PENDING;
  view.jobs.push_back(ToJob(job));
  EXPECT_EQ(view.jobs[1].state, SlurmJobState::kOther);
  EXPECT_TRUE(view.jobs[1].finished);
  EXPECT_EQ(UnfinishedJobIds(view), (std::set<std::uint32_t>{7, 9}));
}

TEST(ToReservation, ExpandsNodesAndSplitsUsers) {
  reserve_info_t resv{};
  resv.name = const_cast<char*>("maint");
  resv.start_time = 100;
  resv.end_time = 200;
  resv.node_list = const_cast<char*>("n[2-3]");
  resv.users = const_cast<char*>("alice,bob");
  policy::SlurmReservation out = ToReservation(resv, {"n1", "n2", "n3", "n4"});
  EXPECT_EQ(out.name, "maint");
  EXPECT_EQ(out.start_time, 100);
  EXPECT_EQ(out.end_time, 200);
  EXPECT_EQ(out.nodes, (Names{"n2", "n3"}));
  EXPECT_EQ(out.users, (Names{"alice", "bob"}));
  EXPECT_TRUE(out.accounts.empty());

  resv.node_list = const_cast<char*>("ALL");
  resv.users = nullptr;
  resv.accounts = const_cast<char*>("physics");
  out = ToReservation(resv, {"n1", "n2"});
  EXPECT_EQ(out.nodes, (Names{"n1", "n2"}));
  EXPECT_TRUE(out.users.empty());
  EXPECT_EQ(out.accounts, (Names{"physics"}));
}

}  // namespace
}  // namespace elastic::slurm
