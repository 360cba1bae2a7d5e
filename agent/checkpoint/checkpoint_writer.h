// CheckpointWriter: collects named byte blobs (parameters, optimizer state, EST contexts, the
// bucket map; serialized by the trainer) and commits them as one crash-safe checkpoint file.
// Not thread-safe. Throws CheckpointError. One writer per directory at a time (the agent's rank
// 0): PruneOld treats every temp file it finds as a crash leftover.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "agent/checkpoint/fingerprint.h"

namespace elastic::agent {

class CheckpointWriter {
 public:
  // `fingerprint` goes into the "meta" record; a reader refuses to resume a run whose
  // fingerprint differs (CheckpointReader::RequireCompatible).
  explicit CheckpointWriter(Fingerprint fingerprint);

  // Adds a record; the writer keeps the payload until it is destroyed. Throws if `name` is
  // malformed (1..255 bytes of printable ASCII, no spaces), is "meta", or was added before.
  void Add(std::string name, std::string payload);

  // Writes <dir>/ckpt-<step, 10 digits>.elck and returns its path: the records go to a temp
  // file in `dir` (O_EXCL, 0600), which is fsynced, renamed over the final name and the
  // directory fsynced, so after a crash the name holds either a complete checkpoint or nothing
  // (or the previous file of that step). Creates `dir` with mode 0700 if missing; refuses a
  // `dir` that another user owns or that group or others may write. On failure the temp file is
  // removed. May be called again (another step, another directory).
  std::filesystem::path Commit(const std::filesystem::path& dir, std::uint64_t step) const;

 private:
  Fingerprint fingerprint_;
  std::vector<std::pair<std::string, std::string>> records_;
};

}  // namespace elastic::agent
