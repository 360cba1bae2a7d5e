// ParseLayerProfileArgs: flags, ranges and the usage text of profile-layers.
#include "agent/profile/layer_profile_args.h"

#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "agent/common/errors.h"

namespace elastic::agent {
namespace {

namespace po = boost::program_options;

constexpr std::string_view kUsage =
    "Usage: elastic-agent profile-layers --model NAME --batches B1,B2,... --out P.json\n"
    "           [--image-size S] [--classes C] [--global-batch B] [--bandwidth-gbps X]\n"
    "           [--latency-us Y] [--reps N] [--warmup N] [--threads T] [--seed N]\n"
    "\n"
    "Times each layer of a built-in model alone (forward + backward, its inputs detached\n"
    "tensors of the real shapes, median of --reps after --warmup) at every per-worker batch, on\n"
    "this machine's CPU with T LibTorch intra-op threads (default 1), and writes the burst\n"
    "planner's profile (elastic-burst-profile/1, docs/burst-planner.md) for\n"
    "`elastic-plan burst --profile P.json`. Models: fmnist_cnn, vgg16, wide_resnet101_2,\n"
    "inception_v3 (torchvision architectures; smaller images work). Take --bandwidth-gbps and\n"
    "--latency-us from `elastic-agent profile`'s measured rank-to-rank bandwidth.\n";

[[noreturn]] void Invalid(const std::string& flag, const std::string& value,
                          const std::string& expected) {
  throw UsageError("profile-layers: --" + flag + ": invalid value \"" + value + "\": expected " +
                   expected + " (see elastic-agent profile-layers --help)");
}

long long ParseInteger(const std::string& flag, const std::string& text, long long min,
                       long long max) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    Invalid(flag, text, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return value;
}

// A finite number > 0, or >= 0 with `allow_zero`.
double ParseNumber(const std::string& flag, const std::string& text, bool allow_zero) {
  double value = 0.0;
  std::size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const bool in_range = allow_zero ? value >= 0.0 : value > 0.0;
  if (text.empty() || used != text.size() || !std::isfinite(value) || !in_range) {
    Invalid(flag, text, allow_zero ? "a number >= 0" : "a number > 0");
  }
  return value;
}

std::vector<int> ParseBatches(const std::string& text) {
  std::vector<int> batches;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    const long long batch = ParseInteger("batches", item, 1, 1 << 20);
    if (!batches.empty() && batch <= batches.back()) {
      Invalid("batches", text, "strictly increasing integers >= 1, e.g. 1,2,4");
    }
    batches.push_back(static_cast<int>(batch));
  }
  if (batches.empty() || text.back() == ',') Invalid("batches", text, "a list such as 1,2,4");
  return batches;
}

po::options_description Options() {
  po::options_description options("Options", 100);
  auto text = [] { return po::value<std::string>(); };
  options.add_options()("help,h", "show this help and exit")(
      "model", text()->required()->value_name("NAME"),
      "fmnist_cnn, vgg16, wide_resnet101_2 or inception_v3")(
      "batches", text()->required()->value_name("B1,B2,..."),
      "per-worker batches to time, strictly increasing")(
      "out,o", text()->required()->value_name("P.json"), "the profile to write")(
      "image-size", text()->value_name("S"),
      "square input images of S pixels (default 224; inception_v3 299, at least 75; vgg16 and "
      "wide_resnet101_2 at least 32; fmnist_cnn only 28)")(
      "classes", text()->value_name("C"), "classifier outputs (default 1000; fmnist_cnn 10)")(
      "global-batch", text()->value_name("B"),
      "the profile's global batch (default: the largest batch)")(
      "bandwidth-gbps", text()->default_value("200")->value_name("X"),
      "per-GPU network bandwidth, Gbit/s each direction")(
      "latency-us", text()->default_value("10")->value_name("Y"), "latency per transfer, µs")(
      "reps", text()->default_value("5")->value_name("N"),
      "measured repetitions per layer and batch")(
      "warmup", text()->default_value("2")->value_name("N"), "unmeasured repetitions first")(
      "threads", text()->default_value("1")->value_name("T"), "LibTorch intra-op threads")(
      "seed", text()->default_value("1")->value_name("N"), "seed of weights and inputs");
  return options;
}

}  // namespace

std::variant<ShowText, LayerProfileOptions> ParseLayerProfileArgs(
    const std::vector<std::string>& args) {
  po::options_description options = Options();
  po::variables_map values;
  try {
    const po::positional_options_description no_positionals;
    po::store(po::command_line_parser(args).options(options).positional(no_positionals).run(),
              values);
    if (values.count("help") != 0) {
      std::ostringstream help;
      help << kUsage << "\n" << options;
      return ShowText{help.str()};
    }
    po::notify(values);
  } catch (const po::error& e) {
    throw UsageError(std::string("profile-layers: ") + e.what() +
                     " (see elastic-agent profile-layers --help)");
  }
  auto get = [&](const char* flag) { return values[flag].as<std::string>(); };
  LayerProfileOptions parsed;
  parsed.model = get("model");
  if (!IsLayerGraphModel(parsed.model)) {
    Invalid("model", parsed.model, "one of " + std::string(LayerGraphModelNames()));
  }
  parsed.batches = ParseBatches(get("batches"));
  parsed.out_path = get("out");
  if (parsed.out_path.empty()) Invalid("out", "", "a file name");
  const bool fmnist = parsed.model == "fmnist_cnn";
  if (values.count("image-size") != 0) {
    const long long min = MinimumImageSize(parsed.model);
    parsed.image_size = ParseInteger("image-size", get("image-size"), min, fmnist ? 28 : 4096);
  }
  if (values.count("classes") != 0) {
    parsed.classes =
        ParseInteger("classes", get("classes"), fmnist ? 10 : 1, fmnist ? 10 : 1 << 20);
  }
  if (values.count("global-batch") != 0) {
    parsed.global_batch =
        static_cast<int>(ParseInteger("global-batch", get("global-batch"), 1, 1 << 24));
  }
  parsed.bandwidth_gbps = ParseNumber("bandwidth-gbps", get("bandwidth-gbps"), false);
  parsed.latency_us = ParseNumber("latency-us", get("latency-us"), true);
  parsed.reps = static_cast<int>(ParseInteger("reps", get("reps"), 1, 100000));
  parsed.warmup = static_cast<int>(ParseInteger("warmup", get("warmup"), 0, 100000));
  parsed.threads = static_cast<int>(ParseInteger("threads", get("threads"), 1, 1024));
  parsed.seed = static_cast<uint64_t>(
      ParseInteger("seed", get("seed"), 0, std::numeric_limits<long long>::max()));
  return parsed;
}

}  // namespace elastic::agent
