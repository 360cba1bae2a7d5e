// The AdminComment summary (scheduler/daemon/admin_comment.h): byte for byte the same text on
// one-device nodes, ",devices=<total>" appended on multi-GPU nodes, and the bounds parser
// accepting both.
#include "scheduler/daemon/admin_comment.h"

#include <gtest/gtest.h>

namespace elastic::daemon {
namespace {

JobRecord TwoNodeJob(int devices) {
  JobRecord job;
  job.job_id = 11;
  job.nodes = {"n1", "n2"};
  job.min_nodes = 1;
  job.max_nodes = 4;
  job.ests = 8;
  job.plan = "dp";
  job.generation = 3;
  job.last_resize_unix = 1'700'000'000;
  job.devices = devices;
  return job;
}

constexpr const char* kCpuText =
    "elastic:est=8,nodes=2/1-4,plan=dp,gen=3,class=best-effort,last=1700000000";

TEST(AdminComment, OneDevicePerNodeKeepsTheTextByteForByte) {
  EXPECT_EQ(FormatAdminComment(TwoNodeJob(2)), kCpuText);
  EXPECT_EQ(ShownDevices(TwoNodeJob(2)), 0);
  // Not yet counted (before the first cycle): the same text.
  EXPECT_EQ(FormatAdminComment(TwoNodeJob(0)), kCpuText);
}

TEST(AdminComment, MultiGpuNodesAppendTheJobsDevices) {
  EXPECT_EQ(FormatAdminComment(TwoNodeJob(4)), std::string(kCpuText) + ",devices=4");
  EXPECT_EQ(ShownDevices(TwoNodeJob(4)), 4);
  // A 4-GPU node and a CPU node: 5 devices on 2 nodes.
  EXPECT_EQ(FormatAdminComment(TwoNodeJob(5)), std::string(kCpuText) + ",devices=5");
}

TEST(AdminComment, BoundsParseWithAndWithoutDevices) {
  const std::string texts[] = {kCpuText, std::string(kCpuText) + ",devices=8",
                               "elastic:nodes=0/1-4"};
  for (const std::string& text : texts) {
    const std::optional<NodeBounds> bounds = ParseNodeBounds(text);
    ASSERT_TRUE(bounds.has_value()) << text;
    EXPECT_EQ(bounds->min_nodes, 1) << text;
    EXPECT_EQ(bounds->max_nodes, 4) << text;
  }
  EXPECT_FALSE(ParseNodeBounds("elastic:devices=8").has_value());
  EXPECT_FALSE(ParseNodeBounds("elastic:nodes=2/0-4,devices=8").has_value());
}

// The class job_submit.lua records and elasticd's summary keeps; a guaranteed job's quota
// standing follows last=.
TEST(AdminComment, TheClassRecordParsesAndAGuaranteedJobShowsItsQuota) {
  EXPECT_EQ(ParseRecordedClass("elastic:nodes=0/1-4,class=guaranteed"), SlaClass::kGuaranteed);
  EXPECT_EQ(ParseRecordedClass(kCpuText), SlaClass::kBestEffort);
  EXPECT_EQ(ParseRecordedClass("elastic:nodes=0/1-4"), std::nullopt);
  EXPECT_EQ(ParseRecordedClass("elastic:nodes=0/1-4,class=gold"), std::nullopt);
  EXPECT_EQ(ParseRecordedClass("elastic:nodes=0/1-4,subclass=guaranteed"), std::nullopt);
  JobRecord job = TwoNodeJob(0);
  job.sla_class = "guaranteed";
  job.quota = "over";
  const std::string text = FormatAdminComment(job);
  EXPECT_NE(text.find(",class=guaranteed,last="), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 11), ",quota=over");
}

}  // namespace
}  // namespace elastic::daemon
