// CheckpointWriter: collects named byte blobs (parameters, optimizer state, EST contexts, the
// bucket map; serialized by the trainer) and commits them as one crash-safe checkpoint file.
// Not thread-safe. Throws CheckpointError. One writer per directory at a time (the agent's rank
// 0): PruneOld treats every temp file it finds as a crash leftover.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "agent/checkpoint/fingerprint.h"

namespace elastic::agent {

class CheckpointWriter {
 public:
  // `fingerprint` goes into the "meta" record; a reader refuses to resume a run whose
  // fingerprint differs (CheckpointReader::RequireCompatible).
  explicit CheckpointWriter(Fingerprint fingerprint);

  // Adds a record; the writer keeps the payload until it is destroyed (pass an rvalue to move
  // it in without a copy). Throws if `name` is malformed (1..255 bytes of printable ASCII, no
  // spaces), is "meta", or was added before.
  void Add(std::string name, std::string payload);

  // Adds a record whose payload the writer only borrows: no copy is made, so a large buffer
  // (a serialized model) goes from the caller's memory to the file directly.
  // REQUIRES: `payload` stays alive and unchanged until the last Commit returns.
  void AddView(std::string name, std::string_view payload);

  // Writes <dir>/ckpt-<step, 10 digits>.elck and returns its path: the records go to a temp
  // file in `dir` (O_EXCL, 0600), which is fsynced, renamed over the final name and the
  // directory fsynced, so after a crash the name holds either a complete checkpoint or nothing
  // (or the previous file of that step). Creates `dir` with mode 0700 if missing; refuses a
  // `dir` that another user owns or that group or others may write. On failure the temp file is
  // removed. May be called again (another step, another directory).
  std::filesystem::path Commit(const std::filesystem::path& dir, std::uint64_t step) const;

 private:
  struct Record {
    std::string name;
    std::string owned;          // the payload when the writer owns it
    std::string_view borrowed;  // the payload when the caller owns it
    bool is_borrowed = false;
    std::string_view payload() const { return is_borrowed ? borrowed : owned; }
  };
  void CheckNewName(const std::string& name) const;

  Fingerprint fingerprint_;
  std::vector<Record> records_;
};

}  // namespace elastic::agent
