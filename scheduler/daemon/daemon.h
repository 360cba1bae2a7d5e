// elasticd's start-up steps and event loop, as a library so each step is testable.
#pragma once

#include <string>

#include "protocol/messages.h"
#include "scheduler/daemon/daemon_config.h"

namespace elastic::daemon {

// Runs until SIGTERM/SIGINT. Without `foreground` it detaches once the socket is listening
// (the parent exits 0 then, or 1 if start-up failed). Returns the process exit status.
int RunDaemon(const DaemonConfig& config, bool foreground);

// Human-readable rendering of a status reply (`elasticd status` without --json).
std::string FormatStatus(const StatusReply& reply);

}  // namespace elastic::daemon
