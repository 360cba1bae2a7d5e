// Checkpoint files one at a time: round trips, and every kind of damage the framing must catch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/checkpoint/checkpoint_writer.h"
#include "agent/checkpoint/crc32.h"
#include "agent/checkpoint/format.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace elastic::agent {
namespace {

using testing_util::RandomBytes;
using testing_util::ReadFile;
using testing_util::SampleFingerprint;
using testing_util::WriteFile;
using testing_util::WriteSampleCheckpoint;

// Both entry points must reject the file, and agree on why.
std::string ExpectRejected(const std::filesystem::path& path) {
  std::string open_reason;
  try {
    CheckpointReader::Open(path);
    ADD_FAILURE() << "Open accepted " << path;
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.path(), path);
    open_reason = e.reason();
  }
  try {
    CheckpointReader::Validate(path);
    ADD_FAILURE() << "Validate accepted " << path;
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.reason(), open_reason);
  }
  return open_reason;
}

TEST(CheckpointFormatTest, RoundTripKeepsNamesOrderPayloadsStepAndFingerprint) {
  elastic::testing::TempDir dir;
  std::string big = RandomBytes(10 << 20, 7);
  std::string binary("a\0b\xff\n", 5);
  CheckpointWriter writer(SampleFingerprint());
  writer.Add("params", big);
  writer.Add("est/1", "");
  writer.Add("est/0", binary);
  writer.Add(std::string(checkpoint::kMaxNameLength, 'n'), "longest name");
  std::filesystem::path path = writer.Commit(dir.path(), 42);

  EXPECT_EQ(path, dir.path() / "ckpt-0000000042.elck");
  CheckpointReader reader = CheckpointReader::Open(path);
  EXPECT_EQ(reader.path(), path);
  EXPECT_EQ(reader.step(), 42u);
  EXPECT_EQ(reader.fingerprint(), SampleFingerprint());
  EXPECT_EQ(reader.Names(),
            (std::vector<std::string>{"params", "est/1", "est/0", std::string(255, 'n')}));
  EXPECT_EQ(reader.Get("params"), big);
  EXPECT_EQ(reader.Get("est/1"), "");
  EXPECT_EQ(reader.Get("est/0"), binary);
  EXPECT_TRUE(reader.Contains("est/0"));
  EXPECT_FALSE(reader.Contains("meta"));
  EXPECT_NO_THROW(CheckpointReader::Validate(path));
}

// The carry-less-multiply CRC is zlib's CRC: every length around the 16/64-byte block edges,
// every alignment, continuing from arbitrary CRCs.
TEST(Crc32Test, FastPathEqualsZlibForEveryLengthAndAlignment) {
  const std::string bytes = RandomBytes(1200, 3);
  int checked = 0;
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t size = 0; size + offset <= 1100; ++size) {
      const auto start = static_cast<std::uint32_t>(size * 2654435761u + offset);
      ASSERT_EQ(checkpoint::Crc32(start, bytes.data() + offset, size),
                checkpoint::Crc32Portable(start, bytes.data() + offset, size))
          << "offset " << offset << " size " << size;
      ++checked;
    }
  }
  EXPECT_GT(checked, 17000);
  // The standard check value: CRC-32 of "123456789".
  EXPECT_EQ(checkpoint::Crc32(0, "123456789"), 0xcbf43926u);
  const std::string big = RandomBytes(1 << 20, 4);
  EXPECT_EQ(checkpoint::Crc32(0, big), checkpoint::Crc32Portable(0, big.data(), big.size()));
}

// Large payloads take the streamed path (header CRC patched in afterwards, no copy for a
// borrowed payload); the file is byte for byte the one the buffered path writes, and damage in
// the middle of a streamed payload is caught like any other.
TEST(CheckpointFormatTest, StreamedAndBorrowedPayloadsWriteTheSameBytes) {
  elastic::testing::TempDir dir;
  const std::string big = RandomBytes((9 << 20) + 13, 5);
  const std::string small = RandomBytes(300, 6);
  CheckpointWriter owned(SampleFingerprint());
  owned.Add("small", std::string(small));
  owned.Add("params", std::string(big));
  owned.Add("tail", "x");
  CheckpointWriter borrowed(SampleFingerprint());
  borrowed.AddView("small", small);
  borrowed.AddView("params", big);
  borrowed.Add("tail", "x");
  const std::string owned_bytes = ReadFile(owned.Commit(dir.path() / "a", 1));
  const std::filesystem::path path = borrowed.Commit(dir.path() / "b", 1);
  EXPECT_EQ(ReadFile(path), owned_bytes);
  CheckpointReader reader = CheckpointReader::Open(path);
  EXPECT_EQ(reader.Get("params"), big);
  EXPECT_EQ(reader.Get("small"), small);
  EXPECT_THROW(borrowed.AddView("params", small), CheckpointError);  // repeated name

  testing_util::PatchByte(path, owned_bytes.size() / 2,
                          static_cast<char>(owned_bytes[owned_bytes.size() / 2] ^ 1));
  EXPECT_NE(ExpectRejected(path).find("record 2 (\"params\"): CRC mismatch"), std::string::npos);
}

TEST(CheckpointFormatTest, CheckpointWithNoRecordsRoundTrips) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = CheckpointWriter(Fingerprint()).Commit(dir.path(), 0);
  CheckpointReader reader = CheckpointReader::Open(path);
  EXPECT_EQ(reader.step(), 0u);
  EXPECT_TRUE(reader.Names().empty());
  EXPECT_TRUE(reader.fingerprint().entries().empty());
}

TEST(CheckpointFormatTest, FileStartsWithMagicAndVersion) {
  elastic::testing::TempDir dir;
  std::string file = ReadFile(WriteSampleCheckpoint(dir.path(), 1));
  EXPECT_EQ(file.substr(0, 8), "ELCKPT01");
  EXPECT_EQ(checkpoint::GetU32(file.data() + 8), 1u);
  std::vector<testing_util::RecordSpan> layout = testing_util::RecordLayout(file);
  ASSERT_EQ(layout.size(), 7u);  // meta, 5 records, end
  EXPECT_EQ(layout.front().name, "meta");
  EXPECT_EQ(layout.back().name, "");
  EXPECT_EQ(layout.back().offset + layout.back().size, file.size());
}

TEST(CheckpointFormatTest, GetOfMissingRecordNamesIt) {
  elastic::testing::TempDir dir;
  CheckpointReader reader = CheckpointReader::Open(WriteSampleCheckpoint(dir.path(), 1));
  try {
    reader.Get("est/9");
    FAIL() << "no exception";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.reason(), "no record \"est/9\"");
  }
}

TEST(CheckpointFormatTest, EverySingleByteCorruptionIsDetected) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  const std::string good = ReadFile(path);
  ASSERT_GT(good.size(), 4000u);
  // Every byte with a one-bit flip (the bit varies with the offset), and a sample of offsets
  // with every bit flipped.
  for (std::size_t offset = 0; offset < good.size(); ++offset) {
    std::vector<unsigned char> masks = {static_cast<unsigned char>(1u << (offset % 8))};
    if (offset % 97 == 0) masks.push_back(0xff);
    for (unsigned char mask : masks) {
      testing_util::PatchByte(path, offset, static_cast<char>(good[offset] ^ mask));
      SCOPED_TRACE("offset " + std::to_string(offset) + " mask " + std::to_string(mask));
      EXPECT_FALSE(ExpectRejected(path).empty());
    }
    testing_util::PatchByte(path, offset, good[offset]);
  }
  EXPECT_NO_THROW(CheckpointReader::Validate(path));  // the patching restored every byte
}

TEST(CheckpointFormatTest, CorruptPayloadIsReportedWithRecordIndexAndName) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  std::string file = ReadFile(path);
  testing_util::RecordSpan params = testing_util::RecordLayout(file)[1];
  ASSERT_EQ(params.name, "params");
  file[params.offset + params.size - 10] ^= 0x20;
  WriteFile(path, file);
  std::string reason = ExpectRejected(path);
  EXPECT_TRUE(reason.starts_with("record 1 (\"params\"): CRC mismatch")) << reason;
}

TEST(CheckpointFormatTest, EveryTruncationIsDetectedAndSaysWhere) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  const std::uint64_t size = std::filesystem::file_size(path);
  // Shrinking one byte at a time needs no rewrite of the file (see PatchByte).
  for (std::uint64_t length = size; length-- > 0;) {
    std::filesystem::resize_file(path, length);
    std::string reason = ExpectRejected(path);
    EXPECT_TRUE(reason.starts_with("truncated after " + std::to_string(length) + " bytes: "))
        << reason;
  }
}

TEST(CheckpointFormatTest, TruncationAtRecordBoundaryReportsMissingEndRecord) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  std::string file = ReadFile(path);
  testing_util::RecordSpan end = testing_util::RecordLayout(file).back();
  WriteFile(path, file.substr(0, end.offset));
  EXPECT_EQ(ExpectRejected(path), "truncated after " + std::to_string(end.offset) +
                                      " bytes: no end record after 6 records");
}

TEST(CheckpointFormatTest, RemovedRecordIsCaughtByTheEndRecordCount) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  std::string file = ReadFile(path);
  testing_util::RecordSpan est1 = testing_util::RecordLayout(file)[4];
  ASSERT_EQ(est1.name, "est/1");
  WriteFile(path, file.erase(est1.offset, est1.size));
  EXPECT_EQ(ExpectRejected(path), "end record counts 6 records but the file has 5");
}

TEST(CheckpointFormatTest, ReorderedRecordsAreCaughtByTheWholeFileCrc) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  std::string file = ReadFile(path);
  std::vector<testing_util::RecordSpan> layout = testing_util::RecordLayout(file);
  const testing_util::RecordSpan& a = layout[2];  // optimizer
  const testing_util::RecordSpan& b = layout[3];  // est/0
  std::string swapped = file.substr(0, a.offset) + file.substr(b.offset, b.size) +
                        file.substr(a.offset, a.size) + file.substr(b.offset + b.size);
  WriteFile(path, swapped);
  EXPECT_TRUE(ExpectRejected(path).starts_with("whole-file CRC mismatch"));
}

TEST(CheckpointFormatTest, TrailingBytesAfterTheEndRecordAreRejected) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  WriteFile(path, ReadFile(path) + "xyz");
  EXPECT_TRUE(ExpectRejected(path).starts_with("3 unexpected bytes after the end record"));
}

TEST(CheckpointFormatTest, BadMagicAndUnknownVersionAreNamed) {
  elastic::testing::TempDir dir;
  std::filesystem::path path = WriteSampleCheckpoint(dir.path(), 3);
  const std::string good = ReadFile(path);

  WriteFile(path, "PK\x03\x04" + good.substr(4));
  EXPECT_EQ(ExpectRejected(path),
            "not a checkpoint file: magic is \"PK\\x03\\x04PT01\", expected \"ELCKPT01\"");

  std::string newer = good;
  newer[8] = 2;
  WriteFile(path, newer);
  EXPECT_EQ(ExpectRejected(path), "format version 2 is not supported (this agent reads 1)");
}

TEST(CheckpointFormatTest, StepInMetaMustMatchTheFileName) {
  elastic::testing::TempDir dir;
  std::filesystem::path written = WriteSampleCheckpoint(dir.path(), 3);
  std::filesystem::path renamed = dir.path() / checkpoint::CheckpointFileName(4);
  std::filesystem::rename(written, renamed);
  EXPECT_EQ(ExpectRejected(renamed), "the meta record says step 3 but the file name says step 4");

  // Under a name that is not a checkpoint name, the meta record's step is the step.
  std::filesystem::path other = dir.path() / "copy.bin";
  std::filesystem::rename(renamed, other);
  EXPECT_EQ(CheckpointReader::Open(other).step(), 3u);
}

TEST(CheckpointFormatTest, EmptyAndNonRegularFilesAreRejected) {
  elastic::testing::TempDir dir;
  std::filesystem::path empty = dir.Write("ckpt-0000000001.elck", "");
  EXPECT_EQ(ExpectRejected(empty), "truncated after 0 bytes: file header is incomplete");
  std::filesystem::path directory = dir.path() / "ckpt-0000000002.elck";
  std::filesystem::create_directory(directory);
  EXPECT_EQ(ExpectRejected(directory), "not a regular file");
  EXPECT_TRUE(ExpectRejected(dir.path() / "missing.elck").starts_with("cannot open: "));
}

TEST(CheckpointFormatTest, MalformedOrRepeatedRecordNamesAreRefused) {
  CheckpointWriter writer(SampleFingerprint());
  writer.Add("params", "x");
  auto reason_of = [&](const std::string& name) {
    try {
      writer.Add(name, "y");
    } catch (const CheckpointError& e) {
      EXPECT_TRUE(e.path().empty());
      return e.reason();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(reason_of("params"), "record \"params\" is added twice");
  EXPECT_EQ(reason_of("meta"),
            "record name \"meta\" is reserved for the checkpoint's own metadata");
  EXPECT_EQ(reason_of(""), "record name is empty (reserved for the end record)");
  EXPECT_TRUE(
      reason_of(std::string(256, 'n')).ends_with("is 256 bytes long; expected at most 255"));
  EXPECT_TRUE(
      reason_of("est 0").ends_with("contains a space or a non-printable byte; "
                                   "expected printable ASCII"));
  EXPECT_TRUE(reason_of("est\n0").ends_with("expected printable ASCII"));
  EXPECT_EQ(reason_of(std::string(255, 'n')), "accepted");
}

TEST(CheckpointFileNameTest, PadsToTenDigitsAndParsesBack) {
  EXPECT_EQ(checkpoint::CheckpointFileName(42), "ckpt-0000000042.elck");
  EXPECT_EQ(checkpoint::CheckpointFileName(12345678901), "ckpt-12345678901.elck");
  EXPECT_EQ(checkpoint::ParseCheckpointFileName("ckpt-0000000042.elck"), 42u);
  EXPECT_EQ(checkpoint::ParseCheckpointFileName("ckpt-12345678901.elck"), 12345678901u);
  EXPECT_EQ(checkpoint::ParseCheckpointFileName("ckpt-7.elck"), 7u);
  for (const char* bad :
       {"ckpt-.elck", "ckpt-12a.elck", "ckpt--1.elck", "ckpt-+1.elck", "ckpt-1.elck.tmp-abcdef",
        "ckpt-99999999999999999999.elck", "ckpt-1.elc", "xckpt-1.elck", "ckpt-1"}) {
    EXPECT_FALSE(checkpoint::ParseCheckpointFileName(bad).has_value()) << bad;
  }
  EXPECT_TRUE(checkpoint::IsTempFileName("ckpt-0000000042.elck.tmp-a1B2c3"));
  EXPECT_FALSE(checkpoint::IsTempFileName("ckpt-0000000042.elck"));
  EXPECT_FALSE(checkpoint::IsTempFileName("notes.tmp-a1B2c3"));
}

}  // namespace
}  // namespace elastic::agent
