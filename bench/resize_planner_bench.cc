// elasticd's per-cycle decision (policy::DecideResizes) on synthetic Slurm views of 1,000 nodes /
// 500 jobs, 3,000 / 1,500 and 10,000 / 5,000 (the same mix scaled), in two scenarios (idle nodes
// to grow into; waiting jobs that need shrinks): what elasticd runs, the 4-argument
// DecideResizes with MakePolicy(name) for each live policy, side by side with the original greedy
// rule (the 3-argument DecideResizes). Median of N repeats (argv[1], default 21; fewer at the
// larger sizes, never under 3) of the CPU time of this thread and of the wall time (the machine
// may be loaded: CPU time is the figure to compare), then how the cost grows with the size.
// Optional argv[2..4] keep one scale (1, 3 or 10), scenario and policy: for profiling one row
// under callgrind without the others' instructions.
// Target (issue 28): <= 10 ms per cycle at 10,000 nodes / 5,000 jobs.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/policy/resize_decision.h"

namespace {

using namespace elastic::policy;
using Clock = std::chrono::steady_clock;

std::string NodeName(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "n%05d", i);  // zero-padded: name order = index order
  return name;
}

// `scale` x 1,000 nodes in two partitions; scale x 200 elastic jobs on 2-4 nodes each (MIN 1,
// MAX 8), scale x 100 rigid jobs on 2 nodes each, scale x 200 pending jobs. `pressure`: the
// pending jobs are large and ask for nodes only shrinks can free; otherwise they are held
// (Dependency) and ~scale x 200 nodes are idle. Jobs keep their sizes at every scale.
struct Scenario {
  SlurmView view;
  std::vector<ElasticJob> elastic;
};

Scenario MakeScenario(bool pressure, int scale) {
  Scenario s;
  s.view.now = 1'700'000'000;
  const int nodes = 1000 * scale;
  for (int i = 0; i < nodes; ++i) {
    SlurmNode node;
    node.name = NodeName(i);
    node.partitions = {i < nodes / 2 ? "gpu" : "batch"};
    node.cpus = 64;
    node.available = true;
    s.view.nodes.push_back(node);
  }
  int next_node = 0;
  auto take = [&](SlurmJob& job, int count) {
    for (int k = 0; k < count; ++k) {
      job.nodes.push_back(NodeName(next_node));
      s.view.nodes[next_node++].alloc_cpus = 64;
    }
    job.batch_host = job.nodes.front();
    job.min_nodes = count;
    job.partition = s.view.nodes[next_node - 1].partitions.front();
  };
  std::uint32_t id = 1000;
  for (int i = 0; i < 200 * scale; ++i) {
    SlurmJob job;
    job.job_id = ++id;
    job.state = SlurmJobState::kRunning;
    job.exclusive = true;
    job.start_time = s.view.now - 3600 - 10 * i;
    take(job, 2 + i % 3);
    ElasticJob e;
    e.job_id = job.job_id;
    e.min_nodes = 1;
    e.max_nodes = 8;
    e.ests = 8 << (i % 3);
    e.last_resize = s.view.now - 600;
    e.resizes = i % 4;
    s.elastic.push_back(e);
    s.view.jobs.push_back(job);
  }
  for (int i = 0; i < 100 * scale; ++i) {
    SlurmJob job;
    job.job_id = ++id;
    job.state = SlurmJobState::kRunning;
    job.start_time = s.view.now - 100 * i;
    job.end_time = job.start_time + 86400;
    take(job, 2);
    s.view.jobs.push_back(job);
  }
  for (int i = 0; i < 200 * scale; ++i) {
    SlurmJob job;
    job.job_id = ++id;
    job.state = SlurmJobState::kPending;
    job.partition = i % 2 ? "gpu" : "batch";
    job.priority = 100000 - i;
    job.reason = pressure ? (i == 0 ? "Resources" : "Priority") : "Dependency";
    job.min_nodes = job.max_nodes = pressure ? 16 + i % 32 : 4;
    job.start_time = s.view.now + 600 + 60 * i;
    for (int k = 0; k < job.min_nodes && pressure; ++k) {
      job.sched_nodes.push_back(NodeName((37 * i + 11 * k) % nodes));
    }
    s.view.jobs.push_back(job);
  }
  SlurmReservation maintenance;
  maintenance.name = "maint";
  maintenance.start_time = s.view.now + 1800;
  maintenance.end_time = maintenance.start_time + 7200;
  for (int i = nodes - 10 * scale; i < nodes; ++i) maintenance.nodes.push_back(NodeName(i));
  s.view.reservations.push_back(maintenance);
  return s;
}

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// FNV-1a over everything the decision says (orders, nodes, reasons, held-back jobs): equal
// fingerprints across builds mean an optimisation left the decision as it was.
std::uint64_t Fingerprint(const ResizeDecision& decision) {
  std::uint64_t hash = 1469598103934665603ULL;
  auto add = [&hash](const std::string& text) {
    for (unsigned char ch : text + '\n') hash = (hash ^ ch) * 1099511628211ULL;
  };
  for (const ResizeProposal& o : decision.proposals) {
    add(std::to_string(o.job_id) + (o.kind == ResizeKind::kGrow ? " grow " : " shrink ") +
        std::to_string(o.from_nodes) + " " + std::to_string(o.to_nodes) + " " + o.reason);
    for (const std::string& node : o.target_nodes) add(node);
    for (const std::string& node : o.changed_nodes) add(node);
  }
  for (const HeldBack& held : decision.held_back) add(std::to_string(held.job_id) + held.reason);
  return hash;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

ResizeDecisionOptions BenchOptions() {
  ResizeDecisionOptions options;
  options.min_resize_interval_s = 60;
  return options;
}

// One row: `policy` null = the original greedy rule. Returns the median CPU ms.
double Bench(const char* scenario, const Scenario& s, const char* label, const Policy* policy,
             int repeats) {
  const ResizeDecisionOptions options = BenchOptions();
  std::vector<double> cpu_ms, wall_ms;
  ResizeDecision decision;
  for (int rep = 0; rep < repeats; ++rep) {
    const double cpu = ThreadCpuMs();
    const auto start = Clock::now();
    decision = policy ? DecideResizes(s.view, s.elastic, options, *policy)
                      : DecideResizes(s.view, s.elastic, options);
    wall_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    cpu_ms.push_back(ThreadCpuMs() - cpu);
  }
  int grows = 0, shrinks = 0;
  for (const ResizeProposal& o : decision.proposals) {
    (o.kind == ResizeKind::kGrow ? grows : shrinks)++;
  }
  const double cpu = Median(cpu_ms);
  std::printf("%-9s %-10s cpu %8.3f ms  wall %8.3f ms  %-4s  %4d grow(s) %4d shrink(s) %4zu "
              "held  decision %016llx\n",
              scenario, label, cpu, Median(wall_ms), cpu <= 10.0 ? "ok" : "OVER", grows, shrinks,
              decision.held_back.size(),
              static_cast<unsigned long long>(Fingerprint(decision)));
  std::fflush(stdout);
  return cpu;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
  const int only_scale = argc > 2 ? std::atoi(argv[2]) : 0;
  const std::string only_scenario = argc > 3 ? argv[3] : "";
  const std::string only_policy = argc > 4 ? argv[4] : "";
  const int kScales[] = {1, 3, 10};
  const char* kPolicies[] = {"greedy", "easyscale", "rubick", "elastic"};
  std::map<std::string, std::vector<double>> cpu;  // "scenario policy" -> per scale
  for (int scale : kScales) {
    if (only_scale != 0 && scale != only_scale) continue;
    const int runs = std::max(3, repeats / scale);
    std::printf("%d nodes / %d jobs, median of %d cycles (CPU time of the thread; target <= 10 "
                "ms)\n",
                1000 * scale, 500 * scale, runs);
    for (bool pressure : {false, true}) {
      const char* scenario = pressure ? "pressure" : "grow";
      if (!only_scenario.empty() && only_scenario != scenario) continue;
      const Scenario s = MakeScenario(pressure, scale);
      for (const char* name : kPolicies) {
        if (!only_policy.empty() && only_policy != name) continue;
        std::unique_ptr<Policy> policy;
        if (std::string(name) != "greedy") {
          auto made = MakePolicy(name, LivePolicyOptions(LiveOptionsFrom(BenchOptions())));
          if (!made) {
            std::fprintf(stderr, "resize_planner_bench: %s\n", made.error.c_str());
            return 1;
          }
          policy = std::move(*made);
        }
        cpu[std::string(scenario) + " " + name].push_back(
            Bench(scenario, s, name, policy.get(), runs));
      }
    }
  }
  if (only_scale != 0) return 0;  // growth needs all three sizes
  std::printf("cost growth (CPU ms ratio; sizes grow 3x and 10x):\n");
  for (const auto& [row, ms] : cpu) {
    std::printf("%-20s 3x: %5.1fx  10x: %5.1fx\n", row.c_str(), ms[1] / std::max(ms[0], 1e-6),
                ms[2] / std::max(ms[0], 1e-6));
  }
  return 0;
}
