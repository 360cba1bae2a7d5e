// The checkpoints of one directory: listing them newest first, finding the newest one that
// validates (skipping corrupt ones with a warning) and pruning old ones and crash leftovers.
// Throws CheckpointError when the directory cannot be read or is not user-only. Listing and
// finding may run while a writer commits (its temp file is ignored, its rename is atomic);
// PruneOld may not, since it removes temp files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/checkpoint/checkpoint_reader.h"

namespace elastic::agent {

struct CheckpointFile {
  std::uint64_t step = 0;
  std::filesystem::path path;
};

// Files named ckpt-<step>.elck in `dir`, newest step first; temp files and other names are not
// listed. A missing `dir` has no checkpoints.
std::vector<CheckpointFile> ListCheckpoints(const std::filesystem::path& dir);

using CheckpointWarning = std::function<void(const std::string& message)>;

// Opens the newest checkpoint in `dir` that validates. For each newer one that does not, calls
// `warn` with "checkpoint <path> is corrupt (<reason>); falling back to <older path>" (or "...;
// no older valid checkpoint in <dir>"). Returns nothing if `dir` is missing or holds no valid
// checkpoint: whether that means "start from step 0" or "stop" is the caller's decision (it
// should not start over silently when warnings were given). Refuses a `dir` that another user
// owns or that group or others may write.
std::optional<CheckpointReader> FindNewestValid(const std::filesystem::path& dir,
                                                const CheckpointWarning& warn);

// Keeps the `keep` newest valid checkpoints and any corrupt one newer than them (evidence, and
// harmless: readers skip it); removes every older checkpoint and every temp file (a crashed
// writer's; see the single-writer rule in checkpoint_writer.h). Removes nothing but temp files
// while fewer than `keep` valid checkpoints exist. Returns the removed paths. Cost: reads the
// newest checkpoints in full (streaming) until `keep` of them validate.
// REQUIRES: keep >= 1.
std::vector<std::filesystem::path> PruneOld(const std::filesystem::path& dir, int keep = 2);

}  // namespace elastic::agent
