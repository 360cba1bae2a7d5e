// DriftDetector: the online-refit policy of Rubick §4.3 ("updated online using metrics collected in
// real training runs when the prediction error exceeds a threshold"). Feed it the fitted model's
// prediction and the measured throughput of each report; it says when the systematic relative
// drift over the last `window` reports passes `threshold`, i.e. when to refit with the new points.
// Pure (no clocks); a value type, not thread-safe: one per job, owned by its caller.
#pragma once

#include <deque>

namespace elastic::perf {

struct DriftOptions {
  double threshold = 0.10;  // |relative drift| that triggers a refit (Rubick Table 2: errors
                            // of a good fit stay below ~10%)
  int window = 5;           // reports averaged; no verdict before this many
};

struct DriftVerdict {
  double drift = 0;    // exp(mean ln(measured / predicted)) - 1 over the window (+ = faster)
  bool refit = false;  // window full and |drift| > threshold
};

class DriftDetector {
 public:
  explicit DriftDetector(DriftOptions options = {}) : options_(options) {}

  // Adds one report. Non-positive or non-finite values are ignored (the verdict is unchanged).
  DriftVerdict Observe(double predicted, double measured);
  // The verdict over the current window without adding a report.
  DriftVerdict Current() const;
  // Forget the window: call after refitting, so old errors do not trigger again.
  void Reset() { log_ratios_.clear(); }
  int size() const { return static_cast<int>(log_ratios_.size()); }

 private:
  DriftOptions options_;
  std::deque<double> log_ratios_;  // ln(measured / predicted), newest last
};

}  // namespace elastic::perf
