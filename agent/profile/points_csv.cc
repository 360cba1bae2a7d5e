// ProfiledPointsToCsv: the plan (perf::Describe, which may hold commas) is quoted; labels are
// checked comma-free by the profile command.
#include "agent/profile/points_csv.h"

#include <cstdio>
#include <sstream>

namespace elastic::agent {
namespace {

std::string Exact(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

std::string ProfiledPointsToCsv(const perf::ProfiledPoints& points) {
  std::ostringstream csv;
  csv << "label,plan,workers,intra_threads,dp,pp,ga_steps,micro_batches,gc,zero_stage,offload,"
         "cpu_threads,gpus_per_node,cpus,b_intra,b_inter,b_pcie,gpu_flops,fwd_s_per_pass,"
         "bwd_s_per_pass,bwd_s_per_sample,measured_steps,median_step_s,throughput\n";
  for (const perf::ProfiledRun& run : points.runs) {
    const perf::ExecutionPlan& plan = run.point.plan;
    const perf::Resources& res = run.point.resources;
    csv << run.label << ",\"" << perf::Describe(plan) << "\"," << res.gpus << ","
        << run.intra_threads << "," << plan.dp << "," << plan.pp << "," << plan.ga_steps << ","
        << plan.micro_batches << "," << (plan.gc ? 1 : 0) << "," << plan.zero_stage << ","
        << (plan.offload ? 1 : 0) << "," << plan.cpu_threads << "," << res.gpus_per_node << ","
        << res.cpus << "," << Exact(res.b_intra) << "," << Exact(res.b_inter) << ","
        << Exact(res.b_pcie) << "," << Exact(res.gpu_flops) << "," << Exact(res.fwd_s_per_pass)
        << "," << (res.backward ? Exact(res.backward->s_per_pass) : "") << ","
        << (res.backward ? Exact(res.backward->s_per_sample) : "") << "," << run.measured_steps
        << "," << Exact(run.median_step_s) << "," << Exact(run.point.throughput) << "\n";
  }
  return csv.str();
}

}  // namespace elastic::agent
