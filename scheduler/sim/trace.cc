// CSV trace loader with file:line: column errors.
#include "scheduler/sim/trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace elastic::sim {
namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream stream(line);
  while (std::getline(stream, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

bool ParseInt(const std::string& text, std::int64_t minimum, std::int64_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty() && out >= minimum;
}

}  // namespace

Result<std::vector<TraceJob>> ParseTrace(std::istream& in, const std::string& name) {
  std::vector<TraceJob> jobs;
  auto fail = [&](int line, const std::string& what) {
    return Result<std::vector<TraceJob>>::Fail(name + ":" + std::to_string(line) + ": " + what);
  };
  static const std::vector<std::string> kRequired{"job_id", "submit_time_s", "num_gpus",
                                                  "duration_s"};
  std::string line;
  if (!std::getline(in, line)) return fail(1, "empty file: expected a header line");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> header = SplitCsv(line);
  for (size_t i = 0; i < kRequired.size(); ++i) {
    if (i >= header.size() || header[i] != kRequired[i]) {
      return fail(1, "header column " + std::to_string(i + 1) + ": expected \"" + kRequired[i] +
                         "\" (header must start job_id,submit_time_s,num_gpus,duration_s)");
    }
  }
  auto vc = std::find(header.begin(), header.end(), "vc");
  std::set<std::string> ids;
  for (int number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields = SplitCsv(line);
    if (fields.size() != header.size()) {
      return fail(number, "expected " + std::to_string(header.size()) + " columns, found " +
                              std::to_string(fields.size()));
    }
    TraceJob job;
    job.id = fields[0];
    if (job.id.empty()) return fail(number, "column job_id: empty: expected a job name");
    if (!ids.insert(job.id).second) {
      return fail(number, "column job_id: duplicate id \"" + job.id + "\"");
    }
    std::int64_t gpus = 0;
    auto bad = [&](const std::string& column, const std::string& value, const char* expected) {
      return fail(number, "column " + column + ": invalid value \"" + value + "\": expected " +
                              expected);
    };
    if (!ParseInt(fields[1], 0, job.submit_time_s)) {
      return bad("submit_time_s", fields[1], "an integer >= 0");
    }
    if (!ParseInt(fields[2], 1, gpus) || gpus > 1'000'000) {
      return bad("num_gpus", fields[2], "an integer >= 1");
    }
    job.gpus = static_cast<int>(gpus);
    if (!ParseInt(fields[3], 1, job.duration_s)) {
      return bad("duration_s", fields[3], "an integer >= 1");
    }
    if (vc != header.end()) job.tenant = fields[vc - header.begin()];
    jobs.push_back(std::move(job));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return a.submit_time_s < b.submit_time_s;
  });
  return Result<std::vector<TraceJob>>::Ok(std::move(jobs));
}

Result<std::vector<TraceJob>> LoadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Result<std::vector<TraceJob>>::Fail(path + ": cannot open trace file");
  return ParseTrace(in, path);
}

}  // namespace elastic::sim
