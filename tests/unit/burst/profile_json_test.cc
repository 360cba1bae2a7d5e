// The JSON profile format: what is accepted, and the message each bad profile gets.
#include "perf/burst/profile_json.h"

#include <gtest/gtest.h>

#include "tests/common/temp_dir.h"
#include "tests/unit/burst/burst_test_util.h"

namespace elastic::burst {
namespace {

const char* kGood = R"({
  "format": "elastic-burst-profile/1",
  "model": "toy",
  "global_batch": 8,
  "network": {"bandwidth_gbps": 8, "latency_us": 5},
  "layers": [
    {"name": "conv", "param_bytes": 1000, "output_bytes_per_sample": 4096,
     "fwd_bwd_ms": [[1, 0.5], [4, 1.0], [8, 1.5]]},
    {"name": "left", "param_bytes": 0, "output_bytes_per_sample": 2048, "fwd_bwd_ms": [[1, 0.2]]},
    {"name": "right", "inputs": ["conv"], "param_bytes": 0, "output_bytes_per_sample": 2048,
     "fwd_bwd_ms": [[1, 0.2]]},
    {"name": "cat", "inputs": ["left", "right"], "param_bytes": 0,
     "output_bytes_per_sample": 4096, "fwd_bwd_ms": [[8, 0.1]]}
  ]
})";

TEST(ProfileJson, ReadsUnitsAndDefaultsInputsToThePreviousLayer) {
  Result<ModelProfile> read = ParseProfileJson(kGood, "p.json");
  ASSERT_EQ(read.error, "");
  const ModelProfile& p = *read;
  EXPECT_EQ(p.name, "toy");
  EXPECT_EQ(p.global_batch, 8);
  EXPECT_DOUBLE_EQ(p.network.bandwidth_bytes_per_s, 1e9);  // 8 Gbit/s
  EXPECT_DOUBLE_EQ(p.network.latency_s, 5e-6);
  ASSERT_EQ(p.layers.size(), 4u);
  EXPECT_EQ(p.layers[1].inputs, (std::vector<int>{0}));
  EXPECT_EQ(p.layers[3].inputs, (std::vector<int>{1, 2}));
  EXPECT_DOUBLE_EQ(p.layers[0].compute[1].seconds, 1e-3);
  EXPECT_EQ(p.layers[0].compute[2].batch, 8);
  EXPECT_DOUBLE_EQ(p.layers[0].param_bytes, 1000);
}

TEST(ProfileJson, RoundTripsThroughProfileToJson) {
  ModelProfile p = *ParseProfileJson(kGood, "p.json");
  Result<ModelProfile> again = ParseProfileJson(ProfileToJson(p).dump(), "again.json");
  ASSERT_EQ(again.error, "");
  EXPECT_EQ(again->layers[3].inputs, p.layers[3].inputs);
  EXPECT_DOUBLE_EQ(again->network.latency_s, p.network.latency_s);
  EXPECT_DOUBLE_EQ(again->layers[0].compute[0].seconds, p.layers[0].compute[0].seconds);
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ProfileJson, RefusesBadProfilesWithAClearMessage) {
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      {"\"format\": \"elastic-burst-profile/1\"", "\"format\": \"v2\"",
       "p.json: $.format: expected \"elastic-burst-profile/1\", got \"v2\""},
      {"\"global_batch\": 8", "\"global_batch\": 0",
       "p.json: $.global_batch: expected an integer >= 1, got 0"},
      {"\"global_batch\": 8", "\"global_batch\": 8.5",
       "p.json: $.global_batch: expected an integer >= 1, got 8.5"},
      {"\"bandwidth_gbps\": 8", "\"bandwidth_gbps\": -1",
       "p.json: $.network.bandwidth_gbps: expected a number > 0, got -1"},
      {"\"latency_us\": 5", "\"latency_us\": 5, \"mtu\": 9000",
       "p.json: $.network: unknown key \"mtu\" (expected: bandwidth_gbps, latency_us)"},
      {"\"model\": \"toy\",", "",
       "p.json: $: missing key \"model\""},
      {"[[1, 0.5], [4, 1.0], [8, 1.5]]", "[[1, 0.5], [4, 1.0], [2, 1.5]]",
       "p.json: $.layers[0] (\"conv\").fwd_bwd_ms[2][0] (batch): expected batches in increasing "
       "order, got 2 after 4"},
      {"[[1, 0.5], [4, 1.0], [8, 1.5]]", "[[1, 0.5], [4, 0]]",
       "p.json: $.layers[0] (\"conv\").fwd_bwd_ms[1][1] (ms): expected a number > 0, got 0"},
      {"[[1, 0.5], [4, 1.0], [8, 1.5]]", "[[1, 0.5, 3]]",
       "p.json: $.layers[0] (\"conv\").fwd_bwd_ms[0]: expected [per-worker batch, milliseconds], "
       "got [1,0.5,3]"},
      {"[[1, 0.5], [4, 1.0], [8, 1.5]]", "[]",
       "p.json: $.layers[0] (\"conv\").fwd_bwd_ms: expected a non-empty array of [per-worker "
       "batch, milliseconds] pairs"},
      {"\"inputs\": [\"conv\"]", "\"inputs\": [\"cat\"]",
       "p.json: $.layers[2] (\"right\").inputs[0]: unknown layer \"cat\" (inputs must name layers "
       "listed before this one)"},
      {"\"name\": \"left\"", "\"name\": \"conv\"",
       "p.json: $.layers[1] (\"conv\").name: duplicate layer name"},
      {"\"param_bytes\": 1000", "\"param_bytes\": \"1k\"",
       "p.json: $.layers[0] (\"conv\").param_bytes: expected a number, got \"1k\""},
      {"\"param_bytes\": 1000,", "\"params\": 1000,",
       "p.json: $.layers[0]: unknown key \"params\" (expected: fwd_bwd_ms, name, "
       "output_bytes_per_sample, param_bytes, inputs)"},
      {"\"inputs\": [\"conv\"]", "\"inputs\": []",
       "p.json: layer 2 (\"right\"): no inputs; only the first layer reads the input data"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseProfileJson(Replace(kGood, c.from, c.to), "p.json").error, c.message);
  }
  EXPECT_EQ(ParseProfileJson("{\"format\": ", "p.json").error.rfind("p.json: not valid JSON: ", 0),
            0u);
  EXPECT_EQ(ParseProfileJson("[]", "p.json").error, "p.json: $: expected an object");
}

TEST(ProfileJson, LoadNamesAMissingFile) {
  elastic::testing::TempDir dir;
  std::string missing = (dir.path() / "none.json").string();
  EXPECT_EQ(LoadProfileJson(missing).error, missing + ": cannot open the profile");
  std::string path = dir.Write("p.json", kGood).string();
  EXPECT_EQ(LoadProfileJson(path).error, "");
}

}  // namespace
}  // namespace elastic::burst
