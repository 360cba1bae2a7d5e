// Registry <-> JSON, and its crash-safe file.
#include "scheduler/daemon/registry_store.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"

namespace elastic::daemon {
namespace {

constexpr int kFormatVersion = 1;

// The registry file's own record of an order (issued time included; not the wire's encoding,
// protocol/messages.h, which a supervisor reads).
nlohmann::json OrderJson(const ResizeOrder& o) {
  return {{"generation", o.generation}, {"grow", o.grow}, {"target_nodes", o.target_nodes},
          {"changed_nodes", o.changed_nodes}, {"issued", o.issued_unix}, {"reason", o.reason}};
}

ResizeOrder OrderFrom(const nlohmann::json& j) {
  return {.generation = j.at("generation").get<std::uint64_t>(),
          .grow = j.at("grow").get<bool>(),
          .target_nodes = j.at("target_nodes").get<std::vector<std::string>>(),
          .changed_nodes = j.at("changed_nodes").get<std::vector<std::string>>(),
          .reason = j.at("reason").get<std::string>(),
          .issued_unix = j.at("issued").get<std::int64_t>()};
}

nlohmann::json JobJson(const JobRecord& job) {
  nlohmann::json j = {{"job_id", job.job_id}, {"uid", job.uid}, {"nodes", job.nodes},
                      {"min_nodes", job.min_nodes}, {"max_nodes", job.max_nodes},
                      {"bounds_known", job.bounds_known}, {"ests", job.ests},
                      {"generation", job.generation},
                      {"last_order_generation", job.last_order_generation}, {"plan", job.plan},
                      {"class", job.sla_class}, {"state", job.supervisor_state},
                      {"detail", job.detail}, {"registered", job.registered_unix},
                      {"last_seen", job.last_seen_unix}, {"last_resize", job.last_resize_unix},
                      {"resizes", job.resizes}, {"last_pause_s", job.last_pause_s},
                      {"last_pause_generation", job.last_pause_generation}};
  j["order"] = job.order ? OrderJson(*job.order) : nlohmann::json();
  return j;
}

JobRecord JobFrom(const nlohmann::json& j) {
  JobRecord job;
  job.job_id = j.at("job_id").get<std::uint32_t>();
  job.uid = j.at("uid").get<uid_t>();
  job.nodes = j.at("nodes").get<std::vector<std::string>>();
  job.min_nodes = j.at("min_nodes").get<int>();
  job.max_nodes = j.at("max_nodes").get<int>();
  job.bounds_known = j.at("bounds_known").get<bool>();
  job.ests = j.at("ests").get<int>();
  job.generation = j.at("generation").get<std::uint64_t>();
  job.last_order_generation = j.at("last_order_generation").get<std::uint64_t>();
  job.plan = j.at("plan").get<std::string>();
  job.sla_class = j.at("class").get<std::string>();
  job.supervisor_state = j.at("state").get<std::string>();
  job.detail = j.at("detail").get<std::string>();
  job.registered_unix = j.at("registered").get<std::int64_t>();
  job.last_seen_unix = j.at("last_seen").get<std::int64_t>();
  job.last_resize_unix = j.at("last_resize").get<std::int64_t>();
  job.resizes = j.at("resizes").get<int>();
  job.last_pause_s = j.at("last_pause_s").get<double>();
  job.last_pause_generation = j.value("last_pause_generation", std::uint64_t{0});  // 0.1.0 files
  if (!j.at("order").is_null()) job.order = OrderFrom(j.at("order"));
  // A restored job's AdminComment is written again at the first cycle: the daemon may have died
  // between a change (saved at once) and the cycle that writes the comment, which would
  // otherwise stay stale until the job changes again (seen in the restart test).
  job.comment_dirty = true;
  return job;
}

}  // namespace

nlohmann::json RegistryToJson(const DaemonState& state) {
  nlohmann::json jobs = nlohmann::json::array(), recent = nlohmann::json::array();
  for (const JobRecord& job : state.jobs) jobs.push_back(JobJson(job));
  for (const Decision& d : state.recent) {
    recent.push_back({{"time", d.unix_time}, {"job_id", d.job_id}, {"action", d.action},
                      {"reason", d.reason}});
  }
  return {{"format", kFormatVersion}, {"jobs", jobs}, {"decisions", recent}};
}

void RegistryFromJson(const nlohmann::json& doc, DaemonState& state) {
  try {
    if (doc.at("format").get<int>() != kFormatVersion) {
      throw std::runtime_error("unsupported registry format " + doc.at("format").dump());
    }
    std::vector<JobRecord> jobs;
    for (const auto& j : doc.at("jobs")) jobs.push_back(JobFrom(j));
    std::sort(jobs.begin(), jobs.end(),
              [](const JobRecord& a, const JobRecord& b) { return a.job_id < b.job_id; });
    std::deque<Decision> recent;
    for (const auto& d : doc.at("decisions")) {
      recent.push_back({d.at("time").get<std::int64_t>(), d.at("job_id").get<std::uint32_t>(),
                        d.at("action").get<std::string>(), d.at("reason").get<std::string>()});
    }
    state.jobs = std::move(jobs);
    state.recent = std::move(recent);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed registry: ") + e.what());
  }
}

// registry.json.tmp under a fixed name (a crash leftover is reused, not piled up), never through
// a symlink, and fchmod'ed 0600 so a leftover's mode is not passed on (docs/security.md W9).
void SaveRegistry(const std::string& dir, const DaemonState& state) {
  // replace: a stray invalid UTF-8 byte in user text must not make every later save fail.
  const std::string text =
      RegistryToJson(state).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  WriteFileAtomically(dir + "/registry.json", text + "\n",
                      {.mode = 0600, .temp_name = TempName::kFixed});
}

bool LoadRegistry(const std::string& dir, DaemonState& state) {
  const std::string path = dir + "/registry.json";
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) throw std::runtime_error(path + " is not valid JSON");
  RegistryFromJson(doc, state);
  return true;
}

}  // namespace elastic::daemon
