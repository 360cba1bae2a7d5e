// Tests for the codec of elasticd's requests and replies (protocol/messages.h): round trips,
// the exact bytes on the wire (docs/protocol.md), and refusals of malformed messages.
#include "protocol/messages.h"

#include <gtest/gtest.h>

#include "protocol/protocol.h"

namespace elastic::daemon {
namespace {

using nlohmann::json;

ResizeOrder SampleOrder() {
  ResizeOrder order;
  order.generation = 7;
  order.grow = true;
  order.target_nodes = {"n1", "n2", "n3"};
  order.changed_nodes = {"n3"};
  order.reason = "rubick: slope 0.9";
  return order;
}

void ExpectSameOrder(const ResizeOrder& a, const ResizeOrder& b) {
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.grow, b.grow);
  EXPECT_EQ(a.target_nodes, b.target_nodes);
  EXPECT_EQ(a.changed_nodes, b.changed_nodes);
  EXPECT_EQ(a.reason, b.reason);
}

// Requests travel as the payload elasticd decodes: through DecodeRequest's envelope first.
json Envelope(const json& request) {
  DecodedRequest decoded = DecodeRequest(request.dump());
  EXPECT_TRUE(decoded.request) << decoded.error;
  return decoded.request ? decoded.request->args : json();
}

TEST(ProtocolMessages, RegisterRoundTrips) {
  const RegisterRequest sent{.job_id = 11, .ests = 8, .plan = "zero-dp",
                             .sla_class = "guaranteed", .generation = 3};
  EXPECT_EQ(DecodeRequest(Encode(sent).dump()).request->op, Op::kRegister);
  const RegisterRequest got = DecodeRegisterRequest(Envelope(Encode(sent)));
  EXPECT_EQ(got.job_id, 11u);
  EXPECT_EQ(got.ests, 8);
  EXPECT_EQ(got.plan, "zero-dp");
  EXPECT_EQ(got.sla_class, "guaranteed");
  EXPECT_EQ(got.generation, 3u);
  const RegisterReply reply = DecodeRegisterReply(Encode(RegisterReply{1, 4, true, 3}));
  EXPECT_EQ(reply.min_nodes, 1);
  EXPECT_EQ(reply.max_nodes, 4);
  EXPECT_TRUE(reply.bounds_known);
  EXPECT_EQ(reply.generation, 3u);
}

// (An unsigned job id, as JSON's parser makes of "11": a signed one is not a job id.)
TEST(ProtocolMessages, RegisterDefaultsWhatAnOlderSupervisorLeavesOut) {
  const RegisterRequest got = DecodeRegisterRequest(json{{"job_id", 11u}, {"ests", 2}});
  EXPECT_EQ(got.plan, "auto");
  EXPECT_EQ(got.sla_class, "best-effort");
  EXPECT_EQ(got.generation, 1u);
}

TEST(ProtocolMessages, PollRoundTripsWithAndWithoutItsOptionalFields) {
  PollRequest sent;
  sent.job_id = 11;
  sent.generation = 4;
  sent.seen_order = 3;
  sent.state = "resizing";
  sent.detail = "to 2 nodes";
  sent.pause_s = 2.5;
  sent.pause_generation = 3;
  PollRequest got = DecodePollRequest(Envelope(Encode(sent)));
  EXPECT_EQ(got.job_id, 11u);
  EXPECT_EQ(got.generation, 4u);
  EXPECT_EQ(got.seen_order, 3u);
  EXPECT_EQ(got.state, "resizing");
  EXPECT_EQ(got.detail, "to 2 nodes");
  EXPECT_DOUBLE_EQ(got.pause_s, 2.5);
  EXPECT_EQ(got.pause_generation, 3u);
  EXPECT_FALSE(got.running_plan || got.predicted_samples_per_s || got.speed_curve);
  sent.running_plan = "dp";
  sent.predicted_samples_per_s = 1234.5;
  sent.speed_curve = std::vector<double>{500, 990, 1470.5};
  got = DecodePollRequest(Envelope(Encode(sent)));
  EXPECT_EQ(got.running_plan, "dp");
  EXPECT_EQ(got.predicted_samples_per_s, 1234.5);
  EXPECT_EQ(got.speed_curve, sent.speed_curve);
}

TEST(ProtocolMessages, PollReplyCarriesTheOrderOrNull) {
  PollReply none = DecodePollReply(Encode(PollReply{2, std::nullopt}));
  EXPECT_EQ(none.generation, 2u);
  EXPECT_FALSE(none.order);
  EXPECT_TRUE(Encode(PollReply{2, std::nullopt}).at("order").is_null());
  PollReply some = DecodePollReply(Encode(PollReply{2, SampleOrder()}));
  ASSERT_TRUE(some.order);
  ExpectSameOrder(*some.order, SampleOrder());
  EXPECT_EQ(some.order->nodes(), 3);
}

TEST(ProtocolMessages, DeregisterAndResizeRoundTrip) {
  EXPECT_EQ(DecodeDeregisterRequest(Envelope(Encode(DeregisterRequest{12}))).job_id, 12u);
  const ResizeRequest got = DecodeResizeRequest(Envelope(Encode(ResizeRequest{12, 3})), 1, 4);
  EXPECT_EQ(got.job_id, 12u);
  EXPECT_EQ(got.nodes, 3);
  ExpectSameOrder(DecodeResizeReply(Encode(ResizeReply{SampleOrder()})).order, SampleOrder());
  EXPECT_EQ(DecodeRequest(Encode(StatusRequest{}).dump()).request->op, Op::kStatus);
}

// The bytes elasticd and the supervisor exchanged before the codec existed (docs/protocol.md):
// keys, value types (integers stay integers, seconds stay doubles) and the order of a dump.
TEST(ProtocolMessages, TheWireBytesAreThoseOfTheDocumentedProtocol) {
  ResizeOrder shrink;
  shrink.generation = 2;
  shrink.target_nodes = {"n1"};
  shrink.changed_nodes = {"n2"};
  shrink.reason = "ordered by an administrator";
  shrink.issued_unix = 1000;  // elasticd's bookkeeping: never sent
  EXPECT_EQ(OkResponse(Encode(PollReply{1, shrink})),
            R"({"generation":1,"ok":true,"order":{"changed_nodes":["n2"],"generation":2,)"
            R"("kind":"shrink","nodes":1,"reason":"ordered by an administrator",)"
            R"("target_nodes":["n1"]}})");
  EXPECT_EQ(OkResponse(Encode(RegisterReply{1, 4, true, 1})),
            R"({"bounds_known":true,"generation":1,"max_nodes":4,"min_nodes":1,"ok":true})");
  EXPECT_EQ(Encode(RegisterRequest{11, 8, "auto", "best-effort", 1}).dump(),
            R"({"class":"best-effort","ests":8,"generation":1,"job_id":11,"op":"register",)"
            R"("plan":"auto"})");
  PollRequest poll;
  poll.job_id = 11;
  poll.detail = "";
  EXPECT_EQ(Encode(poll).dump(),
            R"({"detail":"","generation":1,"job_id":11,"op":"poll","pause_generation":0,)"
            R"("pause_s":0.0,"seen_order":0,"state":"running"})");
  EXPECT_EQ(Encode(DeregisterRequest{11}).dump(), R"({"job_id":11,"op":"deregister"})");
  EXPECT_EQ(Encode(ResizeRequest{11, 2}).dump(), R"({"job_id":11,"nodes":2,"op":"resize"})");
}

TEST(ProtocolMessages, MalformedRequestsAreRefusedWithTheFieldAtFault) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"ests", 8}}, "request needs \"job_id\", a positive job id"},
      {{{"job_id", 11u}, {"ests", "8"}}, "\"ests\" must be an integer in [1, 1048576]"},
      {{{"job_id", 11u}, {"ests", 8}, {"plan", "a;b"}},
       "\"plan\" must be a short word of a-z, 0-9 and -"},
      {{{"job_id", 11u}, {"ests", 8}, {"class", 7}}, "\"class\" must be a string"},
  };
  for (const auto& [args, expected] : cases) {
    try {
      DecodeRegisterRequest(args);
      ADD_FAILURE() << "accepted " << args.dump();
    } catch (const DecodeError& e) {
      EXPECT_EQ(e.what(), expected) << args.dump();
    }
  }
  EXPECT_THROW(DecodePollRequest(json{{"job_id", 11u}}), DecodeError);  // no generation
  EXPECT_THROW(DecodePollRequest(json{{"job_id", 11u}, {"generation", 1}, {"pause_s", "1"}}),
               DecodeError);
  EXPECT_THROW(DecodePollRequest(json{{"job_id", 11u}, {"generation", 1},
                                      {"speed_curve", {2, 1}}}),
               DecodeError);
  EXPECT_THROW(DecodeResizeRequest(json{{"job_id", 11u}, {"nodes", 5}}, 1, 4), DecodeError);
}

TEST(ProtocolMessages, MalformedRepliesAreRefusedWithAClearError) {
  const std::vector<json> bad = {
      json::array(),
      json{{"ok", true}},                                      // no generation
      json{{"generation", "2"}},                                // not a number
      json{{"generation", 2}, {"order", {{"generation", 3}}}},  // an order without a kind
      json{{"generation", 2}, {"order", {{"generation", 3}, {"kind", "explode"},
                                         {"target_nodes", {"n1"}}, {"changed_nodes", json::array()}}}},
  };
  for (const json& reply : bad) {
    try {
      DecodePollReply(reply);
      ADD_FAILURE() << "accepted " << reply.dump();
    } catch (const DecodeError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("malformed reply from elasticd", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(DecodeRegisterReply(json{{"min_nodes", 1}}), DecodeError);
  EXPECT_THROW(DecodeResizeReply(json{{"ok", true}}), DecodeError);
}

TEST(ProtocolMessages, RefusalsAreReadFromTheEnvelope) {
  EXPECT_EQ(RefusalIn(json::parse(ErrorResponse("job 11 is not registered"))),
            "job 11 is not registered");
  EXPECT_EQ(RefusalIn(json::parse(OkResponse({}))), std::nullopt);
  EXPECT_EQ(RefusalIn(json{{"ok", false}}), "refused");
  EXPECT_EQ(RefusalIn(json::array()), "refused");
  EXPECT_EQ(RefusalInLine(ErrorResponse("no")), "no");
  EXPECT_EQ(RefusalInLine("not json"), "refused");
}

}  // namespace
}  // namespace elastic::daemon
