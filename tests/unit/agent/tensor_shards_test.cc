// Tests for a user's torch.save shards (data.format = "tensors"): sample numbering across files,
// gathers in index order whatever the cache bound, the bounded cache, and every malformed shard
// refused with the file and the problem. Shards are written with torch::pickle_save, the format
// of Python's torch.save (the Python-made ones run in tests/integration/user_model_test.cc).
#include "agent/data/tensor_shards.h"

#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "agent/common/errors.h"
#include "agent/data/dataset.h"
#include "agent/data/shard_files.h"
#include "tests/common/temp_dir.h"

namespace elastic::agent {
namespace {

void WriteShard(const testing::TempDir& dir, const std::string& name, const c10::IValue& value) {
  const std::vector<char> bytes = torch::pickle_save(value);
  dir.Write(name, std::string(bytes.data(), bytes.size()));
}

c10::IValue Shard(const torch::Tensor& inputs, const torch::Tensor& targets) {
  c10::Dict<std::string, torch::Tensor> dict;
  dict.insert("inputs", inputs);
  dict.insert("targets", targets);
  return dict;
}

// Samples numbered `first` onwards: input row i is filled with i, its target is i % 7.
c10::IValue Numbered(std::int64_t first, std::int64_t count) {
  torch::Tensor ids = torch::arange(first, first + count, torch::kInt64);
  return Shard(ids.to(torch::kFloat32).view({count, 1, 1}).expand({count, 2, 3}).contiguous(),
               ids.remainder(7));
}

std::string ErrorOf(const std::string& dir) {
  try {
    TensorShards shards(dir, "train", 1 << 20);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ShardFiles, TrainAndTestFilesInNameOrder) {
  testing::TempDir dir;
  for (const char* name : {"train-10.pt", "train-02.pt", "test-0.pt", "train.txt", "xtrain.pt"}) {
    dir.Write(name, "");
  }
  const std::vector<std::string> train = ShardFiles(dir.path().string(), "train");
  ASSERT_EQ(train.size(), 2u);
  EXPECT_EQ(train[0], (dir.path() / "train-02.pt").string());
  EXPECT_EQ(train[1], (dir.path() / "train-10.pt").string());
  EXPECT_EQ(ShardFiles(dir.path().string(), "test").size(), 1u);
  EXPECT_TRUE(ShardFiles((dir.path() / "missing").string(), "train").empty());
}

TEST(TensorShards, NumbersSamplesThroughTheFilesAndGathersInIndexOrder) {
  testing::TempDir dir;
  WriteShard(dir, "train-0.pt", Numbered(0, 5));
  WriteShard(dir, "train-1.pt", Numbered(5, 3));
  WriteShard(dir, "train-2.pt", Numbered(8, 4));
  // A bound below one shard: every gather reads files again; the samples are the same.
  for (std::int64_t cache : {std::int64_t{1} << 20, std::int64_t{1}}) {
    TensorShards shards(dir.path().string(), "train", cache);
    ASSERT_EQ(shards.size(), 12);
    EXPECT_EQ(shards.layout().input_shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_TRUE(shards.layout().target_shape.empty());
    const std::vector<std::int64_t> indices{11, 0, 5, 4, 8, 5};
    auto [inputs, targets] = shards.Gather(indices);
    ASSERT_EQ(inputs.sizes(), (std::vector<std::int64_t>{6, 2, 3}));
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const auto row = static_cast<std::int64_t>(i);
      EXPECT_EQ(inputs[row][1][2].item<float>(), static_cast<float>(indices[i]));
      EXPECT_EQ(targets[row].item<std::int64_t>(), indices[i] % 7);
    }
  }
}

TEST(TensorShards, TheCacheIsBoundedAndReadsAgainOnlyWhatItDropped) {
  testing::TempDir dir;
  WriteShard(dir, "train-0.pt", Numbered(0, 100));
  WriteShard(dir, "train-1.pt", Numbered(100, 100));
  const std::int64_t shard_bytes = 100 * 6 * 4 + 100 * 8;
  // Room for both: after the opening pass nothing is read again.
  TensorShards roomy(dir.path().string(), "train", 2 * shard_bytes);
  const std::vector<std::int64_t> both{3, 150, 7, 199};
  roomy.Gather(both);
  EXPECT_EQ(roomy.file_reads(), 2);
  // Room for one: each file a gather needs is read again unless it was the last one read, and
  // nothing else changes.
  TensorShards tight(dir.path().string(), "train", shard_bytes);
  auto [inputs, targets] = tight.Gather(both);
  EXPECT_EQ(tight.file_reads(), 2 + 2);  // shard 0 read again (evicting 1), then shard 1
  tight.Gather(std::vector<std::int64_t>{150});
  EXPECT_EQ(tight.file_reads(), 4);  // shard 1 is the one held
  tight.Gather(std::vector<std::int64_t>{0});
  EXPECT_EQ(tight.file_reads(), 5);
  EXPECT_TRUE(torch::equal(inputs, roomy.Gather(both).first));
}

TEST(TensorShards, TokenTargetsAndGatherSamplesOfADataset) {
  testing::TempDir dir;
  WriteShard(dir, "train-0.pt",
             Shard(torch::arange(24, torch::kInt64).view({4, 6}),
                   torch::arange(24, torch::kInt64).view({4, 6}).add(1)));
  Dataset data = OpenTensorShards(dir.path().string(), "train", 1);
  ASSERT_EQ(data.size(), 4);
  EXPECT_EQ(data.shards->layout().target_shape, (std::vector<std::int64_t>{6}));
  auto [inputs, targets] = GatherSamples(data, std::vector<std::int64_t>{2});
  EXPECT_EQ(inputs[0][0].item<std::int64_t>(), 12);
  EXPECT_EQ(targets[0][5].item<std::int64_t>(), 18);
  EXPECT_TRUE(torch::equal(LeadingInputs(data, 2), torch::arange(12).view({2, 6})));
}

TEST(TensorShards, MalformedShardsNameTheFileAndTheProblem) {
  struct Case {
    std::string name;
    std::function<void(const testing::TempDir&)> write;
    std::string expected;
  };
  const auto f32 = torch::zeros({4, 3});
  const auto i64 = torch::zeros({4}, torch::kInt64);
  const std::vector<Case> cases{
      {"not torch.save", [](auto& d) { d.Write("train-0.pt", "not a zip"); },
       "not a file written by torch.save"},
      {"not a dict", [&](auto& d) { WriteShard(d, "train-0.pt", f32); },
       "holds a Tensor: expected torch.save({\"inputs\": ..., \"targets\": ...}, FILE)"},
      {"missing key",
       [&](auto& d) {
         c10::Dict<std::string, torch::Tensor> dict;
         dict.insert("inputs", f32);
         WriteShard(d, "train-0.pt", dict);
       },
       "no key \"targets\""},
      {"mismatched N",
       [&](auto& d) { WriteShard(d, "train-0.pt", Shard(f32, torch::zeros({3}, torch::kInt64))); },
       "inputs [4, 3] and targets [3]: expected the same number of samples N"},
      {"float targets", [&](auto& d) { WriteShard(d, "train-0.pt", Shard(f32, torch::zeros({4}))); },
       "targets are Float [4]: expected int64 [N] (classes) or [N, T] (tokens)"},
      {"negative targets",
       [&](auto& d) { WriteShard(d, "train-0.pt", Shard(f32, i64.sub(1))); }, "negative targets"},
      {"layouts differ",
       [&](auto& d) {
         WriteShard(d, "train-0.pt", Shard(f32, i64));
         WriteShard(d, "train-1.pt", Shard(torch::zeros({4, 5}), i64));
       },
       "train-1.pt: inputs Float [N, 5], targets [N]: expected inputs Float [N, 3], targets [N]"},
      {"empty directory", [](auto&) {}, ": no train*.pt shards"},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    c.write(dir);
    const std::string error = ErrorOf(dir.path().string());
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.name << ": " << error;
    EXPECT_NE(error.find(dir.path().string()), std::string::npos) << c.name << ": " << error;
  }
}

}  // namespace
}  // namespace elastic::agent
