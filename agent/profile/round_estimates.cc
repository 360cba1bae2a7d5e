// Plain and quiet-host estimates over a profile's rounds, and their noise lines
// (round_estimates.h).
#include "agent/profile/round_estimates.h"

#include <cstddef>
#include <iomanip>

#include "agent/common/median.h"
#include "agent/profile/profile_runs.h"

namespace elastic::agent {
namespace {

using Rounds = std::vector<std::vector<Probed>>;

std::vector<Probed> Pooled(const Rounds& rounds) {
  std::vector<Probed> pool;
  for (const std::vector<Probed>& round : rounds)
    pool.insert(pool.end(), round.begin(), round.end());
  return pool;
}

// How a run's (or thread count's) values are scaled to the quiet host. The default, slope 0,
// leaves them as measured (x^0 = 1, also for a probe time of 0: no probe).
struct Scale {
  double slope = 0;
  double quiet_ms = 1;
  std::vector<double> operator()(const std::vector<Probed>& samples) const {
    return AtQuietHost(samples, slope, quiet_ms);
  }
};

Scale StepScale(const HostScaling* scaling, int threads) {
  if (scaling == nullptr) return {};
  return {scaling->step_slope, scaling->step_quiet_ms.at(threads)};
}

Scale ForwardScale(const HostScaling* scaling, int threads) {
  if (scaling == nullptr) return {};
  return {scaling->forward_slope.at(threads), scaling->forward_quiet_ms.at(threads)};
}

std::vector<double> RoundMedians(const Rounds& rounds, const Scale& scale) {
  std::vector<double> medians;
  for (const std::vector<Probed>& round : rounds) medians.push_back(Median(scale(round)));
  return medians;
}

void PrintSpreads(const RoundMeasurements& measured, const HostScaling* scaling,
                  std::ostream& out) {
  std::vector<double> spreads;
  std::size_t widest = 0;
  for (std::size_t i = 0; i < measured.steps.size(); ++i) {
    spreads.push_back(
        RelativeSpread(RoundMedians(measured.steps[i], StepScale(scaling, measured.threads[i]))));
    if (spreads[i] > spreads[widest]) widest = i;
  }
  out << "runs " << 100 * Median(spreads) << " % (median), " << 100 * spreads[widest]
      << " % (largest: " << measured.labels[widest] << "); forward pass";
  for (const auto& [threads, rounds] : measured.forward) {
    std::vector<double> rates;  // the spread of rates, as for the runs, not of seconds
    for (double seconds : RoundMedians(rounds, ForwardScale(scaling, threads))) {
      rates.push_back(1.0 / seconds);
    }
    out << " " << 100 * RelativeSpread(rates) << " % (" << threads
        << (threads == 1 ? " thread)" : " threads)");
  }
}

}  // namespace

HostScaling FitHostScaling(const RoundMeasurements& measured) {
  HostScaling scaling;
  std::vector<std::vector<Probed>> runs;
  std::map<int, std::vector<Probed>> by_threads;
  for (std::size_t i = 0; i < measured.steps.size(); ++i) {
    runs.push_back(Pooled(measured.steps[i]));
    std::vector<Probed>& same = by_threads[measured.threads[i]];
    same.insert(same.end(), runs.back().begin(), runs.back().end());
  }
  scaling.step_slope = ProbeSlope(runs);
  for (const auto& [threads, pool] : by_threads)
    scaling.step_quiet_ms[threads] = QuietProbeMs(pool);
  for (const auto& [threads, rounds] : measured.forward) {
    const std::vector<Probed> pool = Pooled(rounds);
    scaling.forward_slope[threads] = ProbeSlope({pool});
    scaling.forward_quiet_ms[threads] = QuietProbeMs(pool);
  }
  return scaling;
}

perf::PassTime SplitPassTime(double s_per_sample_large, std::int64_t large,
                             double s_per_sample_small, std::int64_t small) {
  const auto n_large = static_cast<double>(large);
  const auto n_small = static_cast<double>(small);
  const double per_sample =
      (s_per_sample_large * n_large - s_per_sample_small * n_small) / (n_large - n_small);
  const double per_pass = s_per_sample_large * n_large - per_sample * n_large;
  // Noise (or a launch-bound GPU) can push one part below zero: keep the large pass's time and
  // give it all to the other part. The per-sample part keeps a sliver, so the forward rate the
  // model divides by stays finite.
  if (!(per_pass >= 0)) return {.s_per_pass = 0, .s_per_sample = s_per_sample_large};
  if (!(per_sample > kMinPerSampleShare * s_per_sample_large)) {
    return {.s_per_pass = (1 - kMinPerSampleShare) * s_per_sample_large * n_large,
            .s_per_sample = kMinPerSampleShare * s_per_sample_large};
  }
  return {.s_per_pass = per_pass, .s_per_sample = per_sample};
}

namespace {

// One forward rate (and fixed part) per thread count from `seconds_per_sample(rounds)`, the
// estimate of a pass's seconds per sample over its rounds; the backward split alike where its
// passes of both sizes were measured.
template <typename Estimate>
void EstimateForward(const RoundMeasurements& measured, const Estimate& seconds_per_sample,
                     Estimates& estimates) {
  for (const auto& [threads, rounds] : measured.forward) {
    perf::PassTime split{.s_per_pass = 0, .s_per_sample = seconds_per_sample(threads, rounds)};
    if (auto small = measured.forward_small.find(threads); small != measured.forward_small.end()) {
      split =
          SplitPassTime(split.s_per_sample, measured.forward_batch,
                        seconds_per_sample(threads, small->second), measured.forward_small_batch);
    }
    estimates.forward_rate[threads] = 1.0 / split.s_per_sample;
    estimates.forward_pass_s[threads] = split.s_per_pass;
    auto bwd = measured.backward.find(threads);
    auto bwd_small = measured.backward_small.find(threads);
    if (bwd != measured.backward.end() && bwd_small != measured.backward_small.end()) {
      estimates.backward[threads] = SplitPassTime(
          seconds_per_sample(threads, bwd->second), measured.forward_batch,
          seconds_per_sample(threads, bwd_small->second), measured.forward_small_batch);
    }
  }
}

}  // namespace

Estimates PlainEstimates(const RoundMeasurements& measured) {
  Estimates estimates;
  for (const Rounds& rounds : measured.steps) {
    estimates.rate.push_back(Median(RoundMedians(rounds, Scale{})));
  }
  EstimateForward(
      measured, [](int, const Rounds& rounds) { return Median(RoundMedians(rounds, Scale{})); },
      estimates);
  return estimates;
}

Estimates QuietHostEstimates(const RoundMeasurements& measured, const HostScaling& scaling) {
  Estimates estimates;
  for (std::size_t i = 0; i < measured.steps.size(); ++i) {
    const Scale scale = StepScale(&scaling, measured.threads[i]);
    estimates.rate.push_back(Median(scale(Pooled(measured.steps[i]))));
  }
  // The smaller and the backward passes are scaled with the slope and quiet time fitted on the
  // full forward ones (each backward pass follows its forward pass at once).
  EstimateForward(
      measured,
      [&scaling](int threads, const Rounds& rounds) {
        return Median(ForwardScale(&scaling, threads)(Pooled(rounds)));
      },
      estimates);
  return estimates;
}

void PrintRoundNoise(const RoundMeasurements& measured, const HostScaling* scaling,
                     std::ostream& out) {
  const std::size_t rounds = measured.steps.front().size();
  out << std::fixed << std::setprecision(1) << "profile: noise over the " << rounds
      << " rounds, (max - min) / median: ";
  PrintSpreads(measured, nullptr, out);
  out << std::endl;
  if (scaling != nullptr) {
    out << std::setprecision(3) << "profile: host probe: step rate ~ probe^" << scaling->step_slope
        << ", quiet probe";
    for (const auto& [threads, ms] : scaling->step_quiet_ms) {
      out << " " << ms << " ms (" << threads << (threads == 1 ? " thread)" : " threads)");
    }
    out << "; forward time ~ probe^";
    for (const auto& [threads, slope] : scaling->forward_slope) {
      out << (threads == scaling->forward_slope.begin()->first ? "" : ", ") << slope << " ("
          << threads << (threads == 1 ? " thread)" : " threads)");
    }
    out << std::setprecision(1) << "; noise at the quiet host: ";
    PrintSpreads(measured, scaling, out);
    out << std::endl;
  }
  out << std::defaultfloat << std::setprecision(6);
}

}  // namespace elastic::agent
