// LogThrottle: fixed windows per source, bounded memory.
#include "scheduler/daemon/log_throttle.h"

#include <algorithm>

namespace elastic::daemon {

LogThrottle::LogThrottle(int lines_per_window, std::int64_t window_s, std::size_t max_sources)
    : lines_per_window_(lines_per_window), window_s_(window_s), max_sources_(max_sources) {}

bool LogThrottle::Allow(const std::string& source, std::int64_t now, std::uint64_t& suppressed) {
  suppressed = 0;
  auto it = windows_.find(source);
  if (it == windows_.end()) {
    if (windows_.size() >= max_sources_) {
      // Forget the source whose window started longest ago; its count restarts if it returns.
      auto oldest = std::min_element(windows_.begin(), windows_.end(), [](const auto& a,
                                                                          const auto& b) {
        return a.second.start < b.second.start;
      });
      windows_.erase(oldest);
    }
    it = windows_.emplace(source, Window{now, 0, 0}).first;
  }
  Window& w = it->second;
  if (now - w.start >= window_s_) {
    suppressed = w.suppressed;  // reported on the first line of the new window
    w = Window{now, 0, 0};
  }
  if (w.lines >= lines_per_window_) {
    ++w.suppressed;
    return false;
  }
  ++w.lines;
  return true;
}

std::string WithSuppressed(const std::string& message, std::uint64_t suppressed) {
  if (suppressed == 0) return message;
  return message + " (" + std::to_string(suppressed) + " similar message(s) from this source " +
         "suppressed)";
}

}  // namespace elastic::daemon
