// Removal of finished jobs' checkpoint directories <base>/<user>/<jobid>, run by elasticd as
// root (not a SPANK job_epilog: with Slurm 22.05 a shrink plus any epilog leaves phantom
// allocations, docs/admin.md). The trees belong to users, so deletion works on directory fds:
// nothing is followed through a symlink, no other filesystem is entered, and a user who swaps a
// directory for a link mid-way only gets the link removed.
// Error model: nothing throws; problems are collected in CleanupReport::errors and the rest of
// the work goes on. Not thread-safe against itself (run it from one thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace elastic::daemon {

// One <base>/<user>/<jobid> directory found on disk.
struct CheckpointEntry {
  std::string user;
  std::uint32_t job_id = 0;
  std::int64_t mtime = 0;  // unix seconds of the job directory's last change
  bool operator==(const CheckpointEntry&) const = default;
};

// A job directory's name: the canonical decimal job id (what the plugin writes), 1..2^32-1.
// Anything else ("1e3", "007", "tmp") is not a job directory and is never touched.
std::optional<std::uint32_t> ParseJobDirName(std::string_view name);

// The entries to delete: jobs Slurm no longer knows as unfinished (`live_job_ids`), whose
// directory has not changed for `retention` (0 = as soon as the job is gone).
// REQUIRES: `live_job_ids` comes from a successful read of Slurm; an empty set after a failed
// read would make every directory look finished.
std::vector<CheckpointEntry> ChooseExpired(const std::vector<CheckpointEntry>& found,
                                           const std::set<std::uint32_t>& live_job_ids,
                                           std::int64_t now, std::chrono::seconds retention);

struct CleanupReport {
  std::vector<std::string> removed;   // job directories removed, as full paths
  std::uint64_t entries_removed = 0;  // files, links and directories, the job dirs included
  std::size_t kept = 0;               // job directories left (live or within retention)
  std::vector<std::string> errors;    // one message per problem, naming the path
};

// Lists <base>/<user>/<jobid> directories (no symlinks, same filesystem as `base`). A missing
// `base` has none.
std::vector<CheckpointEntry> ScanCheckpointBase(const std::string& base,
                                                std::vector<std::string>& errors);

// Scan, choose, delete: the one call elasticd's cycle makes.
CleanupReport CleanFinishedCheckpoints(const std::string& base,
                                       const std::set<std::uint32_t>& live_job_ids,
                                       std::int64_t now, std::chrono::seconds retention);

}  // namespace elastic::daemon
