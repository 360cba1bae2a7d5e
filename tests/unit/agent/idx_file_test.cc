// Tests for the IDX reader and the dataset file names: good files (gzip and plain), bad magic,
// truncation, trailing bytes, missing files; every error names the file.
#include "agent/data/idx_file.h"

#include <gtest/gtest.h>

#include "agent/common/errors.h"
#include "agent/data/fashion_mnist_files.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/agent/idx_fixture.h"

namespace elastic::agent {
namespace {

using testing::IdxBytes;
using testing::WriteFile;

std::string ErrorOf(const std::string& path, std::size_t rank) {
  try {
    ReadIdxFile(path, rank);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

class IdxFileTest : public ::testing::TestWithParam<bool> {  // param: gzip
 protected:
  std::string Write(const std::string& bytes) {
    auto path = dir_.path() / (GetParam() ? "f.gz" : "f");
    WriteFile(path, bytes, GetParam());
    return path.string();
  }
  elastic::testing::TempDir dir_;
};

TEST_P(IdxFileTest, ReadsImagesAndLabels) {
  std::vector<std::uint8_t> pixels(2 * 3 * 4);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 7);
  IdxArray images = ReadIdxFile(Write(IdxBytes({2, 3, 4}, pixels)), 3);
  EXPECT_EQ(images.dims, (std::vector<std::uint32_t>{2, 3, 4}));
  EXPECT_EQ(images.data, pixels);

  IdxArray labels = ReadIdxFile(Write(IdxBytes({5}, {9, 0, 3, 3, 1})), 1);
  EXPECT_EQ(labels.dims, (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(labels.data, (std::vector<std::uint8_t>{9, 0, 3, 3, 1}));
}

TEST_P(IdxFileTest, RejectsBadMagic) {
  std::string labels_as_images = Write(IdxBytes({5}, {1, 2, 3, 4, 5}));
  EXPECT_EQ(ErrorOf(labels_as_images, 3), labels_as_images +
                                              ": bad IDX magic 0x00000801: expected 0x00000803 "
                                              "(unsigned bytes, 3 dimensions)");
  std::string floats = IdxBytes({1}, {0, 0, 0, 0});
  floats[2] = 0x0d;
  EXPECT_NE(ErrorOf(Write(floats), 1).find("bad IDX magic 0x00000d01"), std::string::npos);
}

TEST_P(IdxFileTest, RejectsTruncatedFiles) {
  std::string path = Write(std::string("\0\0", 2));
  EXPECT_EQ(ErrorOf(path, 1), path + ": truncated: file shorter than the 4-byte IDX magic");

  std::string header_only = IdxBytes({10, 28, 28}, {}).substr(0, 10);
  EXPECT_NE(ErrorOf(Write(header_only), 3).find("truncated: header ends inside"),
            std::string::npos);

  path = Write(IdxBytes({4}, {1, 2, 3}));
  EXPECT_EQ(ErrorOf(path, 1), path + ": truncated: header promises 4 data bytes, file has 3");
}

TEST_P(IdxFileTest, RejectsTrailingBytesAndZeroDimensions) {
  std::string path = Write(IdxBytes({2}, {1, 2, 3}));
  EXPECT_NE(ErrorOf(path, 1).find("trailing bytes after the 2 data bytes"), std::string::npos);
  path = Write(IdxBytes({0}, {}));
  EXPECT_EQ(ErrorOf(path, 1), path + ": dimension 0 is 0: expected a size >= 1");
}

INSTANTIATE_TEST_SUITE_P(GzipAndPlain, IdxFileTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Gzip" : "Plain"; });

TEST(IdxFile, MissingFileIsNamed) {
  EXPECT_EQ(ErrorOf("/nonexistent/x.gz", 1),
            "/nonexistent/x.gz: cannot open: No such file or directory");
}

TEST(IdxFile, CorruptGzipIsAReadError) {
  elastic::testing::TempDir dir;
  // A gzip header followed by garbage: zlib must report it rather than return short data.
  std::string bytes = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-garbage-garbage";
  std::string path = dir.Write("bad.gz", bytes).string();
  std::string error = ErrorOf(path, 1);
  EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
}

TEST(IdxFile, CutGzipIsTruncated) {
  elastic::testing::TempDir dir;
  auto path = dir.path() / "cut.gz";
  std::vector<std::uint8_t> pixels(50 * 28 * 28);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 31);
  WriteFile(path, IdxBytes({50, 28, 28}, pixels), true);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  std::string error = ErrorOf(path.string(), 3);
  EXPECT_EQ(error.rfind(path.string() + ": truncated: header promises 39200 data bytes", 0), 0u)
      << error;
}

TEST(FashionMnistFiles, FindsGzipOrPlainAndPrefersGzip) {
  elastic::testing::TempDir dir;
  std::string missing;
  EXPECT_FALSE(FindSplitFiles(dir.path().string(), Split::kTrain, &missing));
  EXPECT_EQ(missing, "train-images-idx3-ubyte[.gz]");

  dir.Write("train-images-idx3-ubyte", "");
  dir.Write("train-images-idx3-ubyte.gz", "");
  EXPECT_FALSE(FindSplitFiles(dir.path().string(), Split::kTrain, &missing));
  EXPECT_EQ(missing, "train-labels-idx1-ubyte[.gz]");

  dir.Write("train-labels-idx1-ubyte", "");
  auto files = FindSplitFiles(dir.path().string(), Split::kTrain, nullptr);
  ASSERT_TRUE(files);
  EXPECT_EQ(files->images, (dir.path() / "train-images-idx3-ubyte.gz").string());
  EXPECT_EQ(files->labels, (dir.path() / "train-labels-idx1-ubyte").string());
  EXPECT_FALSE(FindSplitFiles(dir.path().string(), Split::kTest, nullptr));
}

}  // namespace
}  // namespace elastic::agent
