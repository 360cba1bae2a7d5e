// The profile file of `elastic-agent profile --config F` (docs/perf-model.md "Profiling and
// fitting on a cluster"): which job to profile and the sampled configurations to run
// (workers x intra-op threads x execution plan), parsed strictly from TOML. Pure: text in,
// struct out, no file access. Errors: throws elastic::ConfigError naming the file, line, key,
// value and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_options.h"

namespace elastic::agent {

inline constexpr std::int64_t kDefaultProfileWarmupSteps = 3;
inline constexpr std::int64_t kDefaultProfileMeasuredSteps = 10;
inline constexpr std::int64_t kDefaultProfileRepeats = 1;

// One sampled configuration: W ranks on this machine running one plan.
struct ProfileRun {
  std::string label;        // unique; default "w<W>-t<threads>-<plan>[-a<ga>|-m<mb>][-c<c>]"
  int workers = 1;          // W: MPI ranks (Rubick's "GPUs" on a CPU machine)
  Plan plan = Plan::kDp;    // dp, ga, gc, zero-dp, zero-offload or pp
  int threads = 0;          // intra-op threads per worker; 0 = the job's train.threads
  // ESTs for this run (the agent time-slices E / W ESTs per rank, Rubick's a; under pp the E
  // ESTs are the micro-batches m). 0 = the job's train.ests. Set through ga_steps (E = a * W),
  // micro_batches (pp: E = m) or ests, at most one of them.
  int ests = 0;
  int cpu_threads = 0;      // zero-offload's c; 0 = the job's train.cpu_threads
};

struct ProfileConfig {
  std::string job_path;     // the job config (TOML) to profile, absolute
  std::int64_t warmup_steps = kDefaultProfileWarmupSteps;      // not measured
  std::int64_t measured_steps = kDefaultProfileMeasuredSteps;  // the median is over these
  // Rounds over the whole run list (round-robin, so slow drifts of the machine hit every run
  // alike); a point's throughput and the forward rates are medians over the rounds.
  std::int64_t repeats = kDefaultProfileRepeats;
  // Time the host probe before every measured step and forward pass, and scale each to the
  // host's quiet speed (agent/profile/host_speed.h); the plain medians are written beside.
  bool host_probe = true;
  std::string mpirun = "mpirun";  // launcher for W > 1 (and W = 1, so every run is alike)
  std::vector<ProfileRun> runs;
};

// Parses the profile file `text` (named `source_name` in errors). A relative `job` is resolved
// against `base_dir`. Refuses unknown keys, an empty run list, duplicate labels, W < 1, plans
// the agent cannot run (auto, tp, burst), ga_steps outside ga/dp/gc/zero plans, micro_batches
// outside pp, cpu_threads outside zero-offload, and more than one of ests/ga_steps/micro_batches.
ProfileConfig ParseProfileConfig(std::string_view text, const std::string& source_name,
                                 const std::string& base_dir);

// The default label of `run` (its label field is ignored).
std::string DefaultLabel(const ProfileRun& run);

}  // namespace elastic::agent
