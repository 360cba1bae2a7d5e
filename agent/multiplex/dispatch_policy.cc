// PickNext: eligibility (pacing, isolation) first, then priority and submission order.
#include "agent/multiplex/dispatch_policy.h"

namespace elastic::agent::multiplex {
namespace {

bool IsForeground(const JobView& job) { return job.job_class == JobClass::kForeground; }

int OutstandingLimit(const DispatchOptions& options, const JobView& job) {
  return IsForeground(job) ? options.max_outstanding_foreground
                           : options.max_outstanding_background;
}

struct Totals {
  bool isolating = false;  // a foreground piece needs the device to itself, now or soon
  int background_outstanding = 0;
};

Totals Summarise(const DispatchOptions& options, std::span<const JobView> jobs) {
  Totals totals;
  for (const JobView& job : jobs) {
    if (IsForeground(job)) {
      totals.isolating |= options.isolate_sensitive &&
                          ((job.has_queued && job.head_isolated) || job.isolated_outstanding > 0);
    } else {
      totals.background_outstanding += job.outstanding;
    }
  }
  return totals;
}

bool Eligible(const DispatchOptions& options, const Totals& totals, const JobView& job) {
  if (!job.has_queued) return false;
  const int limit = OutstandingLimit(options, job);
  if (limit > 0 && job.outstanding >= limit) return false;
  if (!IsForeground(job)) return !totals.isolating;
  // An isolated piece waits for the background pieces already on the device to drain.
  return !(options.isolate_sensitive && job.head_isolated && totals.background_outstanding > 0);
}

}  // namespace

std::optional<std::size_t> PickNext(const DispatchOptions& options, std::span<const JobView> jobs) {
  const Totals totals = Summarise(options, jobs);
  std::optional<std::size_t> best;
  auto better = [&](const JobView& job) {
    if (!best) return true;
    const JobView& current = jobs[*best];
    if (options.prioritize_foreground && IsForeground(job) != IsForeground(current)) {
      return IsForeground(job);
    }
    return job.head_seq < current.head_seq;
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (Eligible(options, totals, jobs[i]) && better(jobs[i])) best = i;
  }
  return best;
}

}  // namespace elastic::agent::multiplex
