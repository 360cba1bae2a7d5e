// Caps how many log lines one source (a uid, or "unauthenticated") may cause per window, so a
// user flooding elasticd with bad requests cannot fill the disk through its log. Pure (the caller
// passes the time); not thread-safe: the daemon's event loop owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace elastic::daemon {

class LogThrottle {
 public:
  // At most `lines_per_window` lines per source in each `window_s`-second window; at most
  // `max_sources` sources remembered (the oldest window is forgotten first).
  LogThrottle(int lines_per_window, std::int64_t window_s, std::size_t max_sources = 1024);

  // Whether a line from `source` at `now` may be logged. When it may and earlier lines of this
  // source were held back, `suppressed` says how many, so the line can say so.
  bool Allow(const std::string& source, std::int64_t now, std::uint64_t& suppressed);

 private:
  struct Window {
    std::int64_t start = 0;
    int lines = 0;
    std::uint64_t suppressed = 0;
  };
  int lines_per_window_;
  std::int64_t window_s_;
  std::size_t max_sources_;
  std::map<std::string, Window> windows_;
};

// "message" or "message (N similar messages suppressed)".
std::string WithSuppressed(const std::string& message, std::uint64_t suppressed);

}  // namespace elastic::daemon
