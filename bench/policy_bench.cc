// Benchmarks for the policies and the simulator; prints times and avg-JCT ratios to backfill.
// Usage: policy_bench [TRACE.csv [CLUSTER_SPEC...]]  (defaults: dev trace, 16x8 and 64x8)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/trace.h"

namespace {

using Clock = std::chrono::steady_clock;

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

}  // namespace

int main(int argc, char** argv) {
  std::string trace_path = argc > 1 ? argv[1] : ELASTIC_DEV_TRACE;
  std::vector<std::string> specs;
  for (int i = 2; i < argc; ++i) specs.push_back(argv[i]);
  if (specs.empty()) specs = {"16x8", "64x8"};
  for (const char* name : {"backfill", "easyscale", "rubick", "elastic"}) BenchDecision(name);
  auto trace = elastic::sim::LoadTrace(trace_path);
  if (!trace) {
    std::fprintf(stderr, "policy_bench: %s\n", trace.error.c_str());
    return 1;
  }
  for (const std::string& spec : specs) {
    auto cluster = elastic::sim::ParseClusterSpec(spec);
    if (!cluster) {
      std::fprintf(stderr, "%s\n", cluster.error.c_str());
      return 1;
    }
    double backfill_jct = 0.0;
    for (const char* name : {"backfill", "easyscale", "rubick", "elastic"}) {
      auto policy = *elastic::policy::MakePolicy(name);
      auto start = Clock::now();
      double cpu_start = ThreadCpuSeconds();
      elastic::sim::SimResult result = elastic::sim::Simulate(*cluster, *trace, *policy);
      double cpu_seconds = ThreadCpuSeconds() - cpu_start;
      double seconds = Seconds(start);
      if (!result.error.empty()) {
        std::fprintf(stderr, "%s\n", result.error.c_str());
        return 1;
      }
      if (backfill_jct == 0.0) backfill_jct = result.avg_jct_s;
      std::printf(
          "replay %-6s %-10s %zu jobs: %.3f s wall, %.3f s CPU | avg JCT %.0f s (backfill/this "
          "%.2fx) p99 %.0f s makespan %.0f s util %.3f (%.3f while jobs arrive) queue %.0f s "
          "preemptions %ld (%ld jobs)\n",
          spec.c_str(), name, result.jobs.size(), seconds, cpu_seconds, result.avg_jct_s,
          backfill_jct / result.avg_jct_s, result.p99_jct_s, result.makespan_s,
          result.gpu_utilization, result.gpu_utilization_submission, result.avg_queue_s,
          result.preemptions, result.preempted_jobs);
    }
  }
  return 0;
}
