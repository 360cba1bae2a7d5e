// The JSON codec of `status`, elasticd's largest reply: the jobs a caller may see and recent
// decisions (docs/protocol.md; printed by `elasticd status`).
#include "protocol/messages.h"

namespace elastic::daemon {
namespace {

using nlohmann::json;

// Status fields are read leniently, as `elasticd status` always has: a field an older elasticd
// does not send shows as its default.
template <typename T>
T Get(const json& doc, const char* key, T fallback) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    throw DecodeError(std::string("malformed status from elasticd: \"") + key + "\": " + e.what());
  }
}

json EncodeJob(const JobStatus& job) {
  return {{"job_id", job.job_id}, {"uid", job.uid}, {"nodes", job.node_list.size()},
          {"node_list", job.node_list}, {"min_nodes", job.min_nodes},
          {"max_nodes", job.max_nodes}, {"bounds_known", job.bounds_known}, {"ests", job.ests},
          {"generation", job.generation}, {"plan", job.plan},
          {"running_plan", job.running_plan},
          {"predicted_samples_per_s", job.predicted_samples_per_s},
          {"speed_curve", job.speed_curve}, {"class", job.sla_class}, {"state", job.state},
          {"detail", job.detail}, {"resizes", job.resizes}, {"last_resize", job.last_resize_unix},
          {"last_pause_s", job.last_pause_s},
          {"order", job.order ? Encode(*job.order) : json()}};
}

JobStatus DecodeJob(const json& doc) {
  if (!doc.is_object()) throw DecodeError("malformed status from elasticd: a job is no object");
  JobStatus job;
  job.job_id = Get<std::uint32_t>(doc, "job_id", 0);
  job.uid = Get<uid_t>(doc, "uid", 0);
  job.node_list = Get<std::vector<std::string>>(doc, "node_list", {});
  job.min_nodes = Get<int>(doc, "min_nodes", 0);
  job.max_nodes = Get<int>(doc, "max_nodes", 0);
  job.bounds_known = Get<bool>(doc, "bounds_known", false);
  job.ests = Get<int>(doc, "ests", 0);
  job.generation = Get<std::uint64_t>(doc, "generation", 0);
  job.plan = Get<std::string>(doc, "plan", "?");
  job.running_plan = Get<std::string>(doc, "running_plan", "");
  job.predicted_samples_per_s = Get<double>(doc, "predicted_samples_per_s", 0.0);
  job.speed_curve = Get<std::vector<double>>(doc, "speed_curve", {});
  job.sla_class = Get<std::string>(doc, "class", "?");
  job.state = Get<std::string>(doc, "state", "");
  job.detail = Get<std::string>(doc, "detail", "");
  job.resizes = Get<int>(doc, "resizes", 0);
  job.last_resize_unix = Get<std::int64_t>(doc, "last_resize", 0);
  job.last_pause_s = Get<double>(doc, "last_pause_s", 0.0);
  auto order = doc.find("order");
  if (order != doc.end() && !order->is_null()) job.order = DecodeResizeOrder(*order);
  return job;
}

json EncodeDecision(const Decision& d) {
  return {{"time", d.unix_time}, {"job_id", d.job_id}, {"action", d.action},
          {"reason", d.reason}};
}

Decision DecodeDecision(const json& doc) {
  if (!doc.is_object()) throw DecodeError("malformed status from elasticd: a decision is no object");
  return {Get<std::int64_t>(doc, "time", 0), Get<std::uint32_t>(doc, "job_id", 0),
          Get<std::string>(doc, "action", "?"), Get<std::string>(doc, "reason", "")};
}

}  // namespace

json Encode(const StatusReply& r) {
  json jobs = json::array(), decisions = json::array();
  for (const JobStatus& job : r.jobs) jobs.push_back(EncodeJob(job));
  for (const Decision& d : r.decisions) decisions.push_back(EncodeDecision(d));
  return {{"version", r.version}, {"policy", r.policy}, {"uptime_s", r.uptime_s},
          {"jobs", std::move(jobs)}, {"decisions", std::move(decisions)}};
}

StatusReply DecodeStatusReply(const json& doc) {
  if (!doc.is_object()) throw DecodeError("malformed status from elasticd: not a JSON object");
  StatusReply r;
  r.version = Get<std::string>(doc, "version", "?");
  r.policy = Get<std::string>(doc, "policy", "?");
  r.uptime_s = Get<std::int64_t>(doc, "uptime_s", 0);
  for (const json& job : Get<json>(doc, "jobs", json::array())) r.jobs.push_back(DecodeJob(job));
  for (const json& d : Get<json>(doc, "decisions", json::array())) {
    r.decisions.push_back(DecodeDecision(d));
  }
  return r;
}

}  // namespace elastic::daemon
