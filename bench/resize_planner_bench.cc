// elasticd's per-cycle decision (policy::PlanResizes) on a synthetic 1,000-node / 500-job Slurm
// view: median wall time of one cycle in two scenarios (idle nodes to grow into; waiting jobs
// that need shrinks). Target (issue 4): <= 10 ms per cycle.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "scheduler/policy/resize_planner.h"

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

void Bench(const char* name, bool pressure) {
  const Scenario s = MakeScenario(pressure);
  ResizePlannerOptions options;
  options.min_resize_interval_s = 60;
  std::vector<double> ms;
  ResizePlan plan;
  for (int rep = 0; rep < 21; ++rep) {
    const auto start = Clock::now();
    plan = PlanResizes(s.view, s.elastic, options);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  int grows = 0, shrinks = 0;
  for (const ResizeOrderPlan& o : plan.orders) (o.kind == ResizeKind::kGrow ? grows : shrinks)++;
  std::printf("plan %-9s 1000 nodes / 500 jobs: median %.3f ms (min %.3f, max %.3f; "
              "target <= 10 ms) -> %d grow(s), %d shrink(s), %zu held back\n",
              name, ms[ms.size() / 2], ms.front(), ms.back(), grows, shrinks,
              plan.held_back.size());
}

}  // namespace

int main() {
  Bench("grow", false);
  Bench("pressure", true);
  return 0;
}
