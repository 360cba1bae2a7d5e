// Security claims that rest on Slurm itself, on a real cluster with job_submit.lua and elasticd
// (docs/security.md §2.3, §5): what job_submit.lua records and changes, that users cannot write
// AdminComment, that Slurm operators and administrators get no admin rights from elasticd, and
// that elasticd's one Slurm write changes nothing but AdminComment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "scheduler/slurm/slurm_client.h"
#include "tests/common/elasticd_cluster.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

const std::string kAsNobody = "setpriv --reuid=nobody --regid=nogroup --clear-groups ";

class SecuritySlurm : public ElasticdClusterSuite {
 protected:
  // elasticd orders no resize by itself here ("1h"): its cycles change nothing on their own.
  static void SetUpTestSuite() {
    LocalCluster::Options options;
    options.resize_interval = "1h";
    StartWithElasticd(options);
  }

  void SetUp() override {
    ElasticdClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SetAdminLevel("none");
  }
  void TearDown() override {
    if (!IsSkipped()) cluster().Run("scancel -u root; scancel -u nobody");
  }

  // `sbatch --parsable ARGS` run by nobody itself (not root's --uid=); the job id.
  static std::string SubmitAsNobody(const std::string& args) {
    CommandResult r = cluster().Run(kAsNobody + "sbatch --parsable " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output.substr(0, r.output.find_first_of(";\n"));
  }
  // The job's record as `scontrol show job -o` prints it: field name -> value.
  static std::map<std::string, std::string> JobFields(const std::string& job) {
    std::map<std::string, std::string> fields;
    std::istringstream words(cluster().Run("scontrol show job -o " + job).output);
    std::string word;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    return fields;
  }
  static bool WaitForState(const std::string& job, const std::string& state, int timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    while (std::chrono::steady_clock::now() < deadline) {
      if (cluster().Run("squeue -h -j " + job + " -o %T").output == state + "\n") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  // Gives nobody a Slurm AdminLevel (none, operator, administrator) in slurmdbd.
  static void SetAdminLevel(const std::string& level) {
    CommandResult r = cluster().Run(
        "sacctmgr -i add user nobody account=elastic >/dev/null 2>&1; "
        "sacctmgr -i modify user nobody set adminlevel=" +
        level);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
};

// U4: job_submit.lua records -N MIN-MAX and the class for --elastic submissions only — a plain user's
// included — skips expansion jobs (salloc --dependency=expand:, which carry --elastic too) and
// refuses none of them.
TEST_F(SecuritySlurm, JobSubmitLuaRecordsBoundsOfElasticJobsOnlyAndSkipsExpansions) {
  const std::string held = " --hold -o /dev/null --wrap true";
  const std::string elastic = Submit("-N 1-3 --elastic" + held);
  EXPECT_EQ(AdminComment(elastic), "elastic:nodes=0/1-3,class=best-effort");
  const std::string fixed = Submit("-N 2 --elastic" + held);
  EXPECT_EQ(AdminComment(fixed), "elastic:nodes=0/2-2,class=best-effort");
  const std::string plain = Submit("-N 1-3" + held);
  EXPECT_EQ(AdminComment(plain), "");
  const std::string users = SubmitAsNobody("-N 2-4 --elastic" + held);
  ASSERT_FALSE(users.empty());
  EXPECT_EQ(JobFields(users)["UserId"], "nobody(65534)");
  EXPECT_EQ(AdminComment(users), "elastic:nodes=0/2-4,class=best-effort");
  // --elastic-class is recorded with the bounds: elasticd serves and preempts by this record.
  const std::string guaranteed = SubmitAsNobody("-N 2 --elastic --elastic-class=guaranteed" + held);
  EXPECT_EQ(AdminComment(guaranteed), "elastic:nodes=0/2-2,class=guaranteed");

  const std::string running =
      Submit("-N 1-2 --elastic --exclusive -o /dev/null --wrap 'sleep 120'");
  ASSERT_TRUE(WaitForState(running, "RUNNING", 30));
  CommandResult expansion = cluster().Run(
      "salloc --no-shell -N 1 --exclusive --elastic "
      "--dependency=expand:" +
      running + " 2>&1");
  ASSERT_EQ(expansion.exit_code, 0) << expansion.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(expansion.output, m, std::regex("allocation (\\d+)")))
      << expansion.output;
  const std::string expander = m[1].str();
  EXPECT_EQ(AdminComment(expander), "");
  EXPECT_EQ(JobFields(expander)["Nice"], "0");  // an expansion job keeps its priority too
  EXPECT_EQ(AdminComment(running).rfind("elastic:", 0), 0u) << AdminComment(running);
  // The same salloc without the expand: dependency is recorded (so the skip above is the rule's).
  cluster().Run("scancel " + expander);
  CommandResult alone = cluster().Run("salloc --no-shell -N 1 --elastic 2>&1");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  ASSERT_TRUE(std::regex_search(alone.output, m, std::regex("allocation (\\d+)"))) << alone.output;
  EXPECT_EQ(AdminComment(m[1].str()), "elastic:nodes=0/1-1,class=best-effort");
}

// U4: job_submit.lua sets admin_comment and the nice value and nothing else: an --elastic job's
// record equals the same submission's without --elastic in every field but the job's id, times,
// AdminComment and Nice, which is the submitter's own --nice plus ELASTIC_NICE.
TEST_F(SecuritySlurm, JobSubmitLuaChangesNothingButAdminCommentAndNice) {
  const std::string args = "-N 1-3 --hold -J same -o /dev/null --comment=c --nice=7 --wrap true";
  const std::string plain = Submit(args);
  const std::string elastic = Submit("--elastic " + args);
  std::map<std::string, std::string> a = JobFields(plain), b = JobFields(elastic);
  ASSERT_GT(a.size(), 30u);
  EXPECT_EQ(b["AdminComment"], "elastic:nodes=0/1-3,class=best-effort");
  EXPECT_EQ(a["Nice"], "7");
  EXPECT_EQ(b["Nice"], "1000007");
  const std::set<std::string> differ_anyway = {
      "JobId",     "SubmitTime", "EligibleTime", "AccrueTime", "LastSchedEval",
      "StartTime", "EndTime",    "AdminComment", "Deadline",   "Nice"};
  std::set<std::string> names;
  for (const auto& [name, value] : a) names.insert(name);
  for (const auto& [name, value] : b) names.insert(name);
  for (const std::string& name : names) {
    if (differ_anyway.contains(name)) continue;
    EXPECT_EQ(a[name], b[name]) << name << " differs between job " << plain << " and --elastic "
                                << elastic;
  }
}

// What the nice is for (docs/evaluation.md, "Elastic jobs yield Slurm's queue"): when the
// nodes free up, a rigid job submitted after an elastic one starts first; the elastic one starts
// once they free again. Without the nice, Slurm's FIFO order would start the elastic job first.
TEST_F(SecuritySlurm, AnElasticJobWaitsBehindARigidJobSubmittedAfterIt) {
  const std::string all =
      " --exclusive -N 4 -o /dev/null --wrap 'sleep " + std::to_string(ScaledSeconds(3)) + "'";
  const std::string holder = Submit(all);
  ASSERT_TRUE(WaitForState(holder, "RUNNING", 30));
  const std::string elastic = Submit("--elastic" + all);
  const std::string rigid = Submit(all);
  ASSERT_TRUE(WaitForState(rigid, "RUNNING", 60));
  EXPECT_EQ(cluster().Run("squeue -h -j " + elastic + " -o %T").output, "PENDING\n");
  ASSERT_TRUE(WaitForState(elastic, "RUNNING", 60));
}

// U5: AdminComment is for Slurm administrators only — a user cannot write it on their own job
// (Slurm's rule), so cannot widen the bounds job_submit.lua recorded; the same user may change
// the job's Comment.
TEST_F(SecuritySlurm, UsersCannotSetAdminCommentOnTheirOwnJobs) {
  const std::string job = SubmitAsNobody("-N 1-2 --elastic --hold -o /dev/null --wrap true");
  ASSERT_EQ(AdminComment(job), "elastic:nodes=0/1-2,class=best-effort");
  CommandResult widen = cluster().Run(kAsNobody + "scontrol update JobId=" + job +
                                      " AdminComment=elastic:nodes=0/1-64");
  EXPECT_NE(widen.exit_code, 0) << widen.output;
  EXPECT_NE(widen.output.find("Access/permission denied"), std::string::npos) << widen.output;
  EXPECT_EQ(AdminComment(job), "elastic:nodes=0/1-2,class=best-effort");
  CommandResult comment =
      cluster().Run(kAsNobody + "scontrol update JobId=" + job + " Comment=mine");
  EXPECT_EQ(comment.exit_code, 0) << comment.output;
  EXPECT_EQ(JobFields(job)["Comment"], "mine");
}

// U36: elasticd's admins are root and SlurmUser only. nobody made a Slurm operator (who may
// then change root's jobs), then a Slurm administrator (who may then write AdminComment), is
// still refused `resize` and a registered root job's status and deregistration.
TEST_F(SecuritySlurm, SlurmOperatorsAndAdministratorsGetNoAdminRightsFromElasticd) {
  const std::string job = Submit("-N 1-2 --elastic --exclusive -o /dev/null --wrap 'sleep 120'");
  ASSERT_TRUE(WaitForState(job, "RUNNING", 30));
  CommandResult reg = cluster().Run(
      ElasticdCli() + " request '{\"op\":\"register\",\"job_id\":" + job + ",\"ests\":2}'");
  ASSERT_EQ(reg.exit_code, 0) << reg.output;
  const std::string as_nobody = kAsNobody + ElasticdCli() + " ";

  for (const std::string level : {"operator", "administrator"}) {
    SCOPED_TRACE(level);
    ASSERT_NO_FATAL_FAILURE(SetAdminLevel(level));
    // Slurm's side: the level has reached slurmctld (the change is pushed by slurmdbd).
    const std::string probe =
        level == "operator" ? "Comment=op" : "AdminComment=elastic:nodes=0/1-2";
    bool granted = false;
    for (int i = 0; i < 50 && !granted; ++i) {
      granted =
          cluster().Run(kAsNobody + "scontrol update JobId=" + job + " " + probe).exit_code == 0;
      if (!granted) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_TRUE(granted) << "Slurm did not make nobody " << level;

    CommandResult resize = cluster().Run(as_nobody + "resize --job " + job + " --nodes 1");
    EXPECT_NE(resize.exit_code, 0) << resize.output;
    EXPECT_NE(resize.output.find("resize is an admin command (root or SlurmUser)"),
              std::string::npos)
        << resize.output;
    CommandResult peek = cluster().Run(as_nobody + "status --json");
    EXPECT_EQ(peek.exit_code, 0) << peek.output;
    EXPECT_EQ(peek.output.find("\"job_id\": " + job), std::string::npos) << peek.output;
    CommandResult drop =
        cluster().Run(as_nobody + "request '{\"op\":\"deregister\",\"job_id\":" + job + "}'");
    EXPECT_NE(drop.exit_code, 0) << drop.output;
    EXPECT_NE(drop.output.find("belongs to another user"), std::string::npos) << drop.output;
  }
  // root, for comparison: sees the job and may order it.
  CommandResult status = cluster().Run(ElasticdCli() + " status --json");
  EXPECT_NE(status.output.find("\"job_id\": " + job), std::string::npos) << status.output;
  CommandResult resize = cluster().Run(ElasticdCli() + " resize --job " + job + " --nodes 1");
  EXPECT_EQ(resize.output.find("admin command"), std::string::npos) << resize.output;
  SetAdminLevel("none");
}

// U10 (the call): SetAdminComment, elasticd's one libslurm write, changes the job's AdminComment
// and no other field of its record.
TEST_F(SecuritySlurm, SetAdminCommentChangesNothingButAdminComment) {
  const std::string job =
      Submit("-N 1-3 --elastic --hold -J w -o /dev/null --comment=c --wrap true");
  const std::map<std::string, std::string> before = JobFields(job);
  ASSERT_EQ(before.at("AdminComment"), "elastic:nodes=0/1-3,class=best-effort");
  setenv("SLURM_CONF", cluster().Export("SLURM_CONF").c_str(), 1);
  const std::string text = "elastic:est=4,nodes=0/1-3,plan=dp,gen=1,class=best-effort,last=0";
  ASSERT_EQ(slurm::SetAdminComment(static_cast<std::uint32_t>(std::stoul(job)), text), "");
  std::map<std::string, std::string> after = JobFields(job);
  EXPECT_EQ(after["AdminComment"], text);
  for (const auto& [name, value] : before) {
    if (name == "AdminComment" || name == "LastSchedEval") continue;
    EXPECT_EQ(after[name], value) << name;
  }
  EXPECT_EQ(after.size(), before.size());
}

// U32: every register and deregister saves the registry (temp file, fsync, rename, directory
// fsync) before it is answered — a user's churn of their own job costs elasticd a save each.
// Watched with strace on the cluster's elasticd: 4 requests, at least 4 saves; the same time
// without requests, none.
TEST_F(SecuritySlurm, EachRegisterAndDeregisterSavesTheRegistry) {
  if (RunCommand("command -v strace").exit_code != 0) GTEST_SKIP() << "strace not installed";
  const std::string dir = cluster().Export("ELASTIC_CLUSTER_DIR");
  const std::string pid =
      RunCommand("awk '$1 == \"elasticd\" {print $2}' " + dir + "/pids | tail -n1").output;
  ASSERT_FALSE(pid.empty());
  const std::string job = Submit("-N 1 --elastic -o /dev/null --wrap 'sleep 120'");
  ASSERT_TRUE(WaitForState(job, "RUNNING", 30));
  auto saves_during = [&](const std::function<void()>& action) {
    const std::string trace = dir + "/strace-" + std::to_string(::getpid()) + ".txt";
    CommandResult started =
        RunCommand("strace -f -qq -e trace=fsync,rename,renameat,renameat2 -o " + trace + " -p " +
                   pid.substr(0, pid.find('\n')) + " >/dev/null 2>&1 & echo $!");
    std::this_thread::sleep_for(std::chrono::seconds(1));  // attached
    action();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    RunCommand("kill -INT " + started.output + "; sleep 0.3");
    const std::string text = RunCommand("cat " + trace + "; rm -f " + trace).output;
    int renames = 0, fsyncs = 0;
    for (std::size_t at = text.find("registry.json.tmp"); at != std::string::npos;
         at = text.find("registry.json.tmp", at + 1)) {
      ++renames;
    }
    for (std::size_t at = text.find("fsync("); at != std::string::npos;
         at = text.find("fsync(", at + 1)) {
      ++fsyncs;
    }
    return std::make_pair(renames, fsyncs);
  };
  const std::string request = ElasticdCli() + " request ";
  auto [renames, fsyncs] = saves_during([&] {
    for (int i = 0; i < 2; ++i) {
      CommandResult reg =
          cluster().Run(request + "'{\"op\":\"register\",\"job_id\":" + job + ",\"ests\":1}'");
      EXPECT_EQ(reg.exit_code, 0) << reg.output;
      CommandResult dereg =
          cluster().Run(request + "'{\"op\":\"deregister\",\"job_id\":" + job + "}'");
      EXPECT_EQ(dereg.exit_code, 0) << dereg.output;
    }
  });
  EXPECT_GE(renames, 4);
  EXPECT_GE(fsyncs, 8);
  auto [idle_renames, idle_fsyncs] =
      saves_during([] { std::this_thread::sleep_for(std::chrono::seconds(1)); });
  EXPECT_EQ(idle_renames, 0);
  EXPECT_EQ(idle_fsyncs, 0);
}

}  // namespace
}  // namespace elastic::testing
