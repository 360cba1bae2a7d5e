// A user's dataset as torch.save shards (data.format = "tensors"): each file holds
// {"inputs": Tensor[N, ...], "targets": int64 Tensor[N] or [N, T]}, written in Python by
// torch.save(dict, FILE). Samples are numbered through the files in name order (shard_files.h).
// Includes LibTorch.
//
// Opening a split loads every file once, in order, to check it (before anything trains) and to
// count its samples; after that, shards load on demand behind a cache bounded by data.cache_mb,
// least recently used out, at least one shard held, so a dataset larger than a rank's memory
// still trains. Which samples a batch holds never depends on the cache: only how often a file
// is read again.
// Thread-safe: the rank's loader threads gather concurrently.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace elastic::agent {

// What every sample of every shard looks like.
struct SampleLayout {
  std::vector<std::int64_t> input_shape;   // one sample's, without N
  torch::ScalarType input_dtype = torch::kFloat32;
  std::vector<std::int64_t> target_shape;  // {} (a class per sample) or {T} (a token model)
};

class TensorShards {
 public:
  // Opens the `prefix` shards ("train" or "test") of `dir`. Throws DataError naming the
  // directory (no such shards, unreadable) or the file and the problem: not a torch.save file,
  // not a dict, a missing key, a value that is not a tensor, N of inputs and targets differing,
  // targets not int64 or not [N] / [N, T], negative targets, no samples, or a layout that
  // differs from the first shard's.
  TensorShards(const std::string& dir, const std::string& prefix, std::int64_t cache_bytes);

  std::int64_t size() const { return first_.back(); }
  const SampleLayout& layout() const { return layout_; }
  const std::vector<std::string>& files() const { return files_; }

  // The samples `indices` (numbers in [0, size())), in that order: inputs [n, ...] and targets
  // [n] or [n, T], contiguous copies. REQUIRES: every index in range.
  std::pair<torch::Tensor, torch::Tensor> Gather(std::span<const std::int64_t> indices) const;

  // Shard `file`'s inputs and targets (from the cache or the file). REQUIRES: file < files().size().
  std::pair<torch::Tensor, torch::Tensor> Shard(std::size_t file) const;

  // How many times a shard was read from its file, the opening pass included (tests).
  std::int64_t file_reads() const;

 private:
  struct Loaded {
    torch::Tensor inputs;
    torch::Tensor targets;
    std::int64_t bytes = 0;
  };
  std::shared_ptr<const Loaded> Get(std::size_t file) const;
  void Insert(std::size_t file, std::shared_ptr<const Loaded> shard) const;  // mutex_ held

  std::string dir_;
  std::vector<std::string> files_;
  std::vector<std::int64_t> first_;  // first sample of each file, then the total
  SampleLayout layout_;
  std::int64_t cache_bytes_;

  mutable std::mutex mutex_;
  mutable std::list<std::pair<std::size_t, std::shared_ptr<const Loaded>>> cache_;  // newest first
  mutable std::int64_t cached_bytes_ = 0;
  mutable std::int64_t file_reads_ = 0;
};

}  // namespace elastic::agent
