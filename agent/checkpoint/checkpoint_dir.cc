// Directory-level checkpoint policy: newest valid wins, corrupt ones are skipped loudly.
#include "agent/checkpoint/checkpoint_dir.h"

#include <algorithm>
#include <system_error>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/format.h"
#include "agent/checkpoint/private_files.h"

namespace elastic::agent {
namespace {

// Calls `visit` with the file name of every entry in `dir`; a missing `dir` has no entries.
template <typename Visit>
void ForEachName(const std::filesystem::path& dir, Visit visit) {
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  if (error == std::errc::no_such_file_or_directory) return;
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    visit(it->path().filename().string());
  }
  if (error) throw CheckpointError(dir, "cannot list directory: " + error.message());
}

bool DirectoryExists(const std::filesystem::path& dir) {
  std::error_code error;
  bool exists = std::filesystem::exists(dir, error);
  if (error) throw CheckpointError(dir, "cannot stat directory: " + error.message());
  return exists;
}

}  // namespace

std::vector<CheckpointFile> ListCheckpoints(const std::filesystem::path& dir) {
  std::vector<CheckpointFile> files;
  ForEachName(dir, [&](const std::string& name) {
    if (auto step = checkpoint::ParseCheckpointFileName(name)) files.push_back({*step, dir / name});
  });
  // By number, never by name: steps past 10 digits still sort right. Equal steps (ckpt-7.elck
  // beside ckpt-0000000007.elck, made by hand) are ordered by name so the choice is stable.
  std::sort(files.begin(), files.end(), [](const CheckpointFile& a, const CheckpointFile& b) {
    return a.step != b.step ? a.step > b.step : a.path > b.path;
  });
  return files;
}

std::optional<CheckpointReader> FindNewestValid(const std::filesystem::path& dir,
                                                const CheckpointWarning& warn) {
  if (!DirectoryExists(dir)) return std::nullopt;
  checkpoint::CheckPrivateDirectory(dir);
  std::vector<CheckpointError> corrupt;  // newer than the one we end up with
  std::optional<CheckpointReader> found;
  for (const CheckpointFile& file : ListCheckpoints(dir)) {
    try {
      found = CheckpointReader::Open(file.path);
      break;
    } catch (const CheckpointError& error) {
      corrupt.push_back(error);
    }
  }
  // Each warning names the file that is used instead, so it can only be written once that one
  // is known.
  std::string fallback = found ? "falling back to " + found->path().string()
                               : "no older valid checkpoint in " + dir.string();
  for (const CheckpointError& error : corrupt) {
    warn("checkpoint " + error.path().string() + " is corrupt (" + error.reason() + "); " +
         fallback);
  }
  return found;
}

std::vector<std::filesystem::path> PruneOld(const std::filesystem::path& dir, int keep) {
  if (keep < 1) {
    throw CheckpointError(dir, "PruneOld: keep is " + std::to_string(keep) +
                                   "; expected at least 1 (never remove every checkpoint)");
  }
  std::vector<std::filesystem::path> removed;
  if (!DirectoryExists(dir)) return removed;
  checkpoint::CheckPrivateDirectory(dir);

  std::vector<std::filesystem::path> doomed;
  ForEachName(dir, [&](const std::string& name) {
    if (checkpoint::IsTempFileName(name)) doomed.push_back(dir / name);
  });
  int valid = 0;
  for (const CheckpointFile& file : ListCheckpoints(dir)) {
    if (valid >= keep) {
      doomed.push_back(file.path);
      continue;
    }
    try {
      CheckpointReader::Validate(file.path);
      ++valid;
    } catch (const CheckpointError&) {
      // Corrupt but newer than the kept ones: leave it; readers skip it with a warning.
    }
  }
  for (const std::filesystem::path& path : doomed) {
    checkpoint::RemoveFile(path);
    removed.push_back(path);
  }
  return removed;
}

}  // namespace elastic::agent
