// Request dispatch for elasticd: status, the supervisor's register/poll/deregister, admin resize.
#include "scheduler/daemon/request_handler.h"

#include <algorithm>
#include <set>

#include "protocol/messages.h"
#include "protocol/protocol.h"
#include "scheduler/daemon/admin_comment.h"
#include "scheduler/daemon/order_builder.h"

namespace elastic::daemon {
namespace {

struct Refusal {
  std::string message;
};

bool IsAdmin(const DaemonState& state, uid_t uid) { return state.admin_uids.contains(uid); }

bool Visible(const DaemonState& state, uid_t viewer, uid_t owner) {
  return viewer == owner || IsAdmin(state, viewer);
}

// User text kept and shown to others (logs, `elasticd status`): at most `limit` bytes, cut at a
// UTF-8 character boundary (a cut character would make the registry unsavable as JSON), with
// control characters replaced so it can forge no log line and reach no terminal as a sequence.
std::string PrintableText(std::string text, std::size_t limit) {
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

JobStatus StatusOf(const JobRecord& job) {
  return {.job_id = job.job_id, .uid = job.uid, .node_list = job.nodes,
          .min_nodes = job.min_nodes, .max_nodes = job.max_nodes,
          .bounds_known = job.bounds_known, .ests = job.ests, .generation = job.generation,
          .plan = job.plan, .running_plan = job.running_plan,
          .predicted_samples_per_s = job.predicted_samples_per_s,
          .speed_curve = job.speed_curve, .sla_class = job.sla_class,
          .state = job.supervisor_state, .detail = job.detail, .resizes = job.resizes,
          .last_resize_unix = job.last_resize_unix, .last_pause_s = job.last_pause_s,
          .order = job.order};
}

std::string Status(const Authenticated& who, const DaemonState& state, std::int64_t now) {
  StatusReply reply;
  reply.version = state.version;
  reply.policy = state.policy;
  reply.uptime_s = now - state.started_unix;
  std::set<std::uint32_t> visible_ids;
  for (const JobRecord& job : state.jobs) {
    if (!Visible(state, who.uid, job.uid)) continue;
    reply.jobs.push_back(StatusOf(job));
    visible_ids.insert(job.job_id);
  }
  for (const Decision& d : state.recent) {
    if (!visible_ids.contains(d.job_id) && !IsAdmin(state, who.uid)) continue;
    reply.decisions.push_back(d);
  }
  return OkResponse(Encode(reply));
}

// Slurm's record of job `id`, if the caller may register it as elastic.
policy::SlurmJob RegistrableJob(const Authenticated& who, const DaemonState& state,
                                std::uint32_t id, const JobLookup& lookup) {
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
  return *slurm;
}

JobRecord& FindOrInsert(DaemonState& state, std::uint32_t id, std::int64_t now) {
  if (JobRecord* job = state.Find(id)) return *job;
  JobRecord fresh;
  fresh.job_id = id;
  fresh.registered_unix = now;
  auto at = std::lower_bound(state.jobs.begin(), state.jobs.end(), id,
                             [](const JobRecord& j, std::uint32_t v) { return j.job_id < v; });
  return *state.jobs.insert(at, fresh);
}

std::string Register(const Authenticated& who, DaemonState& state, std::int64_t now,
                     const nlohmann::json& args, const JobLookup& lookup) {
  const policy::SlurmJob slurm = RegistrableJob(who, state, DecodeJobId(args), lookup);
  // Every argument is checked before anything changes: a refused register changes nothing (a
  // half-made record once stayed behind, and its AdminComment "nodes=1/0-0" then overwrote
  // job_submit.lua's bounds record, so the job could never resize again).
  RegisterRequest request = DecodeRegisterRequest(args);
  JobRecord& job = FindOrInsert(state, request.job_id, now);
  job.uid = slurm.uid;
  job.nodes = slurm.nodes;
  job.ests = request.ests;
  job.plan = std::move(request.plan);
  // The class recorded at submission counts (a user cannot forge the AdminComment).
  std::optional<SlaClass> recorded = ParseRecordedClass(slurm.admin_comment);
  job.sla_class = recorded ? std::string(ToString(*recorded)) : std::move(request.sla_class);
  // The supervisor knows which generation runs; an order it has not carried out is void.
  job.generation = request.generation;
  job.last_order_generation = std::max(job.last_order_generation, job.generation);
  job.order.reset();
  job.supervisor_state = "running";
  job.last_seen_unix = now;
  std::optional<NodeBounds> bounds = ParseNodeBounds(slurm.admin_comment);
  job.bounds_known = bounds.has_value();
  job.min_nodes = bounds ? bounds->min_nodes : job.node_count();
  job.max_nodes = bounds ? bounds->max_nodes : job.node_count();
  job.comment_dirty = true;
  state.dirty = true;
  state.Record(now, job.job_id, "registered",
               std::to_string(job.node_count()) + " nodes, bounds " +
                   std::to_string(job.min_nodes) + "-" + std::to_string(job.max_nodes) +
                   (bounds ? "" : " (unknown: no job_submit.lua record; the job keeps its size)"));
  return OkResponse(Encode(RegisterReply{job.min_nodes, job.max_nodes, job.bounds_known,
                                         job.generation}));
}

std::string Poll(const Authenticated& who, DaemonState& state, std::int64_t now,
                 const nlohmann::json& args) {
  JobRecord& job = OwnJob(who, state, DecodeJobId(args));
  // Every argument is checked before anything changes: a refused poll changes nothing.
  PollRequest poll = DecodePollRequest(args);
  job.supervisor_state = poll.state;
  // The plan the supervisor chose for its current step (absent from older supervisors: the
  // record keeps what it had).
  if (poll.running_plan && *poll.running_plan != job.running_plan) {
    job.running_plan = *poll.running_plan;
    job.comment_dirty = true;  // AdminComment's plan= shows what runs
  }
  if (poll.predicted_samples_per_s) job.predicted_samples_per_s = *poll.predicted_samples_per_s;
  if (poll.speed_curve) job.speed_curve = std::move(*poll.speed_curve);
  if (poll.detail) job.detail = PrintableText(std::move(*poll.detail), 200);
  job.last_seen_unix = now;
  if (ApplyProgress(job, poll.generation, poll.seen_order, now, state)) state.dirty = true;
  if (ApplyPause(job, poll.pause_generation, poll.pause_s, now, state)) state.dirty = true;
  PollReply reply;
  reply.generation = job.generation;
  if (job.order && job.order->generation > poll.seen_order) reply.order = job.order;
  return OkResponse(Encode(reply));
}

std::string Deregister(const Authenticated& who, DaemonState& state, std::int64_t now,
                       const nlohmann::json& args) {
  JobRecord& job = OwnJob(who, state, DecodeDeregisterRequest(args).job_id);
  const std::uint32_t id = job.job_id;
  std::erase_if(state.jobs, [id](const JobRecord& j) { return j.job_id == id; });
  state.Record(now, id, "deregistered", "the supervisor ended");
  state.dirty = true;
  return OkResponse({});
}

std::string Resize(const Authenticated& who, DaemonState& state, std::int64_t now,
                   const nlohmann::json& args) {
  if (!IsAdmin(state, who.uid)) throw Refusal{"resize is an admin command (root or SlurmUser)"};
  JobRecord& job = OwnJob(who, state, DecodeJobId(args));
  const ResizeRequest request = DecodeResizeRequest(args, job.min_nodes, job.max_nodes);
  std::string error;
  if (!OrderByHand(state, job, request.nodes, now, error)) throw Refusal{error};
  state.dirty = true;
  return OkResponse(Encode(ResizeReply{*job.order}));
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
  } catch (const DecodeError& refusal) {
    return ErrorResponse(refusal.what());
  } catch (const std::exception& e) {
    // A bug, but one request must never end the daemon (and every job's elasticity with it):
    // answer it and go on. The fuzzer counts this reply as a failure.
    return ErrorResponse(std::string("internal error: ") + e.what());
  }
  return ErrorResponse("unhandled op");
}

}  // namespace elastic::daemon
