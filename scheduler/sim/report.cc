// Summary text, JSON and SVG timeline for a replay.
#include "scheduler/sim/report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace elastic::sim {

std::string Summary(const SimResult& result) {
  char text[768];
  std::snprintf(text, sizeof text,
                "policy %s: %zu jobs on %d devices\n"
                "  avg JCT %.1f s, p99 JCT %.1f s, makespan %.1f s\n"
                "  GPU utilization %.3f (%.3f while jobs arrive, %.3f while jobs queue, %.0f s)\n"
                "  CPU utilization %.3f\n"
                "  avg queueing delay %.1f s\n"
                "  %ld events, %ld policy calls, %ld preemptions (%ld jobs)\n",
                result.policy.c_str(), result.jobs.size(), result.total_devices, result.avg_jct_s,
                result.p99_jct_s, result.makespan_s, result.gpu_utilization,
                result.gpu_utilization_submission, result.gpu_utilization_queued, result.queued_s,
                result.cpu_utilization, result.avg_queue_s, result.events, result.policy_calls,
                result.preemptions, result.preempted_jobs);
  return text;
}

nlohmann::json ToJson(const SimResult& result, const RunInfo& info) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobRecord& job : result.jobs) {
    jobs.push_back({{"id", job.id},
                    {"submit_s", job.submit_s},
                    {"start_s", job.start_s},
                    {"end_s", job.end_s},
                    {"jct_s", job.end_s - job.submit_s},
                    {"queue_s", job.start_s - job.submit_s},
                    {"requested_devices", job.requested_devices},
                    {"min_devices", job.min_devices},
                    {"max_devices", job.max_devices},
                    {"peak_devices", job.peak_devices},
                    {"resizes", job.resizes},
                    {"preemptions", job.preemptions},
                    {"guaranteed", job.guaranteed},
                    {"rigid", job.rigid},
                    {"device_seconds", job.device_seconds}});
  }
  return {{"policy", result.policy},
          {"trace", info.trace},
          {"cluster", info.cluster},
          {"seed", info.seed},
          {"job_count", result.jobs.size()},
          {"total_devices", result.total_devices},
          {"avg_jct_s", result.avg_jct_s},
          {"p99_jct_s", result.p99_jct_s},
          {"makespan_s", result.makespan_s},
          {"gpu_utilization", result.gpu_utilization},
          {"gpu_utilization_submission", result.gpu_utilization_submission},
          {"gpu_utilization_queued", result.gpu_utilization_queued},
          {"queued_s", result.queued_s},
          {"cpu_utilization", result.cpu_utilization},
          {"avg_queue_s", result.avg_queue_s},
          {"events", result.events},
          {"policy_calls", result.policy_calls},
          {"preemptions", result.preemptions},
          {"preempted_jobs", result.preempted_jobs},
          {"jobs", jobs}};
}

std::string TimelineSvg(const SimResult& result) {
  constexpr double kWidth = 1200.0;
  constexpr double kLeft = 60.0;
  double row = std::clamp(1200.0 / std::max<size_t>(result.jobs.size(), 1), 1.0, 12.0);
  double height = row * static_cast<double>(result.jobs.size()) + 40.0;
  double begin = result.jobs.empty() ? 0.0 : result.jobs.front().submit_s;
  double span = std::max(result.makespan_s, 1.0);
  int most = 1;
  for (const JobRecord& job : result.jobs) most = std::max(most, job.max_devices);
  auto x = [&](double t) { return kLeft + (t - begin) / span * (kWidth - kLeft - 10.0); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<text x=\"4\" y=\"14\">" << result.policy << ": one row per job (submit order); "
      << "grey = queued, blue = running, darker = more devices; span " << span << " s</text>\n";
  for (size_t i = 0; i < result.jobs.size(); ++i) {
    const JobRecord& job = result.jobs[i];
    double y = 24.0 + row * static_cast<double>(i);
    svg << "<rect x=\"" << x(job.submit_s) << "\" y=\"" << y << "\" width=\""
        << std::max(0.0, x(job.start_s) - x(job.submit_s)) << "\" height=\"" << row
        << "\" fill=\"#ddd\"><title>" << job.id << " queued</title></rect>\n";
  }
  for (const Segment& segment : result.timeline) {
    const JobRecord& job = result.jobs[segment.job];
    double y = 24.0 + row * static_cast<double>(segment.job);
    int light = 200 - static_cast<int>(170.0 * segment.devices / most);
    svg << "<rect x=\"" << x(segment.from_s) << "\" y=\"" << y << "\" width=\""
        << std::max(0.5, x(segment.to_s) - x(segment.from_s)) << "\" height=\"" << row
        << "\" fill=\"rgb(" << light << "," << light << ",255)\"><title>" << job.id << ": "
        << segment.devices << " devices, " << segment.from_s << "-" << segment.to_s
        << " s</title></rect>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace elastic::sim
