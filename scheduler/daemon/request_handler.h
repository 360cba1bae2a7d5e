// Turns an authenticated request into a response (docs/protocol.md). Pure: the caller passes the
// state, the time and a way to look a job up in Slurm; a request that changes the registry sets
// state.dirty.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "protocol/credential.h"
#include "scheduler/daemon/daemon_state.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::daemon {

// Slurm's current record of a job (owner, state, nodes, AdminComment); nullopt if unknown.
using JobLookup = std::function<std::optional<policy::SlurmJob>(std::uint32_t)>;

// Users see and act on only their own jobs; admins (root, SlurmUser) on every job, and only
// they may order a resize by hand. Refusals are answered {"ok":false,"error":...}; the caller
// logs them.
std::string HandleRequest(const Authenticated& who, DaemonState& state, std::int64_t now_unix,
                          const JobLookup& lookup = {});

}  // namespace elastic::daemon
