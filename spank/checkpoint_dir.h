// The per-job checkpoint directory <base>/<user>/<jobid>, created by root for the job's user.
// Runs as root on a node before the job's tasks exist, inside a directory the user owns, so
// every step refuses symlinks and foreign owners (no path is followed twice: we work on fds).
// Returns "" and fills `path` on success, else a message naming the path and the problem.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace elastic::spank {

std::string PrepareJobCheckpointDir(const std::string& base, const std::string& user_name,
                                    uid_t uid, gid_t gid, std::uint32_t job_id,
                                    std::string& path);

// The user name for `uid`, or the decimal uid when it has no passwd entry.
std::string UserNameOf(uid_t uid);

}  // namespace elastic::spank
