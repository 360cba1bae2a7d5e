// Slowdown feedback (DeepPool §5): which foreground operators suffer from co-location and must
// run alone. Pure: durations and the current time come in as arguments, so tests drive it
// without threads or a real clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agent/multiplex/clock.h"

namespace elastic::agent::multiplex {

struct FeedbackOptions {
  // An operator is sensitive when median(co-located) / median(solo) exceeds this.
  double sensitive_ratio = 1.5;
  // Samples of each kind needed before a ratio is trusted; an operator with fewer solo samples
  // runs alone until it has them (so it has a baseline).
  std::size_t min_samples = 3;
  // Sliding window of samples kept per kind.
  std::size_t window = 8;
  // A sensitive operator runs alone for this long, then co-locates again to re-measure (probe).
  Duration retry_after = std::chrono::seconds(2);
};

// Where the next run of an operator goes.
enum class Placement { kColocate, kIsolate };

// What the feedback knows about one operator (for logs and benchmarks).
struct OpReport {
  std::string op;
  std::optional<double> ratio;  // last judged median(co-located) / median(solo)
  bool sensitive = false;
  std::size_t solo_samples = 0;
  std::size_t colocated_samples = 0;
};

// Not thread-safe: the engine calls it under its own lock.
class SlowdownFeedback {
 public:
  explicit SlowdownFeedback(FeedbackOptions options = {});

  // Placement of the next run of `op` at time `now`: isolate while the solo baseline is being
  // learnt and while the operator is marked sensitive and its retry time has not come.
  Placement Decide(std::string_view op, TimePoint now) const;

  // One finished run of `op` that took `duration`; `colocated` when any background piece ran
  // during it. Marks `op` sensitive (until now + retry_after) or unmarks it once enough
  // co-located samples have been gathered since the last judgement.
  void Record(std::string_view op, Duration duration, bool colocated, TimePoint now);

  bool IsSensitive(std::string_view op) const;
  std::vector<OpReport> Report() const;

 private:
  struct OpState {
    std::deque<Duration> solo;
    std::deque<Duration> colocated;
    std::optional<double> ratio;
    bool sensitive = false;
    TimePoint retry_at{};
  };

  void Judge(OpState& state, TimePoint now) const;

  FeedbackOptions options_;
  std::unordered_map<std::string, OpState> ops_;
};

}  // namespace elastic::agent::multiplex
