// Policy factory and queue ordering.
#include "scheduler/policy/policy.h"

#include <algorithm>

#include "scheduler/policy/backfill_policy.h"
#include "scheduler/policy/easyscale_policy.h"
#include "scheduler/policy/rubick_policy.h"

namespace elastic::policy {

std::string_view PolicyChoices() {
  return "backfill, easyscale, rubick, elastic, rubick-e, rubick-r, rubick-n";
}

Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const PolicyOptions& options) {
  using Made = Result<std::unique_ptr<Policy>>;
  if (name == "backfill") return Made::Ok(std::make_unique<BackfillPolicy>(options));
  if (name == "easyscale") return Made::Ok(std::make_unique<EasyScalePolicy>(options));
  if (name == "rubick") return Made::Ok(std::make_unique<RubickPolicy>(options));
  if (name == "elastic") return Made::Ok(std::make_unique<ElasticPolicy>(options));
  if (name == "rubick-e") {
    return Made::Ok(std::make_unique<RubickPolicy>(options, false, RubickVariant::kPlansOnly));
  }
  if (name == "rubick-r") {
    return Made::Ok(std::make_unique<RubickPolicy>(options, false, RubickVariant::kResourcesOnly));
  }
  if (name == "rubick-n") {
    return Made::Ok(std::make_unique<RubickPolicy>(options, false, RubickVariant::kNeither));
  }
  return Made::Fail("elastic policy: unknown policy \"" + std::string(name) +
                    "\": expected one of " + std::string(PolicyChoices()));
}

std::vector<const JobState*> QueueOrder(const std::vector<JobState>& jobs) {
  std::vector<const JobState*> queue;
  for (const JobState& job : jobs) {
    if (!job.running()) queue.push_back(&job);
  }
  auto before = [](const JobState* a, const JobState* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->submit_time_s != b->submit_time_s) return a->submit_time_s < b->submit_time_s;
    return a->id < b->id;
  };
  // Callers (the simulator) often pass jobs in submission order already: checking is linear,
  // sorting a long queue at every event is not. Ids are unique, so the order is total and the
  // result the same either way.
  if (!std::is_sorted(queue.begin(), queue.end(), before)) {
    std::sort(queue.begin(), queue.end(), before);
  }
  return queue;
}

}  // namespace elastic::policy
