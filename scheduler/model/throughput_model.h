// Pure throughput model: speedup of a data-parallel job on a (possibly heterogeneous) allocation.
//
// Units: 1.0 = one reference GPU (capability 1.0, the GPUs the trace was recorded on) running the
// job alone with no communication. Two parts, both from the papers:
//  - compute: EasyScale's intra-job planner (§3.4, Eq. 1a–1d). The job has maxP EasyScaleThreads
//    (ESTs); GPU type i (N_i devices, capability C_i) gets A_i ESTs per device, sum N_i A_i >= maxP.
//    A step takes f_overload = max A_i / C_i, so the useful compute rate is maxP / f_overload
//    (Eq. 1d: sum N_i C_i - waste, where waste is Eq. 1c with the per-type term weighted by N_i).
//  - communication: Rubick §4.1 ring all-reduce, V_dp = P * 2(d-1)/d over the bottleneck bandwidth
//    (intra-node, or inter-node once the job spans nodes). We fold P/B into one per-job ratio
//    `comm_ratio` = all-reduce time / one-GPU compute time per step, and assume no overlap
//    (k_sync = 0), which is pessimistic for large jobs.
// Iteration time t = 1/compute + comm_ratio * 2(k-1)/k * (spans nodes ? inter_node_slowdown : 1),
// speedup = 1/t. Concave in k, so marginal speedup per GPU falls as a job grows.
// Pure: no I/O, no clocks; thread-safe (no state).
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace elastic::model {

// Execution plans (Rubick §3, §4.1-4.2) over data parallelism: gradient checkpointing (GC)
// recomputes activations, ZeRO-DP partitions model states over the DP size. kAuto picks the
// fastest plan that fits device memory for each allocation (Rubick's GetBestPlan).
enum class Plan { kAuto, kDp, kGc, kZeroDp, kZeroGc };

struct JobProfile {
  int ests = 1;             // EasyScale maxP: logical workers; the job never uses more GPUs
  double comm_ratio = 0.02;  // all-reduce time / single-GPU compute time per step (intra-node)
  // Memory of one replica under plain DP, in device memories; 0 = every plan fits anywhere.
  double memory_need = 0.0;
  Plan plan = Plan::kAuto;  // a fixed plan (what the user submitted), or kAuto
  // The plan the user submitted: a guaranteed job is owed its requested devices' speed under
  // this plan (Rubick §5.1), even when it now runs a better one.
  Plan submitted = Plan::kDp;
};

// Assumed plan costs (docs/simulator.md): half of memory_need is model states, half activations.
// GC halves the activations and makes compute 4/3 as long (one extra forward pass); ZeRO-DP
// divides the states by the device count and moves 1.5x the all-reduce volume (ZeRO paper).
double PlanMemory(Plan plan, double memory_need, int devices);
bool PlanFits(Plan plan, double memory_need, int devices);
// The plans kAuto chooses among, cheapest first.
inline constexpr Plan kConcretePlans[] = {Plan::kDp, Plan::kGc, Plan::kZeroDp, Plan::kZeroGc};
std::string_view PlanName(Plan plan);

struct Environment {
  double inter_node_slowdown = 4.0;  // B_intra / B_inter (Rubick §4.1 bottleneck bandwidth)
};

// A job's resources as the model sees them: device count per capability, and nodes spanned.
struct Shape {
  std::vector<std::pair<double, int>> groups;  // (capability C_i, device count N_i)
  int nodes = 0;
};

// Relative compute capability of known device types (v100 = 1.0 = the trace's reference);
// nullopt for an unknown name. Assumed values, documented in docs/simulator.md.
std::optional<double> DeviceCapability(std::string_view device_type);
// Comma-separated list of known device types, for error messages.
std::string_view DeviceTypeChoices();

// EasyScale Eq. 1: best EST-to-GPU assignment's compute rate (maxP / f_overload); 0 if no devices.
double EasyScaleComputeRate(const Shape& shape, int ests);

// Speedup over one reference GPU (see file comment) with the profile's plan (kAuto: the best
// that fits); 0 for an empty shape or when the plan does not fit in device memory.
double Speedup(const JobProfile& profile, const Shape& shape, const Environment& env = {});

// The fastest plan that fits `shape`; kAuto if none fits.
Plan BestPlan(const JobProfile& profile, const Shape& shape, const Environment& env = {});

// Speedup of `devices` reference GPUs packed onto nodes of `devices_per_node`.
double CompactSpeedup(const JobProfile& profile, int devices, int devices_per_node,
                      const Environment& env = {});

// Resize/reconfiguration cost: on-demand checkpoint, teardown and relaunch (design.md §3).
struct ResizeCost {
  double checkpoint_s = 10.0;
  double restart_s = 20.0;
  double Seconds() const { return checkpoint_s + restart_s; }
};

}  // namespace elastic::model
