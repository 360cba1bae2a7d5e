// Checkpoints of `elastic-agent train`: a run stopped and resumed ends with the same bits as an
// uninterrupted one (also after falling back from a corrupt newest checkpoint), an incompatible
// config is refused, every_steps and retention, SIGUSR1/SIGTERM requests, and SIGTERM to the
// real binary. Small synthetic IDX data (idx_fixture), so no LibTorch in this file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>

#include "agent/checkpoint/checkpoint_dir.h"
#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/checkpoint/checkpoint_writer.h"
#include "agent/common/errors.h"
#include "agent/train/checkpoint_signals.h"
#include "agent/train/train_command.h"
#include "common/toml_reader.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/agent/idx_fixture.h"

namespace elastic::agent {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kSamples = 256;  // 4 steps an epoch at global_batch 64

// A job on kSamples synthetic images in `root`/data, checkpointing into `root`/`ckpt`.
JobConfig SmallJob(const fs::path& root, const std::string& ckpt = "ckpt") {
  if (!fs::exists(root / "data")) {
    fs::create_directory(root / "data");
    testing::WriteTrainSplit(root / "data", kSamples, /*gzip=*/false);
  }
  JobConfig config;
  config.data.path = (root / "data").string();
  config.train.ests = 4;
  config.train.global_batch = 64;
  config.train.lr = 0.01;
  config.train.steps = 12;
  config.train.log_every = 0;
  config.checkpoint.dir = (root / ckpt).string();
  return config;
}

struct TrainRun {
  TrainOutcome outcome;
  std::string out, err;
};

TrainRun Train(const JobConfig& config, std::optional<std::int64_t> until = std::nullopt) {
  std::ostringstream out, err;
  TrainRun run;
  run.outcome = RunTrainCommand(config, TrainOptions{until, true}, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

std::vector<std::uint64_t> Steps(const fs::path& dir) {
  std::vector<std::uint64_t> steps;
  for (const CheckpointFile& file : ListCheckpoints(dir)) steps.push_back(file.step);
  return steps;
}

void FlipByteInTheMiddle(const fs::path& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(fs::file_size(path) / 2));
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x5a);
  file.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
  file.write(&byte, 1);
}

// The acceptance test: 0 -> 5 (stop, checkpoint) -> resume -> 12 equals 0 -> 12, the final
// contract line included; a re-run of the finished job trains nothing and prints it again.
TEST(TrainCheckpoint, StoppedAndResumedRunEqualsUninterruptedOne) {
  elastic::testing::TempDir dir;
  const JobConfig split = SmallJob(dir.path(), "split");
  const JobConfig whole = SmallJob(dir.path(), "whole");

  TrainRun first = Train(split, 5);
  EXPECT_EQ(first.outcome.step, 5);
  EXPECT_EQ(first.err, "");
  EXPECT_EQ(Steps(split.checkpoint.dir), std::vector<std::uint64_t>{5});
  TrainRun second = Train(split);
  EXPECT_EQ(second.err, "elastic-agent: resuming from " + split.checkpoint.dir +
                            "/ckpt-0000000005.elck at step 5\n");
  TrainRun uninterrupted = Train(whole);
  EXPECT_EQ(second.outcome.step, 12);
  EXPECT_EQ(second.outcome.params_sha256, uninterrupted.outcome.params_sha256);
  EXPECT_EQ(FormatFinalLine(second.outcome), FormatFinalLine(uninterrupted.outcome));
  EXPECT_NE(first.outcome.params_sha256, uninterrupted.outcome.params_sha256);

  TrainRun again = Train(split);
  EXPECT_EQ(again.out.substr(again.out.find("elastic-agent: step=")),
            FormatFinalLine(uninterrupted.outcome) + "\n");
  EXPECT_EQ(Steps(split.checkpoint.dir), (std::vector<std::uint64_t>{12, 5}));

  // Files 0600, the directory the writer created 0700.
  EXPECT_EQ(fs::status(split.checkpoint.dir).permissions(), fs::perms::owner_all);
  for (const CheckpointFile& file : ListCheckpoints(split.checkpoint.dir)) {
    EXPECT_EQ(fs::status(file.path).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  }

  // Corrupt newest: the previous checkpoint is used with a warning, and the bits still agree.
  FlipByteInTheMiddle(fs::path(split.checkpoint.dir) / "ckpt-0000000012.elck");
  TrainRun fallback = Train(split);
  EXPECT_NE(fallback.err.find("elastic-agent: warning: checkpoint " + split.checkpoint.dir +
                              "/ckpt-0000000012.elck is corrupt ("),
            std::string::npos)
      << fallback.err;
  EXPECT_NE(fallback.err.find("resuming from " + split.checkpoint.dir +
                              "/ckpt-0000000005.elck at step 5"),
            std::string::npos)
      << fallback.err;
  EXPECT_EQ(FormatFinalLine(fallback.outcome), FormatFinalLine(uninterrupted.outcome));
}

// EasyScale Fig. 7: a checkpoint taken while the loaders hold batches of later steps records
// them; the resumed run, with another loader count and prefetch depth, rebuilds exactly those
// batches (augmented with the ESTs' own draws) and ends with the uninterrupted run's bits.
TEST(TrainCheckpoint, CheckpointWithPendingBatchesResumesBitForBit) {
  elastic::testing::TempDir dir;
  JobConfig split = SmallJob(dir.path(), "split");
  split.data.augment = Augment::kFlip;
  split.data.workers = 3;
  split.data.prefetch = 6;
  JobConfig whole = SmallJob(dir.path(), "whole");
  whole.data.augment = Augment::kFlip;
  Train(split, 5);
  const CheckpointReader checkpoint =
      CheckpointReader::Open(fs::path(split.checkpoint.dir) / "ckpt-0000000005.elck");
  // 4 ESTs, 6 dispatched: step 5 for every EST, step 6 for ESTs 0 and 1 (4 steps an epoch).
  const std::string& loader = checkpoint.Get("loader");
  EXPECT_EQ(loader.substr(0, loader.find("est=")), "loader=1\nstep=5\naugment=flip\n");
  EXPECT_EQ(std::count(loader.begin(), loader.end(), '\n'), 3 + 4 + 6) << loader;
  EXPECT_NE(loader.find("pending=6 1 "), std::string::npos) << loader;
  split.data.workers = 1;
  split.data.prefetch = 1;
  const TrainRun resumed = Train(split);
  EXPECT_EQ(resumed.outcome.params_sha256, Train(whole).outcome.params_sha256);
}

// Rewrites checkpoint `path` (valid CRCs) with its "loader" record passed through `edit`
// (nullopt: left out, as checkpoints from before the record existed).
void RewriteLoaderRecord(const fs::path& path, std::uint64_t step,
                         const std::function<std::optional<std::string>(std::string)>& edit) {
  const CheckpointReader original = CheckpointReader::Open(path);
  CheckpointWriter writer(original.fingerprint());
  for (const std::string& name : original.Names()) {
    std::optional<std::string> payload = original.Get(name);
    if (name == "loader") payload = edit(*payload);
    if (payload) writer.Add(name, *payload);
  }
  writer.Commit(path.parent_path(), step);
}

TEST(TrainCheckpoint, MismatchedLoaderRecordIsRefusedAndAMissingOneRebuilt) {
  elastic::testing::TempDir dir;
  JobConfig config = SmallJob(dir.path());
  const std::string uninterrupted = Train(SmallJob(dir.path(), "whole")).outcome.params_sha256;
  Train(config, 3);
  const fs::path path = fs::path(config.checkpoint.dir) / "ckpt-0000000003.elck";
  auto refusal = [&](const std::string& from, const std::string& to) {
    RewriteLoaderRecord(path, 3, [&](std::string text) -> std::optional<std::string> {
      return text.replace(text.find(from), from.size(), to);
    });
    try {
      Train(config);
    } catch (const CheckpointError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string prefix = "checkpoint " + path.string() + ": record \"loader\" ";
  EXPECT_EQ(refusal("step=3", "step=2"), prefix + "is for step 2 but the checkpoint is at step 3");
  EXPECT_EQ(refusal("step=2\naugment=none\n", "step=3\naugment=none\nbogus\n"),
            prefix + "unexpected line 4 \"bogus\"");
  EXPECT_EQ(refusal("loader=1", "loader=9"),
            prefix + "has version 9: this elastic-agent reads version 1");
  // Without the record (a checkpoint from before it existed) the state is rebuilt from the
  // step: nothing was pending then that the stream cannot give again.
  RewriteLoaderRecord(path, 3, [](std::string) -> std::optional<std::string> { return {}; });
  EXPECT_EQ(Train(config).outcome.params_sha256, uninterrupted);
}

// A full disk (emulated with RLIMIT_FSIZE: writes past the limit fail with EFBIG, as ENOSPC
// would): a periodic checkpoint that cannot be written is a warning and training goes on; the
// checkpoint the run stops at is an error; either way no partial file is left, the newest valid
// checkpoint stays readable, and a rerun once there is room ends with the undisturbed bits.
TEST(TrainCheckpoint, AFullDiskKeepsTheNewestValidCheckpointAndLosesNothing) {
  elastic::testing::TempDir dir;
  JobConfig config = SmallJob(dir.path());
  config.train.steps = 8;
  config.checkpoint.every_steps = 2;
  JobConfig whole = SmallJob(dir.path(), "whole");
  whole.train.steps = 8;
  const std::string uninterrupted = Train(whole).outcome.params_sha256;
  Train(config, 4);
  ASSERT_EQ(Steps(config.checkpoint.dir), (std::vector<std::uint64_t>{4, 2}));  // newest first

  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 4096;  // far below one checkpoint
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  std::string error;
  std::ostringstream out, err;
  try {
    RunTrainCommand(config, TrainOptions{std::nullopt, true}, out, err);
  } catch (const CheckpointError& e) {
    error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);

  EXPECT_NE(err.str().find("elastic-agent: warning: checkpoint"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("training on (the newest valid checkpoint is kept)"),
            std::string::npos) << err.str();
  EXPECT_FALSE(error.empty()) << "the final checkpoint could not be written: must be an error";
  EXPECT_EQ(Steps(config.checkpoint.dir), (std::vector<std::uint64_t>{4, 2}));  // newest first
  for (const auto& entry : fs::directory_iterator(config.checkpoint.dir)) {
    EXPECT_EQ(entry.path().extension(), ".elck") << "partial file left: " << entry.path();
  }
  const TrainRun rerun = Train(config);  // room again: resumes from step 4
  EXPECT_NE(rerun.err.find("ckpt-0000000004.elck"), std::string::npos) << rerun.err;
  EXPECT_EQ(rerun.outcome.params_sha256, uninterrupted);
}

TEST(TrainCheckpoint, IncompatibleConfigIsRefusedNamingTheDifference) {
  elastic::testing::TempDir dir;
  JobConfig config = SmallJob(dir.path());
  Train(config, 2);
  config.train.seed = 2;
  try {
    Train(config);
    FAIL() << "resumed a checkpoint of another seed";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "checkpoint " + config.checkpoint.dir +
                  "/ckpt-0000000002.elck: cannot resume: checkpoint was written for seed=1, "
                  "this run has seed=2");
  }
  // A checkpoint ahead of the requested stop step is a usage error, not a silent no-op.
  config.train.seed = 1;
  EXPECT_THROW(Train(config, 1), UsageError);
}

// Issue 8: the plan is chosen per generation and any plan resumes any checkpoint, also one
// written before the plan left the fingerprint (it carried fingerprint.plan then).
TEST(TrainCheckpoint, AnyPlanResumesAnyCheckpoint) {
  elastic::testing::TempDir dir;
  JobConfig switched = SmallJob(dir.path(), "switched");
  std::string hash;
  for (auto [plan, until] : {std::pair{Plan::kZeroOffload, 3}, {Plan::kDp, 5}, {Plan::kGc, 8},
                             {Plan::kZeroDp, 10}, {Plan::kGa, 12}}) {
    switched.train.plan = plan;
    hash = Train(switched, until).outcome.params_sha256;
  }
  JobConfig whole = SmallJob(dir.path(), "whole");
  EXPECT_EQ(hash, Train(whole).outcome.params_sha256);
  const auto newest = CheckpointReader::Open(ListCheckpoints(switched.checkpoint.dir)[0].path);
  EXPECT_NE(newest.Get("progress").find("\nplan=ga(dp=1+ga=4)\n"), std::string::npos)
      << newest.Get("progress");
  EXPECT_FALSE(newest.fingerprint().Find("plan").has_value());

  // A checkpoint as an older agent wrote it, with fingerprint.plan, resumes under another plan.
  const fs::path path = ListCheckpoints(whole.checkpoint.dir)[0].path;
  const CheckpointReader reader = CheckpointReader::Open(path);
  Fingerprint with_plan;
  for (const auto& [key, value] : reader.fingerprint().entries()) {
    with_plan.Add(key, value);
    if (key == "determinism") with_plan.Add("plan", "auto");
  }
  CheckpointWriter writer(with_plan);
  for (const std::string& name : reader.Names()) writer.Add(name, reader.Get(name));
  fs::remove(path);
  writer.Commit(whole.checkpoint.dir, 12);
  whole.train.plan = Plan::kZeroDp;
  whole.train.steps = 13;
  switched.train.plan = Plan::kDp;
  switched.train.steps = 13;
  EXPECT_EQ(Train(whole).outcome.params_sha256, Train(switched).outcome.params_sha256);
}

TEST(TrainCheckpoint, EveryStepsWritesAndKeepsTheTwoNewest) {
  elastic::testing::TempDir dir;
  JobConfig config = SmallJob(dir.path());
  config.checkpoint.every_steps = 2;
  Train(config, 7);  // writes 2, 4, 6 and the stop step 7
  EXPECT_EQ(Steps(config.checkpoint.dir), (std::vector<std::uint64_t>{7, 6}));
}

TEST(TrainCheckpoint, WithoutADirNothingIsWrittenAndUntilStepStillStops) {
  elastic::testing::TempDir dir;
  JobConfig config = SmallJob(dir.path());
  config.checkpoint.dir.clear();
  TrainRun run = Train(config, 3);
  EXPECT_EQ(run.outcome.step, 3);
  EXPECT_EQ(Train(config, 3).outcome.params_sha256, run.outcome.params_sha256);  // no resume
  EXPECT_FALSE(fs::exists(dir.path() / "ckpt"));
}

TEST(TrainCheckpoint, SignalRequestsAreTakenAfterTheCurrentStep) {
  elastic::testing::TempDir dir;
  JobConfig config = SmallJob(dir.path());
  InstallCheckpointSignalHandlers();
  EXPECT_EQ(TakeCheckpointRequest(), CheckpointRequest::kNone);

  ASSERT_EQ(raise(SIGUSR1), 0);  // checkpoint after step 1, train on to 4
  TrainRun usr1 = Train(config, 4);
  EXPECT_EQ(usr1.outcome.step, 4);
  EXPECT_EQ(usr1.err, "elastic-agent: SIGUSR1: wrote checkpoint " + config.checkpoint.dir +
                          "/ckpt-0000000001.elck after step 1; training on\n");
  EXPECT_EQ(Steps(config.checkpoint.dir), (std::vector<std::uint64_t>{4, 1}));

  ASSERT_EQ(raise(SIGUSR1), 0);
  ASSERT_EQ(raise(SIGTERM), 0);  // wins: checkpoint after step 5 and stop there
  TrainRun term = Train(config);
  EXPECT_EQ(term.outcome.step, 5);
  EXPECT_NE(term.err.find("elastic-agent: SIGTERM/SIGUSR2: wrote checkpoint " +
                          config.checkpoint.dir +
                          "/ckpt-0000000005.elck after step 5; stopping at step 5\n"),
            std::string::npos)
      << term.err;
  EXPECT_EQ(TakeCheckpointRequest(), CheckpointRequest::kNone);
}

// SIGTERM to the real binary after its first progress line: it finishes the step, checkpoints,
// exits 0, and a resumed run ends where an uninterrupted one does.
TEST(TrainCheckpoint, BinaryStopsCleanlyOnSigtermAndResumes) {
  elastic::testing::TempDir dir;
  SmallJob(dir.path());  // writes the data
  const std::string job =
      "[data]\npath = \"data\"\n[train]\nests = 4\nglobal_batch = 64\nlr = 0.01\n"
      "steps = 100000\nlog_every = 1\n[checkpoint]\ndir = \"ckpt\"\n";
  const fs::path config = dir.Write("job.toml", job);
  const fs::path err_path = dir.path() / "stderr.txt";
  const std::string agent = ELASTIC_BINARY_DIR "/agent/elastic-agent";

  int out_pipe[2];
  ASSERT_EQ(pipe(out_pipe), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(err_fd, STDERR_FILENO);
    close(out_pipe[0]);
    execl(agent.c_str(), agent.c_str(), "train", "--config", config.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out_pipe[1]);
  FILE* out = fdopen(out_pipe[0], "r");
  ASSERT_NE(out, nullptr);
  char line[512];
  bool signalled = false;
  while (std::fgets(line, sizeof line, out) != nullptr) {
    if (!signalled && std::string(line).starts_with("step=")) {
      ASSERT_EQ(kill(pid, SIGTERM), 0);
      signalled = true;
    }
  }
  std::fclose(out);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(signalled);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);

  std::ifstream err_file(err_path);
  const std::string err((std::istreambuf_iterator<char>(err_file)), {});
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      err, match,
      std::regex(R"(SIGTERM/SIGUSR2: wrote checkpoint \S+ after step (\d+); stopping)")))
      << err;
  const std::int64_t stopped = std::stoll(match[1]);
  ASSERT_EQ(Steps(dir.path() / "ckpt").front(), static_cast<std::uint64_t>(stopped));

  using elastic::testing::RunCommand;
  using elastic::testing::ShellQuote;
  const std::string until = " --until-step " + std::to_string(stopped + 2);
  auto resumed = RunCommand(ShellQuote(agent) + " train --config " + ShellQuote(config) + until);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  std::string whole_job = job;
  whole_job.replace(whole_job.find("\"ckpt\""), 6, "\"whole\"");
  const fs::path whole_config = dir.Write("whole.toml", whole_job);
  auto whole =
      RunCommand(ShellQuote(agent) + " train --config " + ShellQuote(whole_config) + until);
  EXPECT_EQ(whole.exit_code, 0) << whole.output;
  const std::string final_line = whole.output.substr(whole.output.rfind("elastic-agent: step="));
  EXPECT_EQ(resumed.output.substr(resumed.output.rfind("elastic-agent: step=")), final_line);

  // Another seed against that checkpoint: exit 2 with the difference on one line.
  std::string other_job = job;
  other_job.replace(other_job.find("lr = "), 0, "seed = 2\n");
  const fs::path other_config = dir.Write("other.toml", other_job);
  auto other = RunCommand(ShellQuote(agent) + " train --config " + ShellQuote(other_config));
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("cannot resume: checkpoint was written for seed=1, this run has "
                              "seed=2\n"),
            std::string::npos)
      << other.output;
}

}  // namespace
}  // namespace elastic::agent
