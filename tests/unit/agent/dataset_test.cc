// Tests for loading Fashion-MNIST into tensors: shapes, normalisation, cross-file checks, and the
// real dataset when the Debian package is installed.
#include "agent/data/dataset.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "agent/common/errors.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/agent/idx_fixture.h"

namespace elastic::agent {
namespace {

using testing::IdxBytes;
using testing::WriteFile;

constexpr const char* kInstalledDataset = "/usr/share/datasets/fashion-mnist";

std::string ErrorOf(const std::string& dir) {
  try {
    LoadFashionMnist(dir, Split::kTrain);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LoadFashionMnist, ShapesLabelsAndNormalisation) {
  for (bool gzip : {true, false}) {
    elastic::testing::TempDir dir;
    testing::WriteTrainSplit(dir.path(), 12, gzip);
    Dataset data = LoadFashionMnist(dir.path().string(), Split::kTrain);
    EXPECT_EQ(data.size(), 12);
    EXPECT_EQ(data.images.sizes(), (std::vector<std::int64_t>{12, 1, 28, 28}));
    EXPECT_EQ(data.images.dtype(), torch::kFloat32);
    EXPECT_EQ(data.labels.dtype(), torch::kInt64);
    EXPECT_EQ(data.labels[11].item<std::int64_t>(), 1);
    // Image 5 has every pixel 5: (5/255 - mean) / std.
    float expected = static_cast<float>((5.0 / 255.0 - 0.2860) / 0.3530);
    EXPECT_NEAR(data.images[5][0][27][3].item<float>(), expected, 1e-6);
    EXPECT_TRUE(data.images.is_contiguous());
  }
}

TEST(LoadFashionMnist, RejectsInconsistentFiles) {
  elastic::testing::TempDir dir;
  EXPECT_EQ(
      ErrorOf(dir.path().string()),
      dir.path().string() + ": no file train-images-idx3-ubyte[.gz] (Fashion-MNIST IDX files)");

  testing::WriteTrainSplit(dir.path(), 3, true);
  auto labels = dir.path() / "train-labels-idx1-ubyte.gz";
  WriteFile(labels, IdxBytes({2}, {1, 2}), true);
  EXPECT_EQ(ErrorOf(dir.path().string()), labels.string() + ": 2 labels for 3 images in " +
                                              (dir.path() / "train-images-idx3-ubyte.gz").string());

  WriteFile(labels, IdxBytes({3}, {1, 10, 2}), true);
  EXPECT_EQ(ErrorOf(dir.path().string()),
            labels.string() + ": label 10 at index 1: expected 0 to 9");

  auto images = dir.path() / "train-images-idx3-ubyte.gz";
  WriteFile(images, IdxBytes({3, 32, 32}, std::vector<std::uint8_t>(3 * 32 * 32)), true);
  EXPECT_EQ(ErrorOf(dir.path().string()), images.string() + ": images are 32x32: expected 28x28");
}

TEST(LoadFashionMnist, InstalledDatasetIsComplete) {
  if (!std::filesystem::is_directory(kInstalledDataset)) {
    GTEST_SKIP() << kInstalledDataset << " missing (install dataset-fashion-mnist)";
  }
  Dataset train = LoadFashionMnist(kInstalledDataset, Split::kTrain);
  EXPECT_EQ(train.size(), 60000);
  // Fashion-MNIST is balanced: 6,000 training images per class.
  EXPECT_TRUE(torch::equal(torch::bincount(train.labels), torch::full({10}, 6000, torch::kInt64)));
  Dataset test = LoadFashionMnist(kInstalledDataset, Split::kTest);
  EXPECT_EQ(test.size(), 10000);
  // Normalisation constants are the training set's statistics.
  EXPECT_NEAR(train.images.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(train.images.std().item<double>(), 1.0, 0.01);
}

}  // namespace
}  // namespace elastic::agent
