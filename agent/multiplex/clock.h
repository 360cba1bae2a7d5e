// The time seam of the multiplexing engine: production reads the steady clock, tests set time.
#pragma once

#include <chrono>

namespace elastic::agent::multiplex {

using TimePoint = std::chrono::steady_clock::time_point;
using Duration = std::chrono::steady_clock::duration;

// Thread-safe: Now() may be called from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace elastic::agent::multiplex
