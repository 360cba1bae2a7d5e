// Measurements brought to the host's quiet speed. A cloud VM's CPUs run at two or more speeds in
// phases of 0.05-5 s that the guest cannot see (no steal time): a configuration's rounds then
// spread by ~40 %, more than the model's whole error budget. The host probe
// (agent/train/host_probe.h), timed just before each measurement, slows down with it (twice as
// slow where a step is ~1.35x slower), so each measurement can be scaled to what it would have
// been with the probe at its quiet time: value x (probe / quiet)^-s, with the slope s of log
// value against log probe fitted on the profile's own measurements (docs/perf-model.md
// "Host contention phases"). On a quiet host s is ~0 and nothing changes. Pure and torch-free.
#pragma once

#include <vector>

namespace elastic::agent {

// One measurement (a step's samples/s, a forward pass's seconds) and the probe time (ms) taken
// just before it.
struct Probed {
  double value = 0;
  double probe_ms = 0;
};

// The values of `samples`, in order.
std::vector<double> Values(const std::vector<Probed>& samples);

// The probe's quiet time over `samples`: their 10th-percentile probe time (a low quantile, not
// the minimum, so that one lucky probe does not set it). REQUIRES: non-empty.
double QuietProbeMs(const std::vector<Probed>& samples);

// The slope of log value against log probe time, by least squares within each group (a
// configuration: groups differ in speed, not in how the host slows them down), pooled over the
// groups. 0 when no group has two different probe times. REQUIRES: positive values and probes.
double ProbeSlope(const std::vector<std::vector<Probed>>& groups);

// Each sample's value at the probe's quiet time: value x (probe_ms / quiet_ms)^-slope.
std::vector<double> AtQuietHost(const std::vector<Probed>& samples, double slope, double quiet_ms);

}  // namespace elastic::agent
