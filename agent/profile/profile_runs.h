// What one profiled configuration is made of, as text: the job config a run trains with (the
// profiled job with the run's plan, ESTs, threads and step count, one progress line per step,
// no checkpoints) and the per-step throughput read back from rank 0's progress lines. Pure and
// torch-free. Errors: ConfigError for a job file that is not valid TOML, TrainingError for
// output without enough measured steps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/common/median.h"

namespace elastic::agent {

struct RunSettings {
  std::string plan;        // plan word, e.g. "zero-offload"
  std::int64_t ests = 1;
  std::int64_t threads = 1;
  std::int64_t cpu_threads = 1;
  std::int64_t steps = 1;  // warm-up plus measured
  std::string data_path;   // absolute: the generated file lives elsewhere than the job's
  std::string torchscript;  // model.torchscript made absolute; "" for a built-in model
  bool host_probe = false;  // train.host_probe: progress lines carry probe_ms
};

// The job file `job_text` with train.plan/ests/threads/cpu_threads/steps set from `settings`,
// train.log_every = 1 (a progress line, with its samples/s, after every step), train.host_probe
// as `settings` has it, data.path (and model.torchscript, when given) made
// absolute, train.perf_model and the [checkpoint] table removed (a profile run must neither
// resume from nor leave checkpoints). Every other key is kept as the job has it.
std::string JobTomlForRun(std::string_view job_text, const std::string& source_name,
                          const RunSettings& settings);

// One `step=<N> loss=<L> samples_per_s=<R>[ probe_ms=<P>]` progress line (train_command.cc's
// ProgressMeter). With log_every = 1, R is the throughput of step N alone and P the host probe's
// time just before it (agent/train/host_probe.h).
struct StepRate {
  std::int64_t step = 0;
  double samples_per_s = 0;
  double probe_ms = 0;  // 0: the line has no probe_ms
};
std::vector<StepRate> ParseStepRates(std::string_view output);

// Steps warmup+1 .. warmup+measured in step order (the steady state; warm-up steps fill the
// loader queue and LibTorch's allocator caches). Throws TrainingError, quoting what was found,
// when a step in that range is missing or has no positive samples/s.
std::vector<StepRate> MeasuredSteps(const std::vector<StepRate>& rates, std::int64_t warmup,
                                    std::int64_t measured);

// The median samples/s of MeasuredSteps.
double MedianMeasuredRate(const std::vector<StepRate>& rates, std::int64_t warmup,
                          std::int64_t measured);

// How far apart one configuration's per-round rates lie: (largest - smallest) / median. It is
// the measurement's own noise, printed beside the model's error: a model cannot be judged more
// finely than the spread of the rates it is compared with. REQUIRES: non-empty, positive median.
double RelativeSpread(const std::vector<double>& rates);

}  // namespace elastic::agent
