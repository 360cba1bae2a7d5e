// CheckpointReader: opens one checkpoint file, validates all of it (magic, version, every record
// CRC, the end record with its record count and whole-file CRC, the meta record) and then holds
// its records in memory. Immutable after Open: const methods may be called from any thread.
// Throws CheckpointError naming the file and what is wrong with it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/checkpoint/fingerprint.h"

namespace elastic::agent {

class CheckpointReader {
 public:
  // Reads and validates `path`; on any damage throws with a reason such as
  // "record 2 (\"params\"): CRC mismatch" or "truncated after 1234 bytes: ...".
  static CheckpointReader Open(const std::filesystem::path& path);
  // The same checks as Open, streaming payloads through a small buffer instead of keeping them.
  static void Validate(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  std::uint64_t step() const { return step_; }
  const Fingerprint& fingerprint() const { return fingerprint_; }

  // The caller's record names in file order ("meta" is not among them).
  std::vector<std::string> Names() const;
  bool Contains(std::string_view name) const;
  // The payload of `name`; throws if the checkpoint has no such record.
  const std::string& Get(std::string_view name) const;

  // Throws unless `current` equals the fingerprint this checkpoint was written with; the message
  // names every key that differs (see DescribeMismatch).
  void RequireCompatible(const Fingerprint& current) const;

 private:
  CheckpointReader() = default;

  std::filesystem::path path_;
  std::uint64_t step_ = 0;
  Fingerprint fingerprint_;
  std::vector<std::pair<std::string, std::string>> records_;
};

}  // namespace elastic::agent
