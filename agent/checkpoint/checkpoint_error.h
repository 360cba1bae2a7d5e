// CheckpointError: a checkpoint cannot be written, read or used; the message names the file.
// Error model of agent/checkpoint: every failure (I/O, corruption, incompatible config, misuse of
// the writer) throws CheckpointError, so the agent can tell "this checkpoint is bad" (fall back to
// an older one, or refuse to resume) from a LibTorch or MPI failure. Nothing else is thrown
// except std::bad_alloc.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace elastic::agent {

class CheckpointError : public std::runtime_error {
 public:
  // what() is "checkpoint <path>: <reason>", or "checkpoint: <reason>" when no file is involved.
  CheckpointError(const std::filesystem::path& path, const std::string& reason);
  explicit CheckpointError(const std::string& reason);

  // The file or directory concerned; empty when none (a bad record name, say).
  const std::filesystem::path& path() const { return path_; }
  // What is wrong, without the path: "record 2 (\"params\"): CRC mismatch".
  const std::string& reason() const { return reason_; }

 private:
  std::filesystem::path path_;
  std::string reason_;
};

}  // namespace elastic::agent
