// HostedEsts / HostedEstsBySpeed: the contiguous EST blocks, balanced or by device speed.
#include "agent/est/est_placement.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/toml_reader.h"

namespace elastic::agent {

EstRange HostedEsts(std::int64_t ests, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    throw ConfigError("EST placement: rank " + std::to_string(rank) + " of " +
                      std::to_string(ranks) + " is out of range");
  }
  if (ranks > ests) {
    throw ConfigError("train.ests: " + std::to_string(ests) + " ESTs cannot be spread over " +
                      std::to_string(ranks) +
                      " ranks: expected at most one rank per EST (start fewer ranks, or raise "
                      "train.ests or --elastic-est)");
  }
  return EstRange{ests * rank / ranks, ests * (rank + 1) / ranks};
}

namespace {

// One EST per rank, the rest by the largest-remainder method on the speeds (ties: lower rank),
// so a faster rank never hosts fewer ESTs than a slower one.
std::vector<std::int64_t> SizesBySpeed(std::int64_t ests, const std::vector<double>& speeds) {
  const auto ranks = static_cast<std::int64_t>(speeds.size());
  double total = 0.0;
  for (double speed : speeds) total += speed;
  const auto rest = static_cast<double>(ests - ranks);
  std::vector<std::int64_t> sizes(speeds.size(), 1);
  std::vector<std::pair<double, std::size_t>> remainders;
  std::int64_t given = ranks;
  for (std::size_t r = 0; r < speeds.size(); ++r) {
    const double share = rest * speeds[r] / total;
    const auto whole = static_cast<std::int64_t>(std::floor(share));
    sizes[r] += whole;
    given += whole;
    remainders.emplace_back(share - static_cast<double>(whole), r);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // Fewer ESTs are left than ranks (the fractions sum below the rank count).
  for (std::size_t i = 0; given < ests; ++i, ++given) ++sizes[remainders[i].second];
  return sizes;
}

}  // namespace

EstRange HostedEstsBySpeed(std::int64_t ests, int rank, const std::vector<double>& speeds) {
  const int ranks = static_cast<int>(speeds.size());
  HostedEsts(ests, rank, ranks);  // the same range checks and messages
  for (double speed : speeds) {
    if (!std::isfinite(speed) || speed <= 0.0) {
      throw ConfigError("EST placement: device speed " + std::to_string(speed) +
                        ": expected a positive number (ELASTIC_DEVICE_SPEED)");
    }
  }
  if (std::all_of(speeds.begin(), speeds.end(), [&](double s) { return s == speeds.front(); })) {
    return HostedEsts(ests, rank, ranks);
  }
  const std::vector<std::int64_t> sizes = SizesBySpeed(ests, speeds);
  std::int64_t begin = 0;
  for (int r = 0; r < rank; ++r) begin += sizes[r];
  return EstRange{begin, begin + sizes[rank]};
}

double DeviceSpeedFromEnv(const EnvLookup& env) {
  const std::optional<std::string> text = env("ELASTIC_DEVICE_SPEED");
  if (!text) return 1.0;
  double speed = 0.0;
  const char* end = text->data() + text->size();
  auto [at, ec] = std::from_chars(text->data(), end, speed);
  if (ec != std::errc() || at != end || !std::isfinite(speed) || speed <= 0.0 || speed > 1000.0) {
    throw ConfigError("ELASTIC_DEVICE_SPEED=\"" + *text + "\": expected a number in (0, 1000], "
                      "this node's device speed against a reference GPU of 1");
  }
  return speed;
}

}  // namespace elastic::agent
