// Benchmarks for the policies and the simulator; prints times and avg-JCT ratios to backfill.
// Usage: policy_bench [--copies N] [TRACE.csv [CLUSTER_SPEC...]]
//   defaults: both development traces (Philly, ITP) on 16x8 and 64x8, then the Philly trace
//   repeated N times (default 10: 20,000 jobs, built in memory, see RepeatTrace) on the last spec;
//   --copies 0 skips that long replay.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/trace.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kPolicies[] = {"backfill", "easyscale", "rubick", "elastic"};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// CPU time of this thread: the machine is shared, so wall time overstates what the code costs.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// 1,000 nodes x 8 devices with 64 CPUs each; 250 running jobs holding up to 8 devices and 4 CPUs
// per device; 250 pending jobs. Every job is CPU-bound (1-7 CPUs per device to be fed), so
// rubick and elastic choose CPUs as well as devices.
void BenchDecision(const std::string& name) {
  using namespace elastic::policy;
  ClusterState cluster = *elastic::sim::ParseClusterSpec("1000x8:cpus=64");
  auto policy = *MakePolicy(name);
  std::vector<JobState> jobs;
  for (int i = 0; i < 500; ++i) {
    JobState job;
    job.id = "j" + std::to_string(i);
    job.elastic = name != "backfill";
    job.requested_devices = job.max_devices = 1 << (i % 5);
    job.min_devices = job.elastic ? 1 : job.max_devices;
    job.profile = {job.max_devices, 0.02};
    job.profile.cpu_need = 1 + i % 7;
    job.cpus_per_device = 4;
    job.min_cpus_per_device = policy->SchedulesCpus() ? 1 : 4;
    job.max_cpus_per_device = policy->SchedulesCpus() ? 16 : 4;
    job.submit_time_s = i;
    job.expected_runtime_s = 1000 + 37 * i;
    if (i < 250) {
      int node = i * 2;
      job.allocation = {{node, std::min(job.max_devices, 8)}};
      cluster.nodes[node].free_devices -= job.allocation[0].devices;
      cluster.nodes[node].free_cpus -= job.allocation[0].devices * job.cpus_per_device;
      job.expected_end_s = 2000 + 13 * i;
      job.last_resize_s = 0;
    }
    jobs.push_back(job);
  }
  std::vector<double> times, cpu_times;
  size_t decisions = 0;
  for (int rep = 0; rep < 7; ++rep) {
    auto start = Clock::now();
    double cpu_start = ThreadCpuSeconds();
    decisions = policy->Decide(cluster, jobs, 1000).decisions.size();
    cpu_times.push_back(ThreadCpuSeconds() - cpu_start);
    times.push_back(Seconds(start));
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  std::printf("decide %-10s 1000 nodes / 500 jobs: median %.2f ms wall, %.2f ms CPU (%zu "
              "decisions)\n",
              name.c_str(), times[times.size() / 2] * 1e3, cpu_times[cpu_times.size() / 2] * 1e3,
              decisions);
}

// A long trace from a short one, deterministically: `copies` back-to-back copies, copy k's
// submit times shifted by k x (the window's span + its mean gap between submissions, so the
// arrival rate stays the same across the seams) and its ids suffixed "~k" (k >= 1: copy 0 is
// the trace itself), so every id is unique and draws its own hashed SLA class and model.
std::vector<elastic::sim::TraceJob> RepeatTrace(const std::vector<elastic::sim::TraceJob>& trace,
                                                int copies) {
  if (trace.size() < 2) return trace;
  const std::int64_t span = trace.back().submit_time_s - trace.front().submit_time_s;
  const std::int64_t shift = span + span / static_cast<std::int64_t>(trace.size() - 1);
  std::vector<elastic::sim::TraceJob> repeated;
  repeated.reserve(trace.size() * static_cast<size_t>(std::max(copies, 1)));
  for (int k = 0; k < copies; ++k) {
    for (elastic::sim::TraceJob job : trace) {
      job.submit_time_s += k * shift;
      if (k > 0) job.id += "~" + std::to_string(k);
      repeated.push_back(std::move(job));
    }
  }
  return repeated;
}

// Replays `trace` on `spec` with every policy; prints one row each and returns CPU seconds per
// policy (empty on error).
std::map<std::string, double> ReplayAll(const std::string& label, const std::string& spec,
                                        const std::vector<elastic::sim::TraceJob>& trace) {
  std::map<std::string, double> cpu;
  auto cluster = elastic::sim::ParseClusterSpec(spec);
  if (!cluster) {
    std::fprintf(stderr, "%s\n", cluster.error.c_str());
    return {};
  }
  double backfill_jct = 0.0;
  for (const char* name : kPolicies) {
    auto policy = *elastic::policy::MakePolicy(name);
    auto start = Clock::now();
    double cpu_start = ThreadCpuSeconds();
    elastic::sim::SimResult result = elastic::sim::Simulate(*cluster, trace, *policy);
    double cpu_seconds = ThreadCpuSeconds() - cpu_start;
    double seconds = Seconds(start);
    if (!result.error.empty()) {
      std::fprintf(stderr, "%s\n", result.error.c_str());
      return {};
    }
    cpu[name] = cpu_seconds;
    if (backfill_jct == 0.0) backfill_jct = result.avg_jct_s;
    std::printf(
        "replay %-7s %-6s %-10s %zu jobs: %.3f s wall, %.3f s CPU | avg JCT %.0f s "
        "(backfill/this %.2fx) p99 %.0f s makespan %.0f s util %.3f (%.3f while jobs arrive) "
        "queue %.0f s preemptions %ld (%ld jobs) events %ld\n",
        label.c_str(), spec.c_str(), name, result.jobs.size(), seconds, cpu_seconds,
        result.avg_jct_s, backfill_jct / result.avg_jct_s, result.p99_jct_s, result.makespan_s,
        result.gpu_utilization, result.gpu_utilization_submission, result.avg_queue_s,
        result.preemptions, result.preempted_jobs, result.events);
    std::fflush(stdout);
  }
  return cpu;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.substr(0, name.find('_'));
}

}  // namespace

int main(int argc, char** argv) {
  int copies = 10;
  int arg = 1;
  if (arg + 1 < argc && std::string(argv[arg]) == "--copies") {
    copies = std::max(0, std::atoi(argv[arg + 1]));
    arg += 2;
  }
  std::vector<std::string> traces{ELASTIC_DEV_TRACE, ELASTIC_DEV_TRACE_ITP};
  if (arg < argc) traces = {argv[arg++]};
  std::vector<std::string> specs(argv + arg, argv + argc);
  if (specs.empty()) specs = {"16x8", "64x8"};
  for (const char* name : kPolicies) BenchDecision(name);
  std::map<std::string, double> short_cpu;  // the first trace on the last spec
  std::vector<elastic::sim::TraceJob> first;
  for (const std::string& path : traces) {
    auto trace = elastic::sim::LoadTrace(path);
    if (!trace) {
      std::fprintf(stderr, "policy_bench: %s\n", trace.error.c_str());
      return 1;
    }
    for (const std::string& spec : specs) {
      std::map<std::string, double> cpu = ReplayAll(Basename(path), spec, *trace);
      if (cpu.empty()) return 1;
      if (first.empty() && spec == specs.back()) short_cpu = cpu;
    }
    if (first.empty()) first = std::move(*trace);
  }
  if (copies <= 1) return 0;
  const std::vector<elastic::sim::TraceJob> long_trace = RepeatTrace(first, copies);
  std::printf("long trace: %s repeated %d times (%zu jobs; copy k submitted k x (span + mean "
              "gap) later, ids suffixed ~k), target <= 30 s CPU per policy\n",
              traces.front().c_str(), copies, long_trace.size());
  std::map<std::string, double> long_cpu =
      ReplayAll(Basename(traces.front()) + "x" + std::to_string(copies), specs.back(), long_trace);
  if (long_cpu.empty()) return 1;
  for (const char* name : kPolicies) {
    std::printf("scaling %-10s on %s: %zu jobs %.3f s CPU, %zu jobs %.3f s CPU (%s): %.1fx the "
                "time for %dx the jobs\n",
                name, specs.back().c_str(), first.size(), short_cpu[name], long_trace.size(),
                long_cpu[name], long_cpu[name] <= 30.0 ? "ok" : "OVER",
                long_cpu[name] / std::max(short_cpu[name], 1e-9), copies);
  }
  return 0;
}
