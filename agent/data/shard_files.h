// The shard files of data.format = "tensors": which files of data.path train and which evaluate.
// Torch-free, so the job config's data check can list them without LibTorch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace elastic::agent {

// The regular files of `dir` whose names start with `prefix` ("train" or "test") and end in
// ".pt", as absolute paths in byte-wise name order (the order their samples are numbered in).
// Empty when there are none or `dir` cannot be read.
std::vector<std::string> ShardFiles(const std::string& dir, std::string_view prefix);

}  // namespace elastic::agent
