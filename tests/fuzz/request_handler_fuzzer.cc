// libFuzzer target: elasticd's whole request path (HandleRequest) over a sequence of requests
// from several callers against one in-memory registry, with a synthetic Slurm job lookup.
//
// Input: lines. Line 1 is the AdminComment Slurm reports for every job looked up (where
// job_submit.lua's bounds come from). Every further line is one request: its first byte picks
// the caller ('0' root, '1' uid 1001, '2' uid 1002, '3' uid 4242, '4' a refused credential;
// other bytes wrap around) and the rest is the JSON payload, e.g. 1{"op":"status"}.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/daemon/registry_store.h"
#include "scheduler/daemon/request_handler.h"
#include "tests/unit/daemon/request_handler_fixture.h"

namespace {

using elastic::daemon::Authenticated;
using elastic::daemon::DaemonState;
using elastic::daemon::JobRecord;
using elastic::daemon::test::Job;  // the unit tests' job record builder
using elastic::policy::SlurmJob;
using elastic::policy::SlurmJobState;
using elastic::policy::SlurmNode;

constexpr uid_t kSlurmUser = 64030;

// Two users' jobs on an 8-node partition with idle nodes, so a grow by hand can succeed.
DaemonState InitialState() {
  DaemonState state;
  state.version = "fuzz";
  state.policy = "elastic";
  state.started_unix = 900;
  state.admin_uids = {0, kSlurmUser};
  state.jobs.push_back(Job(11, 1001, {"n1", "n2"}, 1, 4));
  state.jobs.push_back(Job(12, 1002, {"n3", "n4", "n5"}, 2, 3));
  state.recent.push_back({.unix_time = 950, .job_id = 11, .action = "grow", .reason = "idle"});
  elastic::policy::SlurmView view;
  view.now = 990;
  for (int i = 1; i <= 8; ++i) {
    SlurmNode node;
    node.name = "n" + std::to_string(i);
    node.partitions = {"main"};
    node.cpus = 8;
    node.alloc_cpus = i <= 5 ? 8 : 0;
    node.available = i != 8;
    view.nodes.push_back(node);
  }
  for (const JobRecord& job : state.jobs) {
    SlurmJob s;
    s.job_id = job.job_id;
    s.uid = job.uid;
    s.state = SlurmJobState::kRunning;
    s.nodes = job.nodes;
    s.batch_host = job.nodes.front();
    s.partition = "main";
    view.jobs.push_back(s);
  }
  state.last_view = view;
  return state;
}

// Slurm as the daemon's lookup sees it: a job for most ids, owned by 1001 or 1002, sometimes
// not running, sometimes unknown.
std::optional<SlurmJob> Lookup(std::uint32_t id, const std::string& admin_comment) {
  if (id % 7 == 0) return std::nullopt;
  SlurmJob job;
  job.job_id = id;
  job.uid = id % 2 == 1 ? 1001 : 1002;
  job.state = id % 5 == 0 ? SlurmJobState::kPending : SlurmJobState::kRunning;
  for (std::uint32_t i = 1; i <= id % 4; ++i) job.nodes.push_back("n" + std::to_string(i));
  if (!job.nodes.empty()) job.batch_host = job.nodes.front();
  job.partition = "main";
  job.admin_comment = admin_comment;
  return job;
}

Authenticated Caller(unsigned char selector, std::string payload) {
  static constexpr uid_t kUids[] = {0, 1001, 1002, 4242};
  Authenticated who;
  who.payload = std::move(payload);
  const unsigned index = static_cast<unsigned char>(selector - '0') % 5;
  if (index == 4) {
    who.error = "MUNGE credential refused: Replayed credential";
  } else {
    who.uid = kUids[index];
    who.gid = who.uid;
  }
  return who;
}

// A reply is one JSON object with a boolean "ok", and a refusal says why.
void CheckReply(const std::string& reply) {
  nlohmann::json doc = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("ok") || !doc["ok"].is_boolean()) std::abort();
  if (!doc["ok"] && (!doc.contains("error") || !doc["error"].is_string())) std::abort();
  // HandleRequest's last resort against an exception it did not expect: always a bug.
  if (!doc["ok"] && doc["error"].get<std::string>().rfind("internal error: ", 0) == 0) std::abort();
}

// What the rest of elasticd relies on: jobs sorted by id, each once; sane bounds; orders newer
// than the generation running; the decision log bounded.
void CheckState(const DaemonState& state) {
  for (std::size_t i = 1; i < state.jobs.size(); ++i) {
    if (state.jobs[i - 1].job_id >= state.jobs[i].job_id) std::abort();
  }
  for (const JobRecord& job : state.jobs) {
    if (job.job_id == 0 || job.min_nodes > job.max_nodes || job.ests < 0) std::abort();
    if (job.bounds_known && job.min_nodes < 1) std::abort();
    if (job.order && job.order->generation <= job.generation) std::abort();
  }
  if (state.recent.size() > DaemonState::kMaxRecentDecisions) std::abort();
}

// elasticd saves the registry after every change (as SaveRegistry writes it) and a restarted
// daemon must load it back: a save that cannot be loaded loses every job on the next restart.
void CheckSavedRegistryLoads(DaemonState& state) {
  if (!state.dirty) return;
  state.dirty = false;
  const std::string saved = elastic::daemon::RegistryToJson(state).dump(
      1, ' ', false, nlohmann::json::error_handler_t::replace);
  DaemonState restored;
  elastic::daemon::RegistryFromJson(nlohmann::json::parse(saved), restored);  // throws: a bug
  if (restored.jobs.size() != state.jobs.size()) std::abort();
  for (std::size_t i = 0; i < state.jobs.size(); ++i) {
    const JobRecord& a = state.jobs[i];
    const JobRecord& b = restored.jobs[i];
    if (a.job_id != b.job_id || a.uid != b.uid || a.nodes != b.nodes ||
        a.generation != b.generation || a.min_nodes != b.min_nodes || a.max_nodes != b.max_nodes ||
        a.order.has_value() != b.order.has_value() || a.last_pause_s != b.last_pause_s) {
      std::abort();
    }
    if (a.order && (a.order->generation != b.order->generation ||
                    a.order->target_nodes != b.order->target_nodes)) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t first_newline = input.find('\n');
  const std::string admin_comment(input.substr(0, first_newline));
  input = first_newline == input.npos ? std::string_view() : input.substr(first_newline + 1);
  auto lookup = [&admin_comment](std::uint32_t id) { return Lookup(id, admin_comment); };

  DaemonState state = InitialState();
  std::int64_t now = 1'000;
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    std::string_view line = input.substr(0, newline);
    input = newline == input.npos ? std::string_view() : input.substr(newline + 1);
    if (line.empty()) continue;
    Authenticated who = Caller(static_cast<unsigned char>(line[0]), std::string(line.substr(1)));
    CheckReply(elastic::daemon::HandleRequest(who, state, now++, lookup));
    CheckState(state);
    CheckSavedRegistryLoads(state);
  }
  // Whatever the requests left behind must still be reportable.
  Authenticated root = Caller('0', R"({"op":"status"})");
  CheckReply(elastic::daemon::HandleRequest(root, state, now, lookup));
  return 0;
}
