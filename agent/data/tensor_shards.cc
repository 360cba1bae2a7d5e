// TensorShards: torch.save files checked, counted, cached and gathered from.
#include "agent/data/tensor_shards.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "agent/common/errors.h"
#include "agent/common/shape_text.h"
#include "agent/data/shard_files.h"

namespace elastic::agent {
namespace {

constexpr const char* kExpectedDict = "expected a dict with \"inputs\" and \"targets\" tensors";

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) throw DataError(path + ": cannot be opened");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DataError(path + ": cannot be read");
  return bytes;
}

torch::Tensor Entry(const c10::impl::GenericDict& dict, const std::string& key,
                    const std::string& path) {
  const auto found = dict.find(c10::IValue(key));
  if (found == dict.end()) {
    throw DataError(path + ": no key \"" + key + "\": " + kExpectedDict);
  }
  if (!found->value().isTensor()) {
    throw DataError(path + ": \"" + key + "\" is a " + found->value().tagKind() +
                    ": expected a tensor");
  }
  return found->value().toTensor().contiguous();
}

// One file's tensors, checked on their own (the layout across files is checked by the caller).
std::pair<torch::Tensor, torch::Tensor> ReadShard(const std::string& path) {
  c10::IValue value;
  try {
    value = torch::pickle_load(ReadBytes(path));
  } catch (const c10::Error& e) {
    const std::string what = e.what();
    // Python pickles a one-entry dict with SETITEM, which LibTorch 1.13's unpickler lacks (two
    // or more entries use SETITEMS): such a file holds one of the two tensors at most.
    if (what.find("Unknown opcode for unpickling at 0x73") != std::string::npos) {
      throw DataError(path + ": a dict with one entry: " + kExpectedDict);
    }
    throw DataError(path + ": not a file written by torch.save (" +
                    what.substr(0, what.find('\n')) + ")");
  }
  if (!value.isGenericDict()) {
    throw DataError(path + ": holds a " + value.tagKind() +
                    ": expected torch.save({\"inputs\": ..., \"targets\": ...}, FILE)");
  }
  const c10::impl::GenericDict dict = value.toGenericDict();
  torch::Tensor inputs = Entry(dict, "inputs", path);
  torch::Tensor targets = Entry(dict, "targets", path);
  if (inputs.dim() < 1 || targets.dim() < 1 || inputs.size(0) != targets.size(0)) {
    throw DataError(path + ": inputs " + ShapeText(inputs.sizes()) + " and targets " +
                    ShapeText(targets.sizes()) + ": expected the same number of samples N");
  }
  if (targets.scalar_type() != torch::kInt64 || targets.dim() > 2) {
    throw DataError(path + ": targets are " + std::string(c10::toString(targets.scalar_type())) +
                    " " + ShapeText(targets.sizes()) +
                    ": expected int64 [N] (classes) or [N, T] (tokens)");
  }
  if (inputs.size(0) == 0) throw DataError(path + ": no samples (N = 0)");
  if (targets.min().item<std::int64_t>() < 0) {
    throw DataError(path + ": negative targets: expected class numbers from 0");
  }
  return {inputs.to(torch::kCPU), targets.to(torch::kCPU)};
}

SampleLayout LayoutOf(const torch::Tensor& inputs, const torch::Tensor& targets) {
  SampleLayout layout;
  layout.input_shape.assign(inputs.sizes().begin() + 1, inputs.sizes().end());
  layout.input_dtype = inputs.scalar_type();
  layout.target_shape.assign(targets.sizes().begin() + 1, targets.sizes().end());
  return layout;
}

std::string Describe(const SampleLayout& layout) {
  return "inputs " + std::string(c10::toString(layout.input_dtype)) + " [N" +
         (layout.input_shape.empty() ? "" : ", ") + ShapeText(layout.input_shape).substr(1) +
         ", targets [N" + (layout.target_shape.empty() ? "" : ", ") +
         ShapeText(layout.target_shape).substr(1);
}

bool SameLayout(const SampleLayout& a, const SampleLayout& b) {
  return a.input_shape == b.input_shape && a.input_dtype == b.input_dtype &&
         a.target_shape == b.target_shape;
}

}  // namespace

TensorShards::TensorShards(const std::string& dir, const std::string& prefix,
                           std::int64_t cache_bytes)
    : dir_(dir), files_(ShardFiles(dir, prefix)), cache_bytes_(cache_bytes) {
  if (files_.empty()) {
    throw DataError(dir + ": no " + prefix + "*.pt shards (or the directory cannot be read)" +
                    ": expected files written by torch.save({\"inputs\": ..., \"targets\": ...}, "
                    "FILE)");
  }
  first_.push_back(0);
  for (std::size_t file = 0; file < files_.size(); ++file) {
    auto [inputs, targets] = ReadShard(files_[file]);
    const SampleLayout layout = LayoutOf(inputs, targets);
    if (file == 0) layout_ = layout;
    if (!SameLayout(layout, layout_)) {
      throw DataError(files_[file] + ": " + Describe(layout) + ": expected " + Describe(layout_) +
                      " as in " + files_[0]);
    }
    first_.push_back(first_.back() + inputs.size(0));
    const std::int64_t bytes = static_cast<std::int64_t>(inputs.nbytes() + targets.nbytes());
    std::lock_guard<std::mutex> lock(mutex_);
    ++file_reads_;
    Insert(file, std::make_shared<const Loaded>(Loaded{inputs, targets, bytes}));
  }
}

void TensorShards::Insert(std::size_t file, std::shared_ptr<const Loaded> shard) const {
  while (!cache_.empty() && cached_bytes_ + shard->bytes > cache_bytes_) {
    cached_bytes_ -= cache_.back().second->bytes;
    cache_.pop_back();
  }
  cached_bytes_ += shard->bytes;
  cache_.emplace_front(file, std::move(shard));
}

std::shared_ptr<const TensorShards::Loaded> TensorShards::Get(std::size_t file) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first != file) continue;
    cache_.splice(cache_.begin(), cache_, it);
    return cache_.front().second;
  }
  // Read under the lock: two loaders needing the same shard read it once, and the cache never
  // holds more than its bound plus the one shard being read.
  auto [inputs, targets] = ReadShard(files_[file]);
  if (!SameLayout(LayoutOf(inputs, targets), layout_) ||
      inputs.size(0) != first_[file + 1] - first_[file]) {
    throw DataError(files_[file] + ": changed since the job started (its samples differ)");
  }
  const std::int64_t bytes = static_cast<std::int64_t>(inputs.nbytes() + targets.nbytes());
  ++file_reads_;
  Insert(file, std::make_shared<const Loaded>(Loaded{inputs, targets, bytes}));
  return cache_.front().second;
}

std::pair<torch::Tensor, torch::Tensor> TensorShards::Shard(std::size_t file) const {
  std::shared_ptr<const Loaded> shard = Get(file);
  return {shard->inputs, shard->targets};
}

std::int64_t TensorShards::file_reads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return file_reads_;
}

std::pair<torch::Tensor, torch::Tensor> TensorShards::Gather(
    std::span<const std::int64_t> indices) const {
  torch::NoGradGuard no_grad;
  const auto n = static_cast<std::int64_t>(indices.size());
  std::vector<std::int64_t> input_shape{n}, target_shape{n};
  input_shape.insert(input_shape.end(), layout_.input_shape.begin(), layout_.input_shape.end());
  target_shape.insert(target_shape.end(), layout_.target_shape.begin(),
                      layout_.target_shape.end());
  torch::Tensor inputs = torch::empty(input_shape, torch::TensorOptions(layout_.input_dtype));
  torch::Tensor targets = torch::empty(target_shape, torch::kInt64);
  // Per file: the batch positions its samples go to and their rows in it.
  std::vector<std::vector<std::int64_t>> positions(files_.size()), rows(files_.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t sample = indices[static_cast<std::size_t>(i)];
    const auto file = static_cast<std::size_t>(
        std::upper_bound(first_.begin(), first_.end(), sample) - first_.begin() - 1);
    positions[file].push_back(i);
    rows[file].push_back(sample - first_[file]);
  }
  for (std::size_t file = 0; file < files_.size(); ++file) {
    if (rows[file].empty()) continue;
    std::shared_ptr<const Loaded> shard = Get(file);
    const torch::Tensor row = torch::tensor(rows[file], torch::kInt64);
    const torch::Tensor at = torch::tensor(positions[file], torch::kInt64);
    inputs.index_copy_(0, at, shard->inputs.index_select(0, row));
    targets.index_copy_(0, at, shard->targets.index_select(0, row));
  }
  return {inputs, targets};
}

}  // namespace elastic::agent
