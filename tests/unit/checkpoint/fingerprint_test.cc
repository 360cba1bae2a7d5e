// Fingerprints: validation, the mismatch message of a refused resume, the meta record coding.
#include "agent/checkpoint/fingerprint.h"

#include <gtest/gtest.h>

#include <string>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/checkpoint/meta_record.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace elastic::agent {
namespace {

using testing_util::SampleFingerprint;

Fingerprint Make(std::initializer_list<std::pair<const char*, const char*>> entries) {
  Fingerprint fingerprint;
  for (const auto& [key, value] : entries) fingerprint.Add(key, value);
  return fingerprint;
}

TEST(FingerprintTest, EqualFingerprintsHaveNoMismatch) {
  EXPECT_EQ(DescribeMismatch(SampleFingerprint(), SampleFingerprint()), "");
  EXPECT_EQ(DescribeMismatch(Fingerprint(), Fingerprint()), "");
}

TEST(FingerprintTest, MismatchListsEveryDifferingKeyInSavedOrder) {
  Fingerprint saved = Make({{"model", "fmnist_cnn"}, {"ests", "8"}, {"seed", "1"}});
  Fingerprint current = Make({{"seed", "2"}, {"model", "fmnist_cnn"}, {"ests", "4"}});
  EXPECT_EQ(DescribeMismatch(saved, current),
            "checkpoint was written for ests=8 seed=1, this run has ests=4 seed=2");
}

TEST(FingerprintTest, KeysOnOneSideOnlyShowUnsetAndSpacedValuesAreQuoted) {
  Fingerprint saved = Make({{"model", "fmnist_cnn"}, {"shape", "[32, 1]"}});
  Fingerprint current = Make({{"model", "resnet18"}, {"plan", "dp"}, {"shape", "[32, 1]"}});
  EXPECT_EQ(DescribeMismatch(saved, current),
            "checkpoint was written for model=fmnist_cnn plan=<unset>, this run has "
            "model=resnet18 plan=dp");
  EXPECT_EQ(DescribeMismatch(Make({{"shape", "[32, 1]"}}), Make({{"shape", ""}})),
            "checkpoint was written for shape=\"[32, 1]\", this run has shape=\"\"");
}

TEST(FingerprintTest, MalformedOrRepeatedKeysAreRefused) {
  Fingerprint fingerprint;
  fingerprint.Add("ests", "8");
  EXPECT_THROW(fingerprint.Add("ests", "4"), CheckpointError);
  EXPECT_THROW(fingerprint.Add("", "x"), CheckpointError);
  EXPECT_THROW(fingerprint.Add("a=b", "x"), CheckpointError);
  EXPECT_THROW(fingerprint.Add("a b", "x"), CheckpointError);
  EXPECT_THROW(fingerprint.Add(std::string(256, 'k'), "x"), CheckpointError);
  EXPECT_THROW(fingerprint.Add("note", "two\nlines"), CheckpointError);
  EXPECT_NO_THROW(fingerprint.Add("note", "a = b, with spaces"));
  EXPECT_EQ(fingerprint.entries().size(), 2u);
  EXPECT_EQ(fingerprint.Find("note"), "a = b, with spaces");
  EXPECT_FALSE(fingerprint.Find("seed").has_value());
}

TEST(MetaRecordTest, RoundTripsAndIgnoresKeysFromLaterWriters) {
  checkpoint::Meta meta{123, Make({{"model", "fmnist_cnn"}, {"step", "not the step"}})};
  std::string text = checkpoint::EncodeMeta(meta);
  EXPECT_EQ(text, "step=123\nfingerprint.model=fmnist_cnn\nfingerprint.step=not the step\n");
  checkpoint::Meta decoded = checkpoint::DecodeMeta(text + "written_by=elastic-agent 0.2\n");
  EXPECT_EQ(decoded.step, 123u);
  EXPECT_EQ(decoded.fingerprint, meta.fingerprint);
}

TEST(MetaRecordTest, MalformedMetaIsRejected) {
  for (const char* bad :
       {"", "fingerprint.model=x\n", "step=12", "step=-1\n", "step=1x\n", "step=1\nstep=2\n",
        "step=1\nno equals sign\n", "step=1\nfingerprint.a=1\nfingerprint.a=2\n"}) {
    EXPECT_THROW(checkpoint::DecodeMeta(bad), CheckpointError) << bad;
  }
}

TEST(FingerprintTest, ResumeWithIncompatibleConfigIsRefusedNamingFileAndKeys) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = testing_util::WriteSampleCheckpoint(dir.path(), 5);
  CheckpointReader reader = CheckpointReader::Open(path);
  EXPECT_NO_THROW(reader.RequireCompatible(SampleFingerprint()));
  try {
    reader.RequireCompatible(SampleFingerprint("4"));
    FAIL() << "accepted";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()),
              "checkpoint " + path.string() +
                  ": cannot resume: checkpoint was written for ests=8, this run has ests=4");
  }
}

}  // namespace
}  // namespace elastic::agent
