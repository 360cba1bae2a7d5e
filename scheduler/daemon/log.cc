// Log sink for elasticd.
#include "scheduler/daemon/log.h"

#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace elastic::daemon {
namespace {

std::mutex g_mutex;
FILE* g_sink = nullptr;
LogLevel g_level = LogLevel::kInfo;

}  // namespace

bool OpenLog(const std::string& path, LogLevel level) {
  std::lock_guard lock(g_mutex);
  g_level = level;
  if (path.empty()) return true;
  mode_t old_mask = umask(027);  // the log names users and jobs: not world-readable
  FILE* file = fopen(path.c_str(), "ae");
  umask(old_mask);
  if (file == nullptr) return false;
  setvbuf(file, nullptr, _IOLBF, 0);
  g_sink = file;
  return true;
}

void Log(LogLevel level, const std::string& message) {
  std::lock_guard lock(g_mutex);
  if (static_cast<int>(level) > static_cast<int>(g_level)) return;
  char stamp[32] = "";
  time_t now = time(nullptr);
  struct tm utc {};
  if (gmtime_r(&now, &utc) != nullptr) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  // One record per line whatever a message quotes (an unknown op, a supervisor's note): control
  // characters are escaped, so nobody can forge a log line or send a terminal sequence.
  std::string line;
  line.reserve(message.size());
  for (unsigned char c : message) {
    if (c >= 0x20 && c != 0x7f) {
      line += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      line += escaped;
    }
  }
  fprintf(g_sink != nullptr ? g_sink : stderr, "%s elasticd[%d] %s: %s\n", stamp,
          static_cast<int>(getpid()), ToString(level), line.c_str());
}

}  // namespace elastic::daemon
