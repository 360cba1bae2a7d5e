// elasticd's per-cycle decision (policy::DecideResizes) on a synthetic 1,000-node / 500-job Slurm
// view, in two scenarios (idle nodes to grow into; waiting jobs that need shrinks): what elasticd
// runs, the 4-argument DecideResizes with MakePolicy(name) for each live policy, side by side with
// the original greedy rule (the 3-argument DecideResizes). Median of N repeats (argv[1], default
// 21) of the CPU time of this thread and of the wall time (the machine may be loaded: CPU time
// is the figure to compare). Target (issue 4): <= 10 ms per cycle.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/policy/resize_decision.h"

namespace {

using namespace elastic::policy;
using Clock = std::chrono::steady_clock;

std::string NodeName(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "n%04d", i);  // zero-padded: name order = index order
  return name;
}

// 1,000 nodes in two partitions; 200 elastic jobs on 2-4 nodes each (MIN 1, MAX 8), 100 rigid
// jobs on 2 nodes each, 200 pending jobs. `pressure`: the pending jobs are large and ask for
// nodes only shrinks can free; otherwise they are held (Dependency) and ~200 nodes are idle.
struct Scenario {
  SlurmView view;
  std::vector<ElasticJob> elastic;
};

Scenario MakeScenario(bool pressure) {
  Scenario s;
  s.view.now = 1'700'000'000;
  for (int i = 0; i < 1000; ++i) {
    SlurmNode node;
    node.name = NodeName(i);
    node.partitions = {i < 500 ? "gpu" : "batch"};
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
  for (int i = 0; i < 200; ++i) {
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
  for (int i = 0; i < 100; ++i) {
    SlurmJob job;
    job.job_id = ++id;
    job.state = SlurmJobState::kRunning;
    job.start_time = s.view.now - 100 * i;
    job.end_time = job.start_time + 86400;
    take(job, 2);
    s.view.jobs.push_back(job);
  }
  for (int i = 0; i < 200; ++i) {
    SlurmJob job;
    job.job_id = ++id;
    job.state = SlurmJobState::kPending;
    job.partition = i % 2 ? "gpu" : "batch";
    job.priority = 100000 - i;
    job.reason = pressure ? (i == 0 ? "Resources" : "Priority") : "Dependency";
    job.min_nodes = job.max_nodes = pressure ? 16 + i % 32 : 4;
    job.start_time = s.view.now + 600 + 60 * i;
    for (int k = 0; k < job.min_nodes && pressure; ++k) {
      job.sched_nodes.push_back(NodeName((37 * i + 11 * k) % 1000));
    }
    s.view.jobs.push_back(job);
  }
  SlurmReservation maintenance;
  maintenance.name = "maint";
  maintenance.start_time = s.view.now + 1800;
  maintenance.end_time = maintenance.start_time + 7200;
  for (int i = 990; i < 1000; ++i) maintenance.nodes.push_back(NodeName(i));
  s.view.reservations.push_back(maintenance);
  return s;
}

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

// One row: `policy` null = the original greedy rule.
void Bench(const char* scenario, const Scenario& s, const char* label, const Policy* policy,
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
  std::printf("%-9s %-10s cpu %7.3f ms  wall %7.3f ms  %-4s  %3d grow(s) %3d shrink(s) %3zu held\n",
              scenario, label, cpu, Median(wall_ms), cpu <= 10.0 ? "ok" : "OVER", grows, shrinks,
              decision.held_back.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
  std::printf("1000 nodes / 500 jobs, median of %d cycles (CPU time of the thread; target <= 10 ms)"
              "\n", repeats);
  const char* kPolicies[] = {"easyscale", "rubick", "elastic"};
  for (bool pressure : {false, true}) {
    const Scenario s = MakeScenario(pressure);
    const char* scenario = pressure ? "pressure" : "grow";
    Bench(scenario, s, "greedy", nullptr, repeats);
    for (const char* name : kPolicies) {
      auto made = MakePolicy(name, LivePolicyOptions(LiveOptionsFrom(BenchOptions())));
      if (!made) {
        std::fprintf(stderr, "resize_planner_bench: %s\n", made.error.c_str());
        return 1;
      }
      Bench(scenario, s, name, made->get(), repeats);
    }
  }
  return 0;
}
