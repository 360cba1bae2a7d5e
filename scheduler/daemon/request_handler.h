// Turns an authenticated request into a response. Pure: the caller passes the state and time.
#pragma once

#include <cstdint>
#include <string>

#include "scheduler/daemon/credential.h"
#include "scheduler/daemon/daemon_state.h"

namespace elastic::daemon {

// Users see only their own jobs and decisions; admins (root, SlurmUser) see everything.
std::string HandleRequest(const Authenticated& who, DaemonState& state, std::int64_t now_unix);

}  // namespace elastic::daemon
