// ShardFiles: a directory listing, filtered and sorted.
#include "agent/data/shard_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace elastic::agent {

std::vector<std::string> ShardFiles(const std::string& dir, std::string_view prefix) {
  std::vector<std::string> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".pt") || name.size() < prefix.size() + 3) {
      continue;
    }
    std::error_code kind_error;
    if (!it->is_regular_file(kind_error)) continue;
    files.push_back(std::filesystem::absolute(it->path()).lexically_normal().string());
  }
  // Directory order is the file system's: sort, so every rank numbers the samples alike.
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace elastic::agent
