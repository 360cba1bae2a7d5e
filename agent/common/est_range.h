// A contiguous block of EST ids, [begin, end): the ESTs one rank hosts (train/est_placement.h
// decides which), and what its data loaders (data/batch_queue.h) and gradient stash serve.
// Torch-free, header-only.
#pragma once

#include <cstdint>
#include <string>

namespace elastic::agent {

struct EstRange {
  std::int64_t begin = 0;  // first hosted EST id
  std::int64_t end = 0;    // one past the last
  std::int64_t size() const { return end - begin; }
  bool operator==(const EstRange&) const = default;
};

// "[begin,end)", as logged.
inline std::string ToString(const EstRange& range) {
  return "[" + std::to_string(range.begin) + "," + std::to_string(range.end) + ")";
}

}  // namespace elastic::agent
