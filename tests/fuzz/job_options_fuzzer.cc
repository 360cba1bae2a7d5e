// libFuzzer target: the job-option vocabulary shared by the plugin, the agent and elasticd
// (plans, classes, determinism levels, counts) and config durations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/duration.h"
#include "common/job_options.h"

namespace {

// Whatever a parser accepts it prints back the same way; whatever it refuses, it says why.
template <typename T>
void CheckRoundTrip(std::string_view text, const elastic::Result<T>& parsed) {
  if (parsed.value.has_value() == !parsed.error.empty()) std::abort();
  if (parsed && elastic::ToString(*parsed.value) != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckRoundTrip(text, elastic::ParsePlan(text));
  CheckRoundTrip(text, elastic::ParseSlaClass(text));
  CheckRoundTrip(text, elastic::ParseDeterminism(text));

  elastic::Result<std::int64_t> count = elastic::ParsePositiveCount(text);
  if (count.value.has_value() == !count.error.empty()) std::abort();
  if (count && (*count.value < 1 || *count.value > (1 << 20))) std::abort();

  if (auto duration = elastic::ParseDuration(text)) {
    if (duration->count() < 0) std::abort();
    auto again = elastic::ParseDuration(elastic::FormatDuration(*duration));
    if (!again || *again != *duration) std::abort();
  }
  return 0;
}
