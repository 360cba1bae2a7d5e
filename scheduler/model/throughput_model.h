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
//  - CPUs (Rubick §5: CPU is a scheduled dimension whose amount changes throughput): a job's
//    input pipeline needs `cpu_need` CPU threads per capability-1 device to keep it busy, so a
//    device of capability C fed by c threads runs at min(C, c / cpu_need) (data loading overlaps
//    compute; the slower one bounds the step). ZeRO-Offload's optimizer step runs on the CPU:
//    Rubick §4.2's T_opt = k_opt_off * P / (d * c), here kOffloadOptimizerCost * states / (k * c)
//    in one-GPU compute steps (see PlanSpeedup).
// Pure: no I/O, no clocks; thread-safe (no state).
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace elastic::model {

// Execution plans (Rubick §3, §4.1-4.2) over data parallelism: gradient checkpointing (GC)
// recomputes activations, ZeRO-DP partitions model states over the DP size. kAuto picks the
// fastest plan that fits device memory for each allocation (Rubick's GetBestPlan).
// ZeRO-Offload (kOffload) keeps only the fp16 weights on the device and the gradients, fp32
// master weights and Adam moments in host memory (perf/rubick/memory.h), and runs the optimizer
// on the job's CPUs; it needs JobProfile::offload_host_mb of host memory.
enum class Plan { kAuto, kDp, kGc, kZeroDp, kZeroGc, kOffload };

struct JobProfile {
  int ests = 1;             // EasyScale maxP: logical workers; the job never uses more GPUs
  double comm_ratio = 0.02;  // all-reduce time / single-GPU compute time per step (intra-node)
  // Memory of one replica under plain DP, in device memories; 0 = every plan fits anywhere.
  double memory_need = 0.0;
  Plan plan = Plan::kAuto;  // a fixed plan (what the user submitted), or kAuto
  // The plan the user submitted: a guaranteed job is owed its requested devices' speed under
  // this plan (Rubick §5.1), even when it now runs a better one.
  Plan submitted = Plan::kDp;
  // CPU threads per capability-1 device the input pipeline needs for full speed; 0 = the job is
  // not CPU-bound (CPUs do not change its speed).
  double cpu_need = 0.0;
  // Host memory (MiB, whole job) ZeRO-Offload needs (perf/rubick's EstimateMemory host_total);
  // 0 = the job cannot offload.
  double offload_host_mb = 0.0;
  // Rubick §5.2: the job's own resource-sensitivity curve, speedup over one device with 1, 2, ...
  // capability-1 devices under the best plan for each (live: one device per node, from the
  // supervisor's fitted model). When given, Speedup reads it for shapes of capability-1 devices
  // (flat past its end) instead of the model below; empty = the model.
  std::vector<double> measured_speedup{};
};

// Assumed plan costs (docs/simulator.md): half of memory_need is model states, half activations.
// GC halves the activations and makes compute 4/3 as long (one extra forward pass); ZeRO-DP
// divides the states by the device count and moves 1.5x the all-reduce volume (ZeRO paper).
// ZeRO-Offload keeps only the fp16 weights of the states (2 of 16 bytes per parameter) on the
// device. PlanFits checks device memory only; offload's host memory is checked by Speedup.
double PlanMemory(Plan plan, double memory_need, int devices);
bool PlanFits(Plan plan, double memory_need, int devices);
// The plans a user picks among (the simulator's user plans), cheapest first.
inline constexpr Plan kUserPlans[] = {Plan::kDp, Plan::kGc, Plan::kZeroDp, Plan::kZeroGc};
// The plans kAuto chooses among: the user plans, then ZeRO-Offload.
inline constexpr Plan kConcretePlans[] = {Plan::kDp, Plan::kGc, Plan::kZeroDp, Plan::kZeroGc,
                                          Plan::kOffload};
// Optimizer seconds on one CPU thread per device-memory of model states, in one-GPU compute
// steps (assumed; docs/simulator.md).
inline constexpr double kOffloadOptimizerCost = 4.0;
std::string_view PlanName(Plan plan);

struct Environment {
  double inter_node_slowdown = 4.0;  // B_intra / B_inter (Rubick §4.1 bottleneck bandwidth)
};

// A job's resources as the model sees them: device count per capability, and nodes spanned.
struct Shape {
  // (capability C_i, device count N_i). Inline for up to two types: the policies build a shape
  // for every speed they price, thousands per decision, nearly all of one type.
  boost::container::small_vector<std::pair<double, int>, 2> groups;
  int nodes = 0;
  double cpus_per_device = 0.0;  // CPU threads per device; 0 = not limited
  double host_mb = -1.0;         // host memory of the whole job (MiB); < 0 = not limited
};

// Relative compute capability of known device types (v100 = 1.0 = the trace's reference);
// nullopt for an unknown name. Assumed values, documented in docs/simulator.md.
std::optional<double> DeviceCapability(std::string_view device_type);
// Comma-separated list of known device types, for error messages.
std::string_view DeviceTypeChoices();

// EasyScale §3.4 intra-job planner, Eq. 1a-1d: ESTs per device for each group of `shape` (same
// order) at the smallest feasible f_overload, so faster devices host more ESTs, and the
// resulting compute rate maxP / f_overload (Eq. 1d). The one implementation both easyscale and
// elastic use for jobs spread over device types. Empty / 0 if the shape has no devices.
struct EstPlan {
  std::vector<int> ests_per_device;  // A_i
  double f_overload = 0.0;
  double compute_rate = 0.0;
};
EstPlan PlanEsts(const Shape& shape, int ests);
// PlanEsts(shape, ests).compute_rate.
double EasyScaleComputeRate(const Shape& shape, int ests);
// The shape's groups with each capability C lowered to what the job's CPUs can feed:
// min(C, cpus_per_device / cpu_need) (unchanged when either is 0).
Shape FedShape(const JobProfile& profile, const Shape& shape);

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
