// elasticd's messages as types, and their one JSON codec (docs/protocol.md, "Operations"): the
// supervisor and `elasticd status|resize` encode requests and decode replies with it, elasticd
// decodes requests and encodes replies with it, so the keys are written in one place only.
//
// Requests are decoded after DecodeRequest (protocol.h) has read the envelope and the op. A
// request decoder checks every field against its vocabulary or range and throws DecodeError
// with the message the caller is answered; absent optional fields keep the struct's defaults.
// A reply decoder (client side) throws DecodeError when a field it needs is missing or of the
// wrong type.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/resize_order.h"

namespace elastic::daemon {

// A message that does not follow the protocol; what() is the answer for its sender.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Generations and order numbers stay below 2^52, exact in any JSON reader's doubles.
constexpr std::int64_t kMaxGeneration = std::int64_t{1} << 52;
constexpr std::int64_t kMaxEsts = 1 << 20;
// A bound on the registry's memory, not on the job's size (the policy reads the curve only up to
// the job's max_nodes).
constexpr std::size_t kMaxCurvePoints = 1024;

// register: a job's supervisor says this running job of the caller is elastic.
struct RegisterRequest {
  std::uint32_t job_id = 0;
  int ests = 1;
  std::string plan = "auto";            // a word: [a-z0-9-]{1,32}
  std::string sla_class = "best-effort";  // "class" on the wire; a word
  std::uint64_t generation = 1;         // the generation the supervisor runs
};

struct RegisterReply {
  int min_nodes = 0;
  int max_nodes = 0;
  bool bounds_known = false;  // from the job_submit.lua record in AdminComment
  std::uint64_t generation = 1;
};

// poll: the supervisor's report (its state, the generation it runs, the orders it saw, the last
// pause) and its question (any order for me?). Absent optionals: unchanged on elasticd's side.
struct PollRequest {
  std::uint32_t job_id = 0;
  std::uint64_t generation = 1;
  std::uint64_t seen_order = 0;
  std::string state = "running";  // a word (ToString(SupervisorState))
  std::optional<std::string> detail;  // free text; elasticd cuts and sanitises it
  double pause_s = 0.0;
  std::uint64_t pause_generation = 0;
  std::optional<std::string> running_plan;  // a word
  std::optional<double> predicted_samples_per_s;
  std::optional<std::vector<double>> speed_curve;  // samples/s on 1, 2, ... nodes
};

struct PollReply {
  std::uint64_t generation = 1;
  std::optional<ResizeOrder> order;  // null on the wire when there is none
};

struct DeregisterRequest {
  std::uint32_t job_id = 0;
};

// resize (admins): order job `job_id` to `nodes` nodes now.
struct ResizeRequest {
  std::uint32_t job_id = 0;
  int nodes = 0;
};

struct ResizeReply {
  ResizeOrder order;
};

struct StatusRequest {};

// One recent decision of elasticd (grow, shrink, resized, pause, failed, held, registered,
// dropped), as its registry keeps it and `status` shows it.
struct Decision {
  std::int64_t unix_time = 0;  // "time" on the wire
  std::uint32_t job_id = 0;
  std::string action;
  std::string reason;
};

// One elastic job as `status` shows it.
struct JobStatus {
  std::uint32_t job_id = 0;
  uid_t uid = 0;
  std::vector<std::string> node_list;  // "nodes" on the wire is its size
  int min_nodes = 0;
  int max_nodes = 0;
  bool bounds_known = false;
  int ests = 0;
  std::uint64_t generation = 1;
  std::string plan;
  std::string running_plan;
  double predicted_samples_per_s = 0.0;
  std::vector<double> speed_curve;
  std::string sla_class;  // "class"
  std::string state;
  std::string detail;
  int resizes = 0;
  std::int64_t last_resize_unix = 0;  // "last_resize"
  double last_pause_s = 0.0;
  std::optional<ResizeOrder> order;
};

struct StatusReply {
  std::string version;
  std::string policy;
  std::int64_t uptime_s = 0;
  std::vector<JobStatus> jobs;
  std::vector<Decision> decisions;
};

// Requests: Encode writes the whole object, "op" included.
nlohmann::json Encode(const RegisterRequest& request);
nlohmann::json Encode(const PollRequest& request);
nlohmann::json Encode(const DeregisterRequest& request);
nlohmann::json Encode(const ResizeRequest& request);
nlohmann::json Encode(const StatusRequest& request);

// The job id of a request that names one: elasticd checks ownership before the other fields.
std::uint32_t DecodeJobId(const nlohmann::json& args);
RegisterRequest DecodeRegisterRequest(const nlohmann::json& args);
PollRequest DecodePollRequest(const nlohmann::json& args);
DeregisterRequest DecodeDeregisterRequest(const nlohmann::json& args);
// `nodes` must lie in the job's bounds, which only elasticd's registry knows.
ResizeRequest DecodeResizeRequest(const nlohmann::json& args, int min_nodes, int max_nodes);

// Replies: Encode writes the body; OkResponse (protocol.h) adds "ok".
nlohmann::json Encode(const RegisterReply& reply);
nlohmann::json Encode(const PollReply& reply);
nlohmann::json Encode(const ResizeReply& reply);
nlohmann::json Encode(const StatusReply& reply);
nlohmann::json Encode(const ResizeOrder& order);

RegisterReply DecodeRegisterReply(const nlohmann::json& reply);
PollReply DecodePollReply(const nlohmann::json& reply);
ResizeReply DecodeResizeReply(const nlohmann::json& reply);
StatusReply DecodeStatusReply(const nlohmann::json& reply);
ResizeOrder DecodeResizeOrder(const nlohmann::json& order);

// The refusal of a reply ({"ok": false, "error": ...}), or nullopt for an accepted one. A reply
// that is no JSON object, or has no "ok": true, counts as refused.
std::optional<std::string> RefusalIn(const nlohmann::json& reply);
std::optional<std::string> RefusalInLine(std::string_view reply_line);

}  // namespace elastic::daemon
