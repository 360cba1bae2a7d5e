// Saves and restores elasticd's registry (jobs, orders in flight, recent decisions) as JSON in
// state_dir, crash-safely (temp file, fsync, rename, fsync dir), so a restarted daemon resumes
// without disturbing any job.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/daemon/daemon_state.h"

namespace elastic::daemon {

nlohmann::json RegistryToJson(const DaemonState& state);
// Replaces state.jobs and state.recent; throws std::runtime_error naming what is malformed.
void RegistryFromJson(const nlohmann::json& doc, DaemonState& state);

// <dir>/registry.json, mode 0600. Throws std::runtime_error on I/O failure.
void SaveRegistry(const std::string& dir, const DaemonState& state);
// Returns false when there is no saved registry; throws when it exists but cannot be read.
bool LoadRegistry(const std::string& dir, DaemonState& state);

}  // namespace elastic::daemon
