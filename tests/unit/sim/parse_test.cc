// Trace and cluster-spec parsing: accepted forms and the errors users see.
#include <gtest/gtest.h>

#include <sstream>

#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/trace.h"

namespace elastic::sim {
namespace {

Result<std::vector<TraceJob>> Parse(const std::string& text) {
  std::istringstream in(text);
  return ParseTrace(in, "t.csv");
}

TEST(Trace, ParsesRowsAndSortsBySubmitTime) {
  auto trace = Parse(
      "job_id,submit_time_s,num_gpus,duration_s,vc,orig_submit_time\r\n"
      "x,5,2,10,vc1,2017-12-01 07:45:37\r\n"
      "y,0,1,20,vc2,2017-12-01 07:45:32\r\n");
  ASSERT_EQ(trace.error, "");
  ASSERT_EQ(trace->size(), 2u);
  EXPECT_EQ((*trace)[0].id, "y");
  EXPECT_EQ((*trace)[1].gpus, 2);
  EXPECT_EQ((*trace)[1].tenant, "vc1");
}

TEST(Trace, ErrorsNameFileLineColumnAndValue) {
  const std::string header = "job_id,submit_time_s,num_gpus,duration_s\n";
  EXPECT_EQ(Parse(header + "a,0,1,5\nb,3,zero,5\n").error,
            "t.csv:3: column num_gpus: invalid value \"zero\": expected an integer >= 1");
  EXPECT_EQ(Parse(header + "a,-1,1,5\n").error,
            "t.csv:2: column submit_time_s: invalid value \"-1\": expected an integer >= 0");
  EXPECT_EQ(Parse(header + "a,0,1,0\n").error,
            "t.csv:2: column duration_s: invalid value \"0\": expected an integer >= 1");
  EXPECT_EQ(Parse(header + "a,0,1\n").error, "t.csv:2: expected 4 columns, found 3");
  EXPECT_EQ(Parse(header + "a,0,1,5\na,1,1,5\n").error,
            "t.csv:3: column job_id: duplicate id \"a\"");
  EXPECT_NE(Parse("id,submit,gpus,duration\n").error.find("t.csv:1: header column 1"),
            std::string::npos);
  EXPECT_EQ(Parse("").error, "t.csv:1: empty file: expected a header line");
  EXPECT_NE(LoadTrace("/nonexistent/x.csv").error.find("cannot open"), std::string::npos);
}

TEST(ClusterSpec, ParsesHeterogeneousSpec) {
  auto parsed = ParseClusterSpec("2x8:a100,3x4:v100,1x2");
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed->nodes.size(), 6u);
  EXPECT_EQ(parsed->nodes[0].device_type, "a100");
  EXPECT_EQ(parsed->nodes[0].devices, 8);
  EXPECT_DOUBLE_EQ(parsed->nodes[0].capability, 2.0);
  EXPECT_EQ(parsed->nodes[4].free_devices, 4);
  EXPECT_EQ(parsed->nodes[5].device_type, "gpu");
}

TEST(ClusterSpec, RejectsMalformedItems) {
  for (const char* bad : {"", "8", "0x8", "2x", "2x8:", "2x8:tpu", "2x8,", "x8", "2y8"}) {
    EXPECT_NE(ParseClusterSpec(bad).error, "") << bad;
  }
  EXPECT_NE(ParseClusterSpec("2x8:tpu").error.find("expected one of gpu, v100"),
            std::string::npos);
}

// Per-node CPUs and host memory: explicit (cpus=N, mem=SIZE with M/G/T), or 8 CPUs and 64 GiB per
// device by default, so old specs keep their meaning.
TEST(ClusterSpec, ParsesCpusAndMemory) {
  auto parsed = ParseClusterSpec("1x8:a100:cpus=64:mem=512G,1x4:mem=1T,1x2:v100:cpus=6");
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed->nodes.size(), 3u);
  EXPECT_EQ(parsed->nodes[0].cpus, 64);
  EXPECT_EQ(parsed->nodes[0].free_cpus, 64);
  EXPECT_EQ(parsed->nodes[0].memory_mb, 512 * 1024);
  EXPECT_EQ(parsed->nodes[1].device_type, "gpu");
  EXPECT_EQ(parsed->nodes[1].cpus, 4 * 8);
  EXPECT_EQ(parsed->nodes[1].memory_mb, 1024 * 1024);
  EXPECT_EQ(parsed->nodes[2].cpus, 6);
  EXPECT_EQ(parsed->nodes[2].free_memory_mb, 2 * 64 * 1024);
}

TEST(ClusterSpec, RejectsBadCpusAndMemory) {
  for (const char* bad : {"2x8:cpus=0", "2x8:cpus=x", "2x8:mem=512", "2x8:mem=G", "2x8:mem=5Q",
                          "2x8:gpus=4", "2x8:cpus=4:cpus=8", "2x8:cpus=8:a100"}) {
    EXPECT_NE(ParseClusterSpec(bad).error, "") << bad;
  }
  EXPECT_EQ(ParseClusterSpec("2x8:mem=512").error,
            "elastic-sim: --cluster: invalid item \"2x8:mem=512\": invalid mem \"512\": expected "
            "one size per node with a unit M, G or T, e.g. 512G");
  EXPECT_NE(ParseClusterSpec("2x8:gpus=4").error.find("unknown key \"gpus\": expected cpus or mem"),
            std::string::npos);
}

}  // namespace
}  // namespace elastic::sim
