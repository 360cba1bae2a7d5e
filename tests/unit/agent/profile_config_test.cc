// The profile file parser: defaults, run parameters, and refusals that name file, line and key.
#include "agent/profile/profile_config.h"

#include <gtest/gtest.h>

#include <string>

#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

ProfileConfig Parse(const std::string& text) {
  return ParseProfileConfig(text, "profile.toml", "/base");
}

std::string ErrorOf(const std::string& text) {
  try {
    Parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ProfileConfig, ReadsRunsWithDefaults) {
  ProfileConfig config = Parse(R"(
job = "jobs/train.toml"
[[run]]
workers = 1
plan = "dp"
[[run]]
workers = 2
plan = "zero-offload"
threads = 2
ga_steps = 3
cpu_threads = 2
[[run]]
label = "pipe"
workers = 2
plan = "pp"
micro_batches = 4
)");
  EXPECT_EQ(config.job_path, "/base/jobs/train.toml");
  EXPECT_EQ(config.warmup_steps, kDefaultProfileWarmupSteps);
  EXPECT_EQ(config.measured_steps, kDefaultProfileMeasuredSteps);
  EXPECT_EQ(config.repeats, 1);
  EXPECT_TRUE(config.host_probe);  // on by default: it only chooses which steps count
  EXPECT_EQ(config.mpirun, "mpirun");
  ASSERT_EQ(config.runs.size(), 3u);
  EXPECT_EQ(config.runs[0].label, "w1-tjob-dp");
  EXPECT_EQ(config.runs[0].threads, 0);
  EXPECT_EQ(config.runs[0].ests, 0);
  EXPECT_EQ(config.runs[1].plan, Plan::kZeroOffload);
  EXPECT_EQ(config.runs[1].ests, 6);  // a = 3 on each of 2 ranks
  EXPECT_EQ(config.runs[1].threads, 2);
  EXPECT_EQ(config.runs[1].cpu_threads, 2);
  EXPECT_EQ(config.runs[1].label, "w2-t2-zero-offload-e6-c2");
  EXPECT_EQ(config.runs[2].label, "pipe");
  EXPECT_EQ(config.runs[2].ests, 4);  // the micro-batches are the ESTs
}

TEST(ProfileConfig, ReadsStepCountsAndLauncher) {
  ProfileConfig config = Parse(R"(job = "/abs/train.toml"
warmup_steps = 2
measured_steps = 7
repeats = 3
host_probe = false
mpirun = "/opt/ompi/bin/mpirun"
[[run]]
workers = 3
plan = "gc"
ests = 6
)");
  EXPECT_EQ(config.job_path, "/abs/train.toml");
  EXPECT_EQ(config.warmup_steps, 2);
  EXPECT_EQ(config.measured_steps, 7);
  EXPECT_EQ(config.repeats, 3);
  EXPECT_FALSE(config.host_probe);
  EXPECT_EQ(config.mpirun, "/opt/ompi/bin/mpirun");
  EXPECT_EQ(config.runs[0].ests, 6);
}

struct BadProfile {
  const char* name;
  std::string text;
  const char* message;
};

TEST(ProfileConfig, RefusesBadFilesNamingTheKey) {
  const std::string head = "job = \"t.toml\"\n";
  const std::vector<BadProfile> cases = {
      {"not toml", "job = ", "profile.toml:1: invalid TOML"},
      {"no job", "[[run]]\nworkers = 1\nplan = \"dp\"\n", "profile.toml: job: missing"},
      {"no runs", head, "run: expected at least one [[run]] table"},
      {"probe as string", head + "host_probe = \"yes\"\n[[run]]\nworkers = 1\nplan = \"dp\"\n",
       "profile.toml:2: host_probe: expected true or false"},
      {"unknown top key", head + "warmup = 3\n[[run]]\nworkers = 1\nplan = \"dp\"\n",
       "profile.toml:2: warmup: unknown key"},
      {"unknown run key", head + "[[run]]\nworkers = 1\nplan = \"dp\"\ngpus = 2\n",
       "profile.toml:5: run[0].gpus: unknown key"},
      {"missing workers", head + "[[run]]\nplan = \"dp\"\n", "run[0].workers: missing"},
      {"zero workers", head + "[[run]]\nworkers = 0\nplan = \"dp\"\n",
       "profile.toml:3: run[0].workers: invalid value 0: expected an integer from 1 to 256"},
      {"workers as string", head + "[[run]]\nworkers = \"2\"\nplan = \"dp\"\n",
       "run[0].workers: expected an integer"},
      {"auto plan", head + "[[run]]\nworkers = 1\nplan = \"auto\"\n",
       "run[0].plan: invalid value \"auto\": expected dp, ga, gc, zero-dp, zero-offload, pp or tp"},
      {"burst plan", head + "[[run]]\nworkers = 2\nplan = \"burst\"\n",
       "run[0].plan: invalid value \"burst\""},
      {"unknown plan", head + "[[run]]\nworkers = 1\nplan = \"fsdp\"\n",
       "run[0].plan: invalid value \"fsdp\""},
      {"ga under pp", head + "[[run]]\nworkers = 2\nplan = \"pp\"\nga_steps = 2\n",
       "run[0].ga_steps: plan \"pp\" has no gradient-accumulation steps"},
      {"micro-batches under dp", head + "[[run]]\nworkers = 2\nplan = \"dp\"\nmicro_batches = 2\n",
       "run[0].micro_batches: only plan \"pp\" has micro-batches"},
      {"cpu threads under dp", head + "[[run]]\nworkers = 1\nplan = \"dp\"\ncpu_threads = 2\n",
       "run[0].cpu_threads: only plan \"zero-offload\""},
      {"two EST settings", head + "[[run]]\nworkers = 1\nplan = \"ga\"\nests = 4\nga_steps = 2\n",
       "give at most one of ests, ga_steps and micro_batches"},
      {"duplicate labels",
       head + "[[run]]\nworkers = 1\nplan = \"dp\"\n[[run]]\nworkers = 1\nplan = \"dp\"\n",
       "run[1].label: \"w1-tjob-dp\" names two runs"},
      {"label with a comma", head + "[[run]]\nlabel = \"a,b\"\nworkers = 1\nplan = \"dp\"\n",
       "run[0].label: invalid value \"a,b\""},
      {"zero measured steps", head + "measured_steps = 0\n[[run]]\nworkers = 1\nplan = \"dp\"\n",
       "measured_steps: invalid value 0"},
      {"zero repeats", head + "repeats = 0\n[[run]]\nworkers = 1\nplan = \"dp\"\n",
       "repeats: invalid value 0"},
  };
  for (const BadProfile& c : cases) {
    const std::string error = ErrorOf(c.text);
    EXPECT_NE(error.find(c.message), std::string::npos) << c.name << ": got \"" << error << "\"";
  }
}

}  // namespace
}  // namespace elastic::agent
