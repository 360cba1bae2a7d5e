// The gpt model's config and corpus rules, torch-free: data.path defaults to the fortunes-min
// directory, a missing corpus file or an image augmentation is refused with what to do, and the
// window count of a corpus.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/common/errors.h"
#include "agent/config/job_config.h"
#include "agent/data/dataset_checks.h"
#include "agent/data/text_corpus.h"
#include "agent/model/registry.h"
#include "common/toml_reader.h"
#include "tests/common/temp_dir.h"

namespace elastic::agent {
namespace {

JobConfig Parse(const std::string& text, const std::string& base_dir) {
  TomlReader reader = TomlReader::FromString(text, "job.toml");
  return ParseJobConfig(
      reader, [](std::string_view) -> std::optional<std::string> { return std::nullopt; },
      base_dir, CheckTrainingData);
}

std::string ErrorOf(const std::string& text, const std::string& base_dir) {
  try {
    Parse(text, base_dir);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

class GptConfigTest : public ::testing::Test {
 protected:
  GptConfigTest() {
    for (std::string_view name : kCorpusFiles) dir_.Write("corpus/" + std::string(name), "text\n");
  }
  std::string Base() const { return dir_.path().string(); }
  elastic::testing::TempDir dir_;
};

TEST_F(GptConfigTest, TheModelPicksItsDataset) {
  EXPECT_EQ(DatasetOf("fmnist_cnn"), DatasetKind::kFashionMnist);
  EXPECT_EQ(DatasetOf("gpt"), DatasetKind::kTextCorpus);
  EXPECT_THROW(DatasetOf("resnet"), TrainingError);
  JobConfig c = Parse("[model]\nname = \"gpt\"\n[data]\npath = \"corpus\"\n", Base());
  EXPECT_EQ(c.model.name, "gpt");
  EXPECT_EQ(c.data.path, (dir_.path() / "corpus").string());
}

TEST_F(GptConfigTest, DataPathDefaultsToTheFortunesMinDirectory) {
  if (MissingCorpusFile(std::string(kDefaultCorpusPath))) {
    // Without the package the default is refused, naming it.
    EXPECT_NE(ErrorOf("[model]\nname = \"gpt\"\n", Base()).find("fortunes-min"),
              std::string::npos);
    GTEST_SKIP() << kDefaultCorpusPath << " missing (install fortunes-min)";
  }
  EXPECT_EQ(Parse("[model]\nname = \"gpt\"\n", Base()).data.path, kDefaultCorpusPath);
}

TEST_F(GptConfigTest, AMissingCorpusOrAnImageAugmentationIsRefused) {
  EXPECT_EQ(ErrorOf("[model]\nname = \"gpt\"\n[data]\npath = \"/nonexistent/corpus\"\n", Base()),
            "job.toml:4: data.path: \"/nonexistent/corpus\" is not a directory: expected the "
            "fortune files of model \"gpt\"'s text corpus (install the Debian package "
            "fortunes-min: /usr/share/games/fortunes)");
  std::filesystem::remove(dir_.path() / "corpus" / "riddles");
  EXPECT_EQ(ErrorOf("[model]\nname = \"gpt\"\n[data]\npath = \"corpus\"\n", Base()),
            "job.toml:4: data.path: \"" + (dir_.path() / "corpus").string() +
                "\" has no file \"riddles\": expected the fortunes-min corpus (install the "
                "Debian package fortunes-min)");
  EXPECT_THROW(ReadTextCorpus((dir_.path() / "corpus").string()), DataError);
  dir_.Write("corpus/riddles", "more\n");
  EXPECT_EQ(ReadTextCorpus((dir_.path() / "corpus").string()), "text\ntext\nmore\n");
  EXPECT_EQ(
      ErrorOf("[model]\nname = \"gpt\"\n[data]\npath = \"corpus\"\naugment = \"flip\"\n", Base()),
      "job.toml:5: data.augment: \"flip\" mirrors images: model \"gpt\" reads text; expected "
      "\"none\"");
}

TEST(TextWindowCount, EveryWindowWithItsTargetInsideTheCorpus) {
  EXPECT_EQ(TextWindowCount(0), 0);
  EXPECT_EQ(TextWindowCount(kTextWindow), 0);
  EXPECT_EQ(TextWindowCount(kTextWindow + 1), 1);
  EXPECT_EQ(TextWindowCount(kTextWindow + kTextWindowStride), 1);
  EXPECT_EQ(TextWindowCount(kTextWindow + kTextWindowStride + 1), 2);
  EXPECT_EQ(TextWindowCount(98399), 12296);  // fortunes-min 1:1.99.1-7.3: 98,399 bytes
}

}  // namespace
}  // namespace elastic::agent
