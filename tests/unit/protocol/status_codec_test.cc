// Tests for the codec of `status` (protocol/status_codec.cc): a round trip of every field, the
// keys on the wire, and what a malformed or sparse reply decodes to.
#include <gtest/gtest.h>

#include "protocol/messages.h"

namespace elastic::daemon {
namespace {

using nlohmann::json;

StatusReply SampleStatus() {
  JobStatus job;
  job.job_id = 11;
  job.uid = 1001;
  job.node_list = {"n1", "n2"};
  job.min_nodes = 1;
  job.max_nodes = 4;
  job.bounds_known = true;
  job.ests = 8;
  job.generation = 3;
  job.plan = "auto";
  job.running_plan = "zero-dp";
  job.predicted_samples_per_s = 1234.5;
  job.speed_curve = {500, 990};
  job.sla_class = "best-effort";
  job.state = "running";
  job.detail = "ok";
  job.resizes = 2;
  job.last_resize_unix = 950;
  job.last_pause_s = 1.5;
  job.order = ResizeOrder{.generation = 4, .grow = false, .target_nodes = {"n1"},
                          .changed_nodes = {"n2"}, .reason = "p", .issued_unix = 0};
  StatusReply status;
  status.version = "9.9";
  status.policy = "elastic";
  status.uptime_s = 100;
  status.jobs = {job};
  status.decisions = {{.unix_time = 950, .job_id = 11, .action = "grow", .reason = "idle"}};
  return status;
}

TEST(StatusCodec, EveryFieldRoundTrips) {
  const StatusReply sent = SampleStatus();
  const StatusReply got = DecodeStatusReply(Encode(sent));
  EXPECT_EQ(got.version, "9.9");
  EXPECT_EQ(got.policy, "elastic");
  EXPECT_EQ(got.uptime_s, 100);
  ASSERT_EQ(got.jobs.size(), 1u);
  const JobStatus& a = got.jobs[0];
  const JobStatus& b = sent.jobs[0];
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.node_list, b.node_list);
  EXPECT_EQ(a.min_nodes, b.min_nodes);
  EXPECT_EQ(a.max_nodes, b.max_nodes);
  EXPECT_EQ(a.bounds_known, b.bounds_known);
  EXPECT_EQ(a.ests, b.ests);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.plan, b.plan);
  EXPECT_EQ(a.running_plan, b.running_plan);
  EXPECT_EQ(a.predicted_samples_per_s, b.predicted_samples_per_s);
  EXPECT_EQ(a.speed_curve, b.speed_curve);
  EXPECT_EQ(a.sla_class, b.sla_class);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.detail, b.detail);
  EXPECT_EQ(a.resizes, b.resizes);
  EXPECT_EQ(a.last_resize_unix, b.last_resize_unix);
  EXPECT_EQ(a.last_pause_s, b.last_pause_s);
  ASSERT_TRUE(a.order);
  EXPECT_EQ(a.order->generation, 4u);
  EXPECT_EQ(a.order->changed_nodes, (std::vector<std::string>{"n2"}));
  ASSERT_EQ(got.decisions.size(), 1u);
  EXPECT_EQ(got.decisions[0].unix_time, 950);
  EXPECT_EQ(got.decisions[0].action, "grow");
  EXPECT_EQ(got.decisions[0].reason, "idle");
}

// docs/protocol.md's status keys; "nodes" is the size of "node_list", "class" the SLA class.
TEST(StatusCodec, TheWireKeysAreTheDocumentedOnes) {
  const json doc = Encode(SampleStatus());
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.at("jobs").at(0).items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "bounds_known", "class", "detail", "ests", "generation", "job_id",
                      "last_pause_s", "last_resize", "max_nodes", "min_nodes", "node_list",
                      "nodes", "order", "plan", "predicted_samples_per_s", "resizes",
                      "running_plan", "speed_curve", "state", "uid"}));
  EXPECT_EQ(doc.at("jobs").at(0).at("nodes"), 2);
  EXPECT_EQ(doc.at("decisions").at(0).dump(),
            R"({"action":"grow","job_id":11,"reason":"idle","time":950})");
  EXPECT_TRUE(Encode(StatusReply{}).at("jobs").is_array());
}

TEST(StatusCodec, ASparseReplyShowsDefaultsAndAWrongTypeIsRefused) {
  const StatusReply sparse = DecodeStatusReply(json{{"jobs", {{{"job_id", 5}}}}});
  EXPECT_EQ(sparse.version, "?");
  ASSERT_EQ(sparse.jobs.size(), 1u);
  EXPECT_EQ(sparse.jobs[0].job_id, 5u);
  EXPECT_EQ(sparse.jobs[0].plan, "?");
  EXPECT_FALSE(sparse.jobs[0].order);
  EXPECT_THROW(DecodeStatusReply(json::array()), DecodeError);
  EXPECT_THROW(DecodeStatusReply(json{{"uptime_s", "long"}}), DecodeError);
  EXPECT_THROW(DecodeStatusReply(json{{"jobs", {7}}}), DecodeError);
}

}  // namespace
}  // namespace elastic::daemon
