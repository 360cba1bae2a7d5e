// fitted.json and points.json codec: bit-exact round trips and refusals that name the field.
#include "perf/rubick/perf_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "tests/unit/perf/perf_fixtures.h"

namespace elastic::perf {
namespace {

using testing::OneNode;
using testing::RoundParams;
using testing::SmallModel;

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Values with long binary expansions, so any rounding in the text would show.
FittedModel AwkwardFit() {
  FittedModel fitted;
  fitted.model_name = "fmnist_cnn";
  fitted.model = SmallModel();
  fitted.model.params = 421642.0;
  fitted.model.fwd_s_per_sample = 1.0 / 3.0 * 1e-4;
  fitted.model.activation_bytes_per_sample = std::nextafter(1e5, 2e5);
  fitted.params = RoundParams();
  fitted.params.k_bwd = 2.0 / 3.0 + 1.0;
  fitted.params.k_opt = 0.1 * 1e-9;
  fitted.params.k_const = std::nextafter(0.0123, 1.0);
  fitted.b_intra = 1e10 / 7.0;
  fitted.b_inter = 3.3e9;
  fitted.b_pcie = 5.123456789012345e9;
  fitted.points = 7;
  fitted.rmsle = 0.0271828182845904;
  fitted.fwd_s_per_pass = 1e-3 / 7.0;
  fitted.backward = PassTime{2e-3 / 7.0, 1e-4 / 3.0};
  return fitted;
}

TEST(FittedModelJson, RoundTripsEveryDoubleBitExactly) {
  FittedModel in = AwkwardFit();
  Result<FittedModel> out = FittedModelFromJson(FittedModelToJson(in));
  ASSERT_TRUE(out) << out.error;
  EXPECT_EQ(out->model_name, "fmnist_cnn");
  ParamVector a = ToVector(in.params), b = ToVector(out->params);
  for (int i = 0; i < kNumPerfParams; ++i) EXPECT_TRUE(SameBits(a[i], b[i])) << ParamName(i);
  EXPECT_TRUE(SameBits(in.model.params, out->model.params));
  EXPECT_TRUE(SameBits(in.model.fwd_s_per_sample, out->model.fwd_s_per_sample));
  EXPECT_TRUE(
      SameBits(in.model.activation_bytes_per_sample, out->model.activation_bytes_per_sample));
  EXPECT_EQ(in.model.layers, out->model.layers);
  EXPECT_EQ(in.model.seq_len, out->model.seq_len);
  EXPECT_EQ(in.model.hidden, out->model.hidden);
  EXPECT_EQ(in.model.global_batch, out->model.global_batch);
  EXPECT_TRUE(SameBits(in.b_intra, out->b_intra));
  EXPECT_TRUE(SameBits(in.b_inter, out->b_inter));
  EXPECT_TRUE(SameBits(in.b_pcie, out->b_pcie));
  EXPECT_EQ(out->points, 7);
  EXPECT_TRUE(SameBits(in.rmsle, out->rmsle));
  EXPECT_TRUE(SameBits(in.fwd_s_per_pass, out->fwd_s_per_pass));
  ASSERT_TRUE(out->backward.has_value());
  EXPECT_TRUE(SameBits(in.backward->s_per_pass, out->backward->s_per_pass));
  EXPECT_TRUE(SameBits(in.backward->s_per_sample, out->backward->s_per_sample));
  // Writing what was read gives the same text.
  EXPECT_EQ(FittedModelToJson(in), FittedModelToJson(*out));
}

TEST(FittedModelJson, OptionalModelFieldsTakeModelDescDefaults) {
  const char* text = R"({"format": "elastic-perf-fitted/1", "model_name": "m",
    "model": {"params": 1000, "global_batch": 64, "fwd_s_per_sample": 0.001},
    "params": {"k_bwd": 2, "k_sync": 2, "k_opt": 1e-9, "k_opt_off": 1e-8, "k_off": 2,
               "k_swap": 2, "k_const": 0.01},
    "b_intra": 1e9, "b_inter": 1e9, "b_pcie": 1e10})";
  Result<FittedModel> out = FittedModelFromJson(text);
  ASSERT_TRUE(out) << out.error;
  EXPECT_EQ(out->model.layers, ModelDesc{}.layers);
  EXPECT_EQ(out->model.grad_bytes, ModelDesc{}.grad_bytes);
  EXPECT_EQ(out->points, 0);
  EXPECT_EQ(out->fwd_s_per_pass, 0.0);  // no fixed costs per pass: a linear forward time
  EXPECT_FALSE(out->backward.has_value());
  EXPECT_EQ(out->params.k_const, 0.01);
}

// Each malformed document and a fragment of the message it must produce.
struct BadCase {
  const char* name;
  std::string text;
  const char* expected;
};

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Replaces the value of the first `"key": value` (up to the next comma or line end).
std::string ReplaceValue(std::string text, const std::string& key, const std::string& value) {
  std::string needle = "\"" + key + "\": ";
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return text;
  at += needle.size();
  size_t end = text.find_first_of(",\n", at);
  return text.replace(at, end - at, value);
}

TEST(FittedModelJson, FitPointsRoundTripAndAreOptional) {
  FittedModel in = AwkwardFit();
  ProfiledPoint point;
  point.plan.dp = 2;
  point.plan.ga_steps = 3;
  point.resources = OneNode(2, 2);
  point.resources.gpu_flops = 1e4 / 3.0;
  point.throughput = 6684.25 / 7.0;
  in.fit_points = {point, point};
  in.fit_points[1].plan.offload = true;
  in.fit_points[1].plan.zero_stage = 2;
  in.fit_points[1].plan.cpu_threads = 2;
  Result<FittedModel> out = FittedModelFromJson(FittedModelToJson(in));
  ASSERT_TRUE(out) << out.error;
  ASSERT_EQ(out->fit_points.size(), 2u);
  EXPECT_TRUE(SameBits(out->fit_points[0].throughput, point.throughput));
  EXPECT_TRUE(SameBits(out->fit_points[0].resources.gpu_flops, point.resources.gpu_flops));
  EXPECT_EQ(out->fit_points[0].plan.ga_steps, 3);
  EXPECT_TRUE(out->fit_points[1].plan.offload);
  EXPECT_EQ(FittedModelToJson(in), FittedModelToJson(*out));
  // Files written before fit_points existed (and models without them) load with none.
  const std::string old = FittedModelToJson(AwkwardFit());
  ASSERT_EQ(old.find("fit_points"), std::string::npos);
  Result<FittedModel> loaded = FittedModelFromJson(old);
  ASSERT_TRUE(loaded) << loaded.error;
  EXPECT_TRUE(loaded->fit_points.empty());
}

TEST(FittedModelJson, RefusesMalformedFitPoints) {
  const std::string good = FittedModelToJson(AwkwardFit());
  std::vector<BadCase> cases = {
      {"not an array", Replace(good, "\"rmsle\"", "\"fit_points\": {}, \"rmsle\""),
       "fit_points: expected an array"},
      {"no resources", Replace(good, "\"rmsle\"", "\"fit_points\": [{\"plan\": 1}], \"rmsle\""),
       "fit_points[0].resources: missing"},
  };
  for (const BadCase& c : cases) {
    Result<FittedModel> out = FittedModelFromJson(c.text);
    EXPECT_FALSE(out) << c.name;
    EXPECT_NE(out.error.find(c.expected), std::string::npos)
        << c.name << ": got \"" << out.error << "\"";
  }
}

TEST(FittedModelJson, RefusesMalformedInputNamingTheField) {
  std::string good = FittedModelToJson(AwkwardFit());
  std::vector<BadCase> cases = {
      {"not json", "{\"format\":", "not valid JSON"},
      {"array", "[1, 2]", "expected an object"},
      {"wrong format", Replace(good, "elastic-perf-fitted/1", "elastic-perf-points/1"),
       "format: expected \"elastic-perf-fitted/1\""},
      {"missing params", Replace(good, "\"params\": {", "\"paramz\": {"), "unknown key"},
      {"missing k_sync", Replace(good, "\"k_sync\"", "\"k_synk\""), "params.k_synk: unknown key"},
      {"negative bandwidth", ReplaceValue(good, "b_inter", "-1"),
       "b_inter: expected a number >= 0"},
      {"string number", ReplaceValue(good, "k_bwd", "\"2\""), "params.k_bwd: expected a number"},
      {"float batch", ReplaceValue(good, "global_batch", "8.5"),
       "model.global_batch: expected an integer >= 1"},
      {"zero params", ReplaceValue(good, "params", "0"), "model.params: expected a number >= 1"},
      {"empty name", Replace(good, "\"model_name\": \"fmnist_cnn\"", "\"model_name\": \"\""),
       "model_name: expected a non-empty string"},
  };
  for (const BadCase& c : cases) {
    Result<FittedModel> out = FittedModelFromJson(c.text);
    EXPECT_FALSE(out) << c.name;
    EXPECT_NE(out.error.find(c.expected), std::string::npos)
        << c.name << ": got \"" << out.error << "\"";
  }
  // A required key that is simply absent.
  Result<FittedModel> out = FittedModelFromJson(R"({"format": "elastic-perf-fitted/1"})");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error.find("model_name: missing"), std::string::npos) << out.error;
}

TEST(FittedModelJson, GradientExchangeRoundTripsAndDefaultsToTheRing) {
  FittedModel in = AwkwardFit();
  in.model.gradient_exchange = GradientExchange::kEstSlots;
  const std::string text = FittedModelToJson(in);
  EXPECT_NE(text.find("\"gradient_exchange\": \"est-slots\""), std::string::npos) << text;
  Result<FittedModel> out = FittedModelFromJson(text);
  ASSERT_TRUE(out) << out.error;
  EXPECT_EQ(out->model.gradient_exchange, GradientExchange::kEstSlots);
  // Files written before the key existed describe Rubick's ring all-reduce.
  Result<FittedModel> old =
      FittedModelFromJson(Replace(text, "\"gradient_exchange\": \"est-slots\",", ""));
  ASSERT_TRUE(old) << old.error;
  EXPECT_EQ(old->model.gradient_exchange, GradientExchange::kRingAllReduce);
  Result<FittedModel> bad =
      FittedModelFromJson(ReplaceValue(text, "gradient_exchange", "\"nccl\""));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error.find("model.gradient_exchange: expected \"ring-all-reduce\", "
                           "\"rank-partials\" or \"est-slots\", got \"nccl\""),
            std::string::npos)
      << bad.error;
}

TEST(FittedModelJson, SplitSharesRoundTripAndDefaultToAnEvenSplit) {
  FittedModel in = AwkwardFit();
  in.model.layers = 3;
  in.model.tp_unsplit_share = 0.1 / 3.0;
  in.model.block_shares = {0.2 / 3.0, 0.4375, 1.0 - 0.4375 - 0.2 / 3.0};
  const std::string text = FittedModelToJson(in);
  Result<FittedModel> out = FittedModelFromJson(text);
  ASSERT_TRUE(out) << out.error;
  EXPECT_TRUE(SameBits(out->model.tp_unsplit_share, in.model.tp_unsplit_share));
  ASSERT_EQ(out->model.block_shares.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(SameBits(out->model.block_shares[i], in.model.block_shares[i])) << i;
  }
  // Files written before the keys existed split evenly (§4.1).
  FittedModel even = AwkwardFit();
  even.model.layers = 3;
  Result<FittedModel> old = FittedModelFromJson(FittedModelToJson(even));
  ASSERT_TRUE(old) << old.error;
  EXPECT_EQ(old->model.tp_unsplit_share, 0.0);
  EXPECT_TRUE(old->model.block_shares.empty());
  EXPECT_EQ(FittedModelToJson(even).find("block_shares"), std::string::npos);
  const std::pair<std::string, std::string> bad_cases[] = {
      {ReplaceValue(text, "tp_unsplit_share", "1.5"), "model.tp_unsplit_share: expected"},
      {ReplaceValue(text, "tp_unsplit_share", "-0.1"), "model.tp_unsplit_share: expected"},
      {Replace(text, "0.4375,", "-0.4375,"), "model.block_shares[1]: expected a share in [0, 1]"},
      {Replace(text, "0.4375,", "\"x\","), "model.block_shares[1]: expected a share in [0, 1]"},
      {Replace(text, "0.4375,", ""), "model.block_shares: expected an array of 3 numbers"},
  };
  for (const auto& [bad_text, expected] : bad_cases) {
    Result<FittedModel> bad = FittedModelFromJson(bad_text);
    ASSERT_FALSE(bad) << expected;
    EXPECT_NE(bad.error.find(expected), std::string::npos) << bad.error;
  }
}

ProfiledPoints TwoRuns() {
  ProfiledPoints points;
  points.model_name = "fmnist_cnn";
  points.model = SmallModel();
  points.model.seq_len = 0;
  points.model.hidden = 0;
  points.b_intra = 2.5e9 / 3.0;
  points.b_inter = points.b_intra;
  points.b_pcie = 7.77e9;
  ProfiledRun dp;
  dp.label = "w2-t1-dp";
  dp.point.plan.dp = 2;
  dp.point.resources = OneNode(2, 2);
  dp.point.resources.gpu_flops = 1e9 / 3.0;
  dp.point.resources.fwd_s_per_pass = 1e-4 / 3.0;
  dp.point.throughput = 1234.5678901234567;
  dp.intra_threads = 1;
  dp.measured_steps = 12;
  dp.median_step_s = 0.1 / 3.0;
  ProfiledRun offload = dp;
  offload.label = "w2-t1-zero-offload-c2";
  offload.point.plan.zero_stage = 2;
  offload.point.plan.offload = true;
  offload.point.plan.cpu_threads = 2;
  offload.point.throughput = 987.6543210987654;
  offload.point.resources.backward = PassTime{2e-4 / 3.0, 1e-4 / 7.0};
  points.runs = {dp, offload};
  return points;
}

TEST(ProfiledPointsJson, RoundTripsBitExactly) {
  ProfiledPoints in = TwoRuns();
  Result<ProfiledPoints> out = ProfiledPointsFromJson(ProfiledPointsToJson(in));
  ASSERT_TRUE(out) << out.error;
  ASSERT_EQ(out->runs.size(), 2u);
  EXPECT_TRUE(SameBits(out->b_intra, in.b_intra));
  EXPECT_TRUE(SameBits(out->runs[0].point.throughput, in.runs[0].point.throughput));
  EXPECT_TRUE(SameBits(out->runs[0].median_step_s, in.runs[0].median_step_s));
  EXPECT_TRUE(
      SameBits(out->runs[0].point.resources.gpu_flops, in.runs[0].point.resources.gpu_flops));
  EXPECT_EQ(out->runs[1].point.plan, in.runs[1].point.plan);
  EXPECT_EQ(out->runs[1].label, "w2-t1-zero-offload-c2");
  EXPECT_EQ(out->runs[1].point.resources.gpus_per_node, 2);
  EXPECT_EQ(ProfiledPointsToJson(in), ProfiledPointsToJson(*out));
  EXPECT_TRUE(SameBits(out->runs[0].point.resources.fwd_s_per_pass,
                       in.runs[0].point.resources.fwd_s_per_pass));
  // The backward pass: written only where measured, and read back as it was.
  EXPECT_FALSE(out->runs[0].point.resources.backward.has_value());
  ASSERT_TRUE(out->runs[1].point.resources.backward.has_value());
  EXPECT_TRUE(SameBits(out->runs[1].point.resources.backward->s_per_pass, 2e-4 / 3.0));
  EXPECT_TRUE(SameBits(out->runs[1].point.resources.backward->s_per_sample, 1e-4 / 7.0));
}

// The backward pass is refused negative, at zero per sample, or with one of its two keys.
TEST(ProfiledPointsJson, RefusesAMalformedBackwardPass) {
  const std::string good = ProfiledPointsToJson(TwoRuns());
  auto with_value = [&good](const std::string& key, const std::string& value) {
    std::string text = good;
    const std::size_t at = text.find("\"" + key + "\":") + key.size() + 3;
    text.replace(at, text.find_first_of(",}", at) - at, value);
    return text;
  };
  std::string one_key = good;
  const std::size_t at = one_key.find("\"bwd_s_per_sample\"");
  one_key.erase(at, one_key.find_first_of(",}", at) + 1 - at);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with_value("bwd_s_per_pass", "-1"),
       "runs[1].resources.bwd_s_per_pass: expected a number >= 0.0, got -1"},
      {with_value("bwd_s_per_sample", "0"),
       "runs[1].resources.bwd_s_per_sample: expected a number > 0, got 0"},
      {one_key,
       "runs[1].resources.bwd_s_per_sample: missing: the backward pass needs both "
       "bwd_s_per_pass and bwd_s_per_sample"},
  };
  for (const auto& [text, error] : cases) {
    Result<ProfiledPoints> out = ProfiledPointsFromJson(text);
    ASSERT_FALSE(out) << text;
    EXPECT_NE(out.error.find(error), std::string::npos) << out.error;
  }
}

// Points written before fwd_s_per_pass existed read as 0 (a linear forward time).
TEST(ProfiledPointsJson, FixedForwardCostIsOptional) {
  std::string text = ProfiledPointsToJson(TwoRuns());
  for (std::size_t at; (at = text.find("\"fwd_s_per_pass\"")) != std::string::npos;) {
    text.erase(at, text.find_first_of(",}", at) + 1 - at);
  }
  ASSERT_EQ(text.find("fwd_s_per_pass"), std::string::npos);
  Result<ProfiledPoints> out = ProfiledPointsFromJson(text);
  ASSERT_TRUE(out) << out.error << "\n" << text;
  EXPECT_EQ(out->runs[0].point.resources.fwd_s_per_pass, 0.0);
}

TEST(ProfiledPointsJson, RefusesMalformedRuns) {
  std::string good = ProfiledPointsToJson(TwoRuns());
  std::vector<BadCase> cases = {
      {"duplicate label", Replace(good, "w2-t1-zero-offload-c2", "w2-t1-dp"),
       "runs[1].label: \"w2-t1-dp\" appears twice"},
      {"zero throughput", ReplaceValue(good, "throughput", "0"),
       "runs[0].throughput: expected a number > 0"},
      {"bad plan", ReplaceValue(good, "dp", "0"), "runs[0].plan.dp: expected an integer >= 1"},
      {"null bandwidth", ReplaceValue(good, "b_pcie", "null"), "b_pcie: expected a number"},
      {"unknown run key", Replace(good, "\"intra_threads\"", "\"threads\""),
       "runs[0].threads: unknown key"},
      {"runs not array", Replace(good, "\"runs\": [", "\"runs\": 3, \"x\": ["), "unknown key"},
      {"fitted file", FittedModelToJson(AwkwardFit()), "unknown key"},
  };
  for (const BadCase& c : cases) {
    Result<ProfiledPoints> out = ProfiledPointsFromJson(c.text);
    EXPECT_FALSE(out) << c.name;
    EXPECT_NE(out.error.find(c.expected), std::string::npos)
        << c.name << ": got \"" << out.error << "\"";
  }
}

}  // namespace
}  // namespace elastic::perf
