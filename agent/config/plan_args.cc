// ParsePlanArgs: SLURM_ELASTIC_PLAN_ARGS (c=<host threads>, burst=<ranks per block>).
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "agent/config/job_config.h"  // declares ParsePlanArgs
#include "agent/config/quoted.h"

namespace elastic::agent {
namespace {

// "2/1/1/2" -> {2, 1, 1, 2}; nullopt for an empty item or a count outside 1..kMaxEsts.
std::optional<std::vector<std::int64_t>> ParseBurstWorkers(std::string_view text) {
  std::vector<std::int64_t> workers;
  while (true) {
    const std::size_t slash = text.find('/');
    const std::string_view item = text.substr(0, slash);
    std::int64_t count = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || count < 1 ||
        count > kMaxEsts) {
      return std::nullopt;
    }
    workers.push_back(count);
    if (slash == std::string_view::npos) return workers;
    text = text.substr(slash + 1);
  }
}

}  // namespace

Result<PlanArgs> ParsePlanArgs(std::string_view text) {
  PlanArgs args;
  if (!text.empty() && text.back() == ',') {
    return Result<PlanArgs>::Fail("invalid value " + Quoted(text) +
                                  ": a trailing comma; expected c=<host threads>");
  }
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if ((key != "c" && key != "burst") || eq == std::string_view::npos) {
      return Result<PlanArgs>::Fail(
          "invalid item " + Quoted(item) +
          ": expected c=<host threads> (e.g. \"c=2\") or burst=<ranks per block> "
          "(e.g. \"burst=2/1/1/2\")");
    }
    if (key == "burst") {
      auto workers = ParseBurstWorkers(value);
      if (!workers) {
        return Result<PlanArgs>::Fail(
            "invalid value " + Quoted(value) +
            " for burst: expected one rank count per model block, each an integer from "
            "1 to " +
            std::to_string(kMaxEsts) + ", separated by / (e.g. \"2/1/1/2\")");
      }
      args.burst_workers = std::move(*workers);
      continue;
    }
    std::int64_t threads = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), threads);
    if (ec != std::errc() || end != value.data() + value.size() || threads < 1 ||
        threads > kMaxThreads) {
      return Result<PlanArgs>::Fail("invalid value " + Quoted(value) +
                                    " for c: expected an integer from 1 to " +
                                    std::to_string(kMaxThreads));
    }
    args.cpu_threads = threads;
  }
  return Result<PlanArgs>::Ok(std::move(args));
}

}  // namespace elastic::agent
