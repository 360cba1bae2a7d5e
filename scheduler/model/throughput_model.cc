// Throughput model: EasyScale Eq. 1 compute rate plus Rubick-style all-reduce cost.
#include "scheduler/model/throughput_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

namespace elastic::model {
namespace {

struct KnownDevice {
  std::string_view name;
  double capability;
};

// Rough relative training throughput (ResNet-class); "gpu" is a generic reference device.
constexpr std::array<KnownDevice, 7> kKnownDevices{{{"gpu", 1.0},
                                                    {"v100", 1.0},
                                                    {"p100", 0.6},
                                                    {"t4", 0.5},
                                                    {"a100", 2.0},
                                                    {"h100", 3.0},
                                                    {"h200", 3.3}}};

// Total ESTs placed when every type gets A_i = floor(f * C_i) (at least 1 per device).
long EstsAt(const Shape& shape, double f) {
  long total = 0;
  for (const auto& [capability, count] : shape.groups) {
    long per_device = static_cast<long>(std::floor(f * capability + 1e-9));
    total += static_cast<long>(count) * std::max(1L, per_device);
  }
  return total;
}

}  // namespace

std::optional<double> DeviceCapability(std::string_view device_type) {
  for (const auto& device : kKnownDevices) {
    if (device.name == device_type) return device.capability;
  }
  return std::nullopt;
}

std::string_view DeviceTypeChoices() { return "gpu, v100, p100, t4, a100, h100, h200"; }

namespace {

// OverloadFactor of one group of `count` devices of `capability` (both > 0): every device gets
// ceil(E/N) ESTs, the fewest that place all E. Bit for bit what the general search below returns
// for such a shape: it tries a / C for a = 1, 2, ... and stops at the first a with N * a >= E
// (floor(a / C * C + 1e-9) is a for any a it can reach), and with N >= E it returns 1.0 / C.
double OneGroupOverloadFactor(double capability, int count, int ests) {
  const int per_device = (std::max(ests, 1) + count - 1) / count;
  return per_device / capability;
}

// PlanEsts' f_overload (Eq. 1b), without the per-group plan; 0 if the shape has no devices.
double OverloadFactor(const Shape& shape, int ests) {
  // The common shape (one device type, CPUs not splitting it) in O(1): the search below is the
  // model's hottest loop in trace replays.
  if (shape.groups.size() == 1 && shape.groups[0].second > 0 && shape.groups[0].first > 0.0) {
    return OneGroupOverloadFactor(shape.groups[0].first, shape.groups[0].second, ests);
  }
  int devices = 0;
  double slowest_one_est = 0.0;  // f_overload when every device holds one EST
  for (const auto& [capability, count] : shape.groups) {
    if (count <= 0 || capability <= 0.0) continue;
    devices += count;
    slowest_one_est = std::max(slowest_one_est, 1.0 / capability);
  }
  if (devices == 0) return 0.0;
  ests = std::max(ests, 1);
  double f = slowest_one_est;
  // Eq. 1a needs nEST >= maxP. Every A_i is >= 1, so with devices >= maxP the step time is the
  // slowest device running one EST and the surplus ESTs are pure waste (Eq. 1c second term).
  if (devices < ests) {
    // Otherwise the smallest feasible f_overload (Eq. 1b) is one of the values a / C_i: try them
    // in increasing order. ests is small (<= a few hundred), so this is cheap.
    double best_f = std::numeric_limits<double>::infinity();
    for (const auto& [capability, count] : shape.groups) {
      if (count <= 0 || capability <= 0.0) continue;
      for (int a = 1; a <= ests; ++a) {
        double candidate = a / capability;
        if (candidate >= best_f) break;
        if (candidate >= slowest_one_est && EstsAt(shape, candidate) >= ests) {
          best_f = candidate;
          break;
        }
      }
    }
    f = best_f;
  }
  return f;
}

}  // namespace

EstPlan PlanEsts(const Shape& shape, int ests) {
  EstPlan plan;
  const double f = OverloadFactor(shape, ests);
  if (f == 0.0) return plan;
  ests = std::max(ests, 1);
  for (const auto& [capability, count] : shape.groups) {
    long per_device = static_cast<long>(std::floor(f * capability + 1e-9));
    plan.ests_per_device.push_back(count > 0 ? static_cast<int>(std::max(1L, per_device)) : 0);
  }
  plan.f_overload = f;
  plan.compute_rate = ests / f;  // Eq. 1d: sum N_i C_i - waste == maxP / f_overload
  return plan;
}

double EasyScaleComputeRate(const Shape& shape, int ests) {
  const double f = OverloadFactor(shape, ests);  // PlanEsts' rate without building its plan
  return f == 0.0 ? 0.0 : std::max(ests, 1) / f;
}

Shape FedShape(const JobProfile& profile, const Shape& shape) {
  if (profile.cpu_need <= 0.0 || shape.cpus_per_device <= 0.0) return shape;
  Shape fed = shape;
  double fed_capability = shape.cpus_per_device / profile.cpu_need;
  for (auto& group : fed.groups) group.first = std::min(group.first, fed_capability);
  return fed;
}

double PlanMemory(Plan plan, double memory_need, int devices) {
  double states = 0.5 * memory_need;
  double activations = 0.5 * memory_need;
  if (plan == Plan::kOffload) return states * 2.0 / 16.0 + activations;
  if (plan == Plan::kGc || plan == Plan::kZeroGc) activations *= 0.5;
  if (plan == Plan::kZeroDp || plan == Plan::kZeroGc) states /= std::max(devices, 1);
  return states + activations;
}

bool PlanFits(Plan plan, double memory_need, int devices) {
  return plan != Plan::kAuto && PlanMemory(plan, memory_need, devices) <= 1.0 + 1e-9;
}

std::string_view PlanName(Plan plan) {
  switch (plan) {
    case Plan::kDp: return "dp";
    case Plan::kGc: return "gc";
    case Plan::kZeroDp: return "zero-dp";
    case Plan::kZeroGc: return "zero-dp+gc";
    case Plan::kOffload: return "zero-offload";
    case Plan::kAuto: break;
  }
  return "auto";
}

namespace {

// CPU threads per device an offloading job's optimizer gets when the shape does not say.
constexpr double kDefaultOffloadThreads = 8.0;

double PlanSpeedup(const JobProfile& profile, Plan plan, const Shape& shape,
                   const Environment& env) {
  // FedShape copies the shape; skip the copy when CPUs do not bound the job (same shape).
  const bool fed = profile.cpu_need > 0.0 && shape.cpus_per_device > 0.0;
  double compute = fed ? EasyScaleComputeRate(FedShape(profile, shape), profile.ests)
                       : EasyScaleComputeRate(shape, profile.ests);
  if (compute <= 0.0) return 0.0;
  int devices = 0;
  for (const auto& group : shape.groups) devices += group.second;
  if (!PlanFits(plan, profile.memory_need, devices)) return 0.0;
  double compute_time = 1.0 / compute;
  if (plan == Plan::kGc || plan == Plan::kZeroGc) compute_time *= 4.0 / 3.0;
  bool zero = plan == Plan::kZeroDp || plan == Plan::kZeroGc || plan == Plan::kOffload;
  double volume = zero ? 1.5 : 1.0;
  double bandwidth_factor = shape.nodes > 1 ? env.inter_node_slowdown : 1.0;
  double comm = profile.comm_ratio * volume * 2.0 * (devices - 1) / devices * bandwidth_factor;
  double optimizer = 0.0;
  if (plan == Plan::kOffload) {
    // Rubick §4.2: T_opt = k_opt_off * P / (d * c); the host must hold the offloaded states.
    if (profile.offload_host_mb <= 0.0) return 0.0;
    if (shape.host_mb >= 0.0 && shape.host_mb + 1e-9 < profile.offload_host_mb) return 0.0;
    double threads = shape.cpus_per_device > 0.0 ? shape.cpus_per_device : kDefaultOffloadThreads;
    optimizer = kOffloadOptimizerCost * 0.5 * profile.memory_need / (devices * threads);
  }
  return 1.0 / (compute_time + comm + optimizer);
}

}  // namespace

Plan BestPlan(const JobProfile& profile, const Shape& shape, const Environment& env) {
  Plan best = Plan::kAuto;
  double best_speed = 0.0;
  for (Plan plan : kConcretePlans) {
    double speed = PlanSpeedup(profile, plan, shape, env);
    if (speed > best_speed) {
      best = plan;
      best_speed = speed;
    }
  }
  return best;
}

double Speedup(const JobProfile& profile, const Shape& shape, const Environment& env) {
  if (!profile.measured_speedup.empty()) {
    int devices = 0;
    bool reference_devices = true;
    for (const auto& [capability, count] : shape.groups) {
      devices += count;
      reference_devices = reference_devices && capability == 1.0;
    }
    if (devices <= 0) return 0.0;
    if (reference_devices) {
      const size_t at = std::min<size_t>(static_cast<size_t>(devices),
                                         profile.measured_speedup.size());
      return profile.measured_speedup[at - 1];
    }
  }
  if (profile.plan != Plan::kAuto) return PlanSpeedup(profile, profile.plan, shape, env);
  if (profile.memory_need <= 0.0) return PlanSpeedup(profile, Plan::kDp, shape, env);
  Plan best = BestPlan(profile, shape, env);
  return best == Plan::kAuto ? 0.0 : PlanSpeedup(profile, best, shape, env);
}

double CompactSpeedup(const JobProfile& profile, int devices, int devices_per_node,
                      const Environment& env) {
  if (devices <= 0) return 0.0;
  Shape shape{{{1.0, devices}}, (devices + devices_per_node - 1) / devices_per_node};
  return Speedup(profile, shape, env);
}

}  // namespace elastic::model
