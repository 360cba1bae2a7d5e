// Request dispatch for elasticd: status, the supervisor's register/poll/deregister, admin resize.
#include "scheduler/daemon/request_handler.h"

#include <algorithm>
#include <cmath>

#include "scheduler/daemon/admin_comment.h"
#include "scheduler/daemon/order_builder.h"
#include "protocol/protocol.h"

namespace elastic::daemon {
namespace {

struct Refusal {
  std::string message;
};

bool IsAdmin(const DaemonState& state, uid_t uid) { return state.admin_uids.contains(uid); }

bool Visible(const DaemonState& state, uid_t viewer, uid_t owner) {
  return viewer == owner || IsAdmin(state, viewer);
}

std::uint32_t JobIdArg(const nlohmann::json& args) {
  auto it = args.find("job_id");
  if (it == args.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() == 0 ||
      it->get<std::uint64_t>() > 0xfffffff0u) {
    throw Refusal{"request needs \"job_id\", a positive job id"};
  }
  return it->get<std::uint32_t>();
}

// A short word from the vocabulary ([a-z0-9-]), never free text into AdminComment.
std::string WordArg(const nlohmann::json& args, const char* key, const std::string& fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  if (!it->is_string()) throw Refusal{std::string("\"") + key + "\" must be a string"};
  const std::string& word = it->get_ref<const std::string&>();
  bool ok = !word.empty() && word.size() <= 32 && std::all_of(word.begin(), word.end(), [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
            });
  if (!ok) throw Refusal{std::string("\"") + key + "\" must be a short word of a-z, 0-9 and -"};
  return word;
}

std::int64_t IntArg(const nlohmann::json& args, const char* key, std::int64_t lo,
                    std::int64_t hi, std::optional<std::int64_t> fallback = std::nullopt) {
  auto it = args.find(key);
  if (it == args.end() && fallback) return *fallback;
  if (it == args.end() || !it->is_number_integer() || it->get<std::int64_t>() < lo ||
      it->get<std::int64_t>() > hi) {
    throw Refusal{std::string("\"") + key + "\" must be an integer in [" + std::to_string(lo) +
                  ", " + std::to_string(hi) + "]"};
  }
  return it->get<std::int64_t>();
}

// A finite JSON number >= 0 in `unit` (absent: `fallback`). Checked by hand: json::value() throws type_error
// for a string or a boolean, which escaped HandleRequest, so one such poll from any user with a
// registered job ended elasticd (found by tests/fuzz/request_handler_fuzzer).
double NonNegativeArg(const nlohmann::json& args, const char* key, const char* unit,
                      double fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  if (!it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>())) {
    throw Refusal{std::string("\"") + key + "\" must be a number of " + unit + " >= 0"};
  }
  return it->get<double>();
}

// The supervisor's sensitivity curve: samples/s at 1, 2, ... nodes (absent: `fallback`); at most
// kMaxCurvePoints entries (a bound on the registry's memory, not the job's size: the policy reads
// it only up to the job's max_nodes), each a finite number >= 0, not decreasing (Rubick §5.2's
// curve is the best reachable with at most n nodes).
constexpr std::size_t kMaxCurvePoints = 1024;
std::vector<double> CurveArg(const nlohmann::json& args, const char* key,
                             const std::vector<double>& fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  const std::string what = std::string("\"") + key + "\" must be an array of at most " +
                           std::to_string(kMaxCurvePoints) +
                           " non-decreasing samples/s values >= 0, one per node count from 1";
  if (!it->is_array() || it->size() > kMaxCurvePoints) throw Refusal{what};
  std::vector<double> curve;
  for (const nlohmann::json& value : *it) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() >= 0) ||
        (!curve.empty() && value.get<double>() < curve.back())) {
      throw Refusal{what};
    }
    curve.push_back(value.get<double>());
  }
  return curve;
}

double SecondsArg(const nlohmann::json& args, const char* key) {
  return NonNegativeArg(args, key, "seconds", 0.0);
}

// User text kept and shown to others (logs, `elasticd status`): at most `limit` bytes, cut at a
// UTF-8 character boundary (a cut character would make the registry unsavable as JSON), with
// control characters replaced so it can forge no log line and reach no terminal as a sequence.
std::string PrintableText(const nlohmann::json& value, std::size_t limit) {
  std::string text = value.get<std::string>();
  if (text.size() > limit) {
    std::size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
  }
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text;
}

JobRecord& OwnJob(const Authenticated& who, DaemonState& state, std::uint32_t job_id) {
  JobRecord* job = state.Find(job_id);
  if (!job) throw Refusal{"job " + std::to_string(job_id) + " is not registered"};
  if (!Visible(state, who.uid, job->uid)) {
    throw Refusal{"job " + std::to_string(job_id) + " belongs to another user"};
  }
  return *job;
}

nlohmann::json OrderJson(const ResizeOrder& o) {
  return {{"generation", o.generation}, {"kind", o.grow ? "grow" : "shrink"},
          {"nodes", o.target_nodes.size()}, {"target_nodes", o.target_nodes},
          {"changed_nodes", o.changed_nodes}, {"reason", o.reason}};
}

nlohmann::json JobJson(const JobRecord& job) {
  return {{"job_id", job.job_id}, {"uid", job.uid}, {"nodes", job.node_count()},
          {"node_list", job.nodes}, {"min_nodes", job.min_nodes}, {"max_nodes", job.max_nodes},
          {"bounds_known", job.bounds_known}, {"ests", job.ests},
          {"generation", job.generation}, {"plan", job.plan},
          {"running_plan", job.running_plan},
          {"predicted_samples_per_s", job.predicted_samples_per_s},
          {"speed_curve", job.speed_curve}, {"class", job.sla_class},
          {"state", job.supervisor_state}, {"detail", job.detail},
          {"resizes", job.resizes}, {"last_resize", job.last_resize_unix},
          {"last_pause_s", job.last_pause_s},
          {"order", job.order ? OrderJson(*job.order) : nlohmann::json()}};
}

std::string Status(const Authenticated& who, const DaemonState& state, std::int64_t now) {
  nlohmann::json jobs = nlohmann::json::array();
  std::set<std::uint32_t> visible_ids;
  for (const JobRecord& job : state.jobs) {
    if (!Visible(state, who.uid, job.uid)) continue;
    jobs.push_back(JobJson(job));
    visible_ids.insert(job.job_id);
  }
  nlohmann::json decisions = nlohmann::json::array();
  for (const Decision& d : state.recent) {
    if (!visible_ids.contains(d.job_id) && !IsAdmin(state, who.uid)) continue;
    decisions.push_back({{"time", d.unix_time}, {"job_id", d.job_id}, {"action", d.action},
                         {"reason", d.reason}});
  }
  return OkResponse({{"version", state.version}, {"policy", state.policy},
                     {"uptime_s", now - state.started_unix}, {"jobs", std::move(jobs)},
                     {"decisions", std::move(decisions)}});
}

std::string Register(const Authenticated& who, DaemonState& state, std::int64_t now,
                     const nlohmann::json& args, const JobLookup& lookup) {
  const std::uint32_t id = JobIdArg(args);
  if (!lookup) throw Refusal{"elasticd cannot reach Slurm to check job " + std::to_string(id)};
  std::optional<policy::SlurmJob> slurm = lookup(id);
  if (!slurm) throw Refusal{"job " + std::to_string(id) + " is not known to Slurm"};
  if (slurm->uid != who.uid && !IsAdmin(state, who.uid)) {
    throw Refusal{"job " + std::to_string(id) + " belongs to another user"};
  }
  if (slurm->state != policy::SlurmJobState::kRunning) {
    throw Refusal{"job " + std::to_string(id) + " is not running"};
  }
  // elasticd writes the job's AdminComment from now on: never over an administrator's note.
  if (!slurm->admin_comment.empty() && slurm->admin_comment.rfind("elastic:", 0) != 0) {
    throw Refusal{"job " + std::to_string(id) + " is not an elastic job (its AdminComment is "
                  "an administrator's, not job_submit.lua's elastic: record)"};
  }
  // Every argument is checked before anything changes: a refused register changes nothing (a
  // half-made record once stayed behind, and its AdminComment "nodes=1/0-0" then overwrote
  // job_submit.lua's bounds record, so the job could never resize again).
  const int ests = static_cast<int>(IntArg(args, "ests", 1, 1 << 20));
  std::string plan = WordArg(args, "plan", "auto");
  std::string sla_class = WordArg(args, "class", "best-effort");
  const auto generation = static_cast<std::uint64_t>(IntArg(args, "generation", 1, 1LL << 52, 1));
  JobRecord* job = state.Find(id);
  if (!job) {
    JobRecord fresh;
    fresh.job_id = id;
    fresh.registered_unix = now;
    auto at = std::lower_bound(state.jobs.begin(), state.jobs.end(), id,
                               [](const JobRecord& j, std::uint32_t v) { return j.job_id < v; });
    job = &*state.jobs.insert(at, fresh);
  }
  job->uid = slurm->uid;
  job->nodes = slurm->nodes;
  job->ests = ests;
  job->plan = std::move(plan);
  job->sla_class = std::move(sla_class);
  // The supervisor knows which generation runs; an order it has not carried out is void.
  job->generation = generation;
  job->last_order_generation = std::max(job->last_order_generation, job->generation);
  job->order.reset();
  job->supervisor_state = "running";
  job->last_seen_unix = now;
  std::optional<NodeBounds> bounds = ParseNodeBounds(slurm->admin_comment);
  job->bounds_known = bounds.has_value();
  job->min_nodes = bounds ? bounds->min_nodes : job->node_count();
  job->max_nodes = bounds ? bounds->max_nodes : job->node_count();
  job->comment_dirty = true;
  state.dirty = true;
  state.Record(now, id, "registered",
               std::to_string(job->node_count()) + " nodes, bounds " +
                   std::to_string(job->min_nodes) + "-" + std::to_string(job->max_nodes) +
                   (bounds ? "" : " (unknown: no job_submit.lua record; the job keeps its size)"));
  return OkResponse({{"min_nodes", job->min_nodes}, {"max_nodes", job->max_nodes},
                     {"bounds_known", job->bounds_known}, {"generation", job->generation}});
}

std::string Poll(const Authenticated& who, DaemonState& state, std::int64_t now,
                 const nlohmann::json& args) {
  JobRecord& job = OwnJob(who, state, JobIdArg(args));
  const auto generation = static_cast<std::uint64_t>(IntArg(args, "generation", 1, 1LL << 52));
  const auto seen = static_cast<std::uint64_t>(IntArg(args, "seen_order", 0, 1LL << 52, 0));
  const double pause_s = SecondsArg(args, "pause_s");
  const auto pause_generation =
      static_cast<std::uint64_t>(IntArg(args, "pause_generation", 0, 1LL << 52, 0));
  const std::string supervisor_state = WordArg(args, "state", "running");
  // The plan the supervisor chose for its current step (absent from older supervisors: the
  // record keeps what it had).
  const std::string running_plan = WordArg(args, "running_plan", job.running_plan);
  const double predicted =
      NonNegativeArg(args, "predicted_samples_per_s", "samples/s", job.predicted_samples_per_s);
  std::vector<double> curve = CurveArg(args, "speed_curve", job.speed_curve);
  // Every argument is checked before anything changes: a refused poll changes nothing.
  job.supervisor_state = supervisor_state;
  if (running_plan != job.running_plan) {
    job.running_plan = running_plan;
    job.comment_dirty = true;  // AdminComment's plan= shows what runs
  }
  job.predicted_samples_per_s = predicted;
  job.speed_curve = std::move(curve);
  auto detail = args.find("detail");
  if (detail != args.end() && detail->is_string()) job.detail = PrintableText(*detail, 200);
  job.last_seen_unix = now;
  if (ApplyProgress(job, generation, seen, now, state)) state.dirty = true;
  if (ApplyPause(job, pause_generation, pause_s, now, state)) state.dirty = true;
  nlohmann::json reply = {{"generation", job.generation}};
  reply["order"] = job.order && job.order->generation > seen ? OrderJson(*job.order)
                                                             : nlohmann::json();
  return OkResponse(std::move(reply));
}

std::string Deregister(const Authenticated& who, DaemonState& state, std::int64_t now,
                       const nlohmann::json& args) {
  JobRecord& job = OwnJob(who, state, JobIdArg(args));
  const std::uint32_t id = job.job_id;
  std::erase_if(state.jobs, [id](const JobRecord& j) { return j.job_id == id; });
  state.Record(now, id, "deregistered", "the supervisor ended");
  state.dirty = true;
  return OkResponse({});
}

std::string Resize(const Authenticated& who, DaemonState& state, std::int64_t now,
                   const nlohmann::json& args) {
  if (!IsAdmin(state, who.uid)) throw Refusal{"resize is an admin command (root or SlurmUser)"};
  JobRecord& job = OwnJob(who, state, JobIdArg(args));
  const int nodes = static_cast<int>(IntArg(args, "nodes", job.min_nodes, job.max_nodes));
  std::string error;
  if (!OrderByHand(state, job, nodes, now, error)) throw Refusal{error};
  state.dirty = true;
  return OkResponse({{"order", OrderJson(*job.order)}});
}

}  // namespace

std::string HandleRequest(const Authenticated& who, DaemonState& state, std::int64_t now_unix,
                          const JobLookup& lookup) {
  if (!who.ok()) return ErrorResponse(who.error);
  DecodedRequest decoded = DecodeRequest(who.payload);
  if (!decoded.request) return ErrorResponse(decoded.error);
  const nlohmann::json& args = decoded.request->args;
  try {
    switch (decoded.request->op) {
      case Op::kStatus: return Status(who, state, now_unix);
      case Op::kRegister: return Register(who, state, now_unix, args, lookup);
      case Op::kPoll: return Poll(who, state, now_unix, args);
      case Op::kDeregister: return Deregister(who, state, now_unix, args);
      case Op::kResize: return Resize(who, state, now_unix, args);
    }
  } catch (const Refusal& refusal) {
    return ErrorResponse(refusal.message);
  } catch (const std::exception& e) {
    // A bug, but one request must never end the daemon (and every job's elasticity with it):
    // answer it and go on. The fuzzer counts this reply as a failure.
    return ErrorResponse(std::string("internal error: ") + e.what());
  }
  return ErrorResponse("unhandled op");
}

}  // namespace elastic::daemon
