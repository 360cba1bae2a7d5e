// elasticd's log: one line per event, "<UTC time> elasticd[<pid>] <level>: <message>".
// Thread-safe (one mutex); logging never throws.
#pragma once

#include <string>

#include "scheduler/daemon/daemon_config.h"

namespace elastic::daemon {

// Empty path logs to stderr. Returns false (and keeps stderr) if the file cannot be opened.
bool OpenLog(const std::string& path, LogLevel level);
void Log(LogLevel level, const std::string& message);

}  // namespace elastic::daemon
