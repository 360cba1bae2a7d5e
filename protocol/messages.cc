// The JSON codec of elasticd's messages: field checks for requests (what a user may send),
// encoders for both directions, and strict decoders for replies.
#include "protocol/messages.h"

#include <algorithm>
#include <cmath>

namespace elastic::daemon {
namespace {

using nlohmann::json;

std::string Quoted(const char* key) { return std::string("\"") + key + "\""; }

// A short word from the vocabulary ([a-z0-9-]), never free text into AdminComment.
std::string WordField(const json& args, const char* key, const std::string& fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  if (!it->is_string()) throw DecodeError(Quoted(key) + " must be a string");
  const std::string& word = it->get_ref<const std::string&>();
  bool ok = !word.empty() && word.size() <= 32 && std::all_of(word.begin(), word.end(), [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
            });
  if (!ok) throw DecodeError(Quoted(key) + " must be a short word of a-z, 0-9 and -");
  return word;
}

std::optional<std::string> OptionalWordField(const json& args, const char* key) {
  if (!args.contains(key)) return std::nullopt;
  return WordField(args, key, "");
}

std::int64_t IntField(const json& args, const char* key, std::int64_t lo, std::int64_t hi,
                      std::optional<std::int64_t> fallback = std::nullopt) {
  auto it = args.find(key);
  if (it == args.end() && fallback) return *fallback;
  if (it == args.end() || !it->is_number_integer() || it->get<std::int64_t>() < lo ||
      it->get<std::int64_t>() > hi) {
    throw DecodeError(Quoted(key) + " must be an integer in [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  }
  return it->get<std::int64_t>();
}

// Checked by hand: json::value() throws type_error for a string or a boolean, which once escaped
// the request handler and ended elasticd (found by tests/fuzz/request_handler_fuzzer).
std::optional<double> NonNegativeField(const json& args, const char* key, const char* unit) {
  auto it = args.find(key);
  if (it == args.end()) return std::nullopt;
  if (!it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>())) {
    throw DecodeError(Quoted(key) + " must be a number of " + unit + " >= 0");
  }
  return it->get<double>();
}

// The supervisor's sensitivity curve: at most kMaxCurvePoints finite numbers >= 0, not
// decreasing (Rubick §5.2's curve is the best reachable with at most n nodes).
std::optional<std::vector<double>> CurveField(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return std::nullopt;
  const std::string what = Quoted(key) + " must be an array of at most " +
                           std::to_string(kMaxCurvePoints) +
                           " non-decreasing samples/s values >= 0, one per node count from 1";
  if (!it->is_array() || it->size() > kMaxCurvePoints) throw DecodeError(what);
  std::vector<double> curve;
  for (const json& value : *it) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() >= 0) ||
        (!curve.empty() && value.get<double>() < curve.back())) {
      throw DecodeError(what);
    }
    curve.push_back(value.get<double>());
  }
  return curve;
}

// A reply field the client needs; nlohmann's own exceptions become DecodeError.
template <typename T>
T Need(const json& doc, const char* key) {
  try {
    return doc.at(key).get<T>();
  } catch (const json::exception& e) {
    throw DecodeError("malformed reply from elasticd: " + Quoted(key) + ": " + e.what());
  }
}

template <typename T>
T Optional(const json& doc, const char* key, T fallback) {
  auto it = doc.find(key);
  return it == doc.end() || it->is_null() ? fallback : Need<T>(doc, key);
}

void RequireObject(const json& doc, const char* what) {
  if (!doc.is_object()) throw DecodeError(std::string("malformed reply from elasticd: ") + what +
                                          " is not a JSON object");
}

}  // namespace

std::uint32_t DecodeJobId(const json& args) {
  auto it = args.find("job_id");
  if (it == args.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() == 0 ||
      it->get<std::uint64_t>() > 0xfffffff0u) {
    throw DecodeError("request needs \"job_id\", a positive job id");
  }
  return it->get<std::uint32_t>();
}

// Fields in the order elasticd has always checked them: the first bad one is the answer.
RegisterRequest DecodeRegisterRequest(const json& args) {
  RegisterRequest r;
  r.job_id = DecodeJobId(args);
  r.ests = static_cast<int>(IntField(args, "ests", 1, kMaxEsts));
  r.plan = WordField(args, "plan", r.plan);
  r.sla_class = WordField(args, "class", r.sla_class);
  r.generation = static_cast<std::uint64_t>(IntField(args, "generation", 1, kMaxGeneration, 1));
  return r;
}

PollRequest DecodePollRequest(const json& args) {
  PollRequest r;
  r.job_id = DecodeJobId(args);
  r.generation = static_cast<std::uint64_t>(IntField(args, "generation", 1, kMaxGeneration));
  r.seen_order = static_cast<std::uint64_t>(IntField(args, "seen_order", 0, kMaxGeneration, 0));
  r.pause_s = NonNegativeField(args, "pause_s", "seconds").value_or(0.0);
  r.pause_generation =
      static_cast<std::uint64_t>(IntField(args, "pause_generation", 0, kMaxGeneration, 0));
  r.state = WordField(args, "state", r.state);
  r.running_plan = OptionalWordField(args, "running_plan");
  r.predicted_samples_per_s = NonNegativeField(args, "predicted_samples_per_s", "samples/s");
  r.speed_curve = CurveField(args, "speed_curve");
  // A detail that is not a string has always been ignored, not refused.
  auto detail = args.find("detail");
  if (detail != args.end() && detail->is_string()) r.detail = detail->get<std::string>();
  return r;
}

DeregisterRequest DecodeDeregisterRequest(const json& args) { return {DecodeJobId(args)}; }

ResizeRequest DecodeResizeRequest(const json& args, int min_nodes, int max_nodes) {
  ResizeRequest r;
  r.job_id = DecodeJobId(args);
  r.nodes = static_cast<int>(IntField(args, "nodes", min_nodes, max_nodes));
  return r;
}

json Encode(const RegisterRequest& r) {
  return {{"op", "register"}, {"job_id", r.job_id}, {"ests", r.ests}, {"plan", r.plan},
          {"class", r.sla_class}, {"generation", r.generation}};
}

json Encode(const PollRequest& r) {
  json doc = {{"op", "poll"}, {"job_id", r.job_id}, {"generation", r.generation},
              {"seen_order", r.seen_order}, {"state", r.state}, {"pause_s", r.pause_s},
              {"pause_generation", r.pause_generation}};
  if (r.detail) doc["detail"] = *r.detail;
  if (r.running_plan) doc["running_plan"] = *r.running_plan;
  if (r.predicted_samples_per_s) doc["predicted_samples_per_s"] = *r.predicted_samples_per_s;
  if (r.speed_curve) doc["speed_curve"] = *r.speed_curve;
  return doc;
}

json Encode(const DeregisterRequest& r) { return {{"op", "deregister"}, {"job_id", r.job_id}}; }

json Encode(const ResizeRequest& r) {
  return {{"op", "resize"}, {"job_id", r.job_id}, {"nodes", r.nodes}};
}

json Encode(const StatusRequest&) { return {{"op", "status"}}; }

json Encode(const ResizeOrder& o) {
  return {{"generation", o.generation}, {"kind", o.grow ? "grow" : "shrink"},
          {"nodes", o.target_nodes.size()}, {"target_nodes", o.target_nodes},
          {"changed_nodes", o.changed_nodes}, {"reason", o.reason}};
}

// "nodes" is not read back: it is target_nodes' size, which is what the supervisor acts on.
ResizeOrder DecodeResizeOrder(const json& doc) {
  RequireObject(doc, "the order");
  ResizeOrder o;
  o.generation = Need<std::uint64_t>(doc, "generation");
  const std::string kind = Need<std::string>(doc, "kind");
  if (kind != "grow" && kind != "shrink") {
    throw DecodeError("malformed reply from elasticd: order kind \"" + kind + "\"");
  }
  o.grow = kind == "grow";
  o.target_nodes = Need<std::vector<std::string>>(doc, "target_nodes");
  o.changed_nodes = Need<std::vector<std::string>>(doc, "changed_nodes");
  o.reason = Optional<std::string>(doc, "reason", "");
  return o;
}

json Encode(const RegisterReply& r) {
  return {{"min_nodes", r.min_nodes}, {"max_nodes", r.max_nodes},
          {"bounds_known", r.bounds_known}, {"generation", r.generation}};
}

RegisterReply DecodeRegisterReply(const json& doc) {
  RequireObject(doc, "the reply");
  return {Need<int>(doc, "min_nodes"), Need<int>(doc, "max_nodes"),
          Optional<bool>(doc, "bounds_known", false), Need<std::uint64_t>(doc, "generation")};
}

json Encode(const PollReply& r) {
  return {{"generation", r.generation}, {"order", r.order ? Encode(*r.order) : json()}};
}

PollReply DecodePollReply(const json& doc) {
  RequireObject(doc, "the reply");
  PollReply r;
  r.generation = Need<std::uint64_t>(doc, "generation");
  auto order = doc.find("order");
  if (order != doc.end() && !order->is_null()) r.order = DecodeResizeOrder(*order);
  return r;
}

json Encode(const ResizeReply& r) { return {{"order", Encode(r.order)}}; }

ResizeReply DecodeResizeReply(const json& doc) {
  RequireObject(doc, "the reply");
  if (!doc.contains("order")) throw DecodeError("malformed reply from elasticd: no order");
  return {DecodeResizeOrder(doc.at("order"))};
}

std::optional<std::string> RefusalIn(const json& reply) {
  if (reply.is_object()) {
    auto ok = reply.find("ok");
    if (ok != reply.end() && ok->is_boolean() && ok->get<bool>()) return std::nullopt;
    auto error = reply.find("error");
    if (error != reply.end() && error->is_string()) return error->get<std::string>();
  }
  return "refused";
}

std::optional<std::string> RefusalInLine(std::string_view reply_line) {
  return RefusalIn(json::parse(reply_line, nullptr, /*allow_exceptions=*/false));
}

}  // namespace elastic::daemon
