// libFuzzer target: the checkpoint reader (record framing, CRCs, end record, meta record),
// checking that Open and the streaming Validate agree on every file.
//
// Input: byte 0 is a mode, the rest is the file. Mode bit 0 set: before reading, every record
// whose framing fits in the file gets its CRC, and the end record its count and whole-file CRC,
// recomputed, so mutations reach the checks behind the CRCs (names, meta, end record) instead
// of all stopping at the first CRC mismatch. Bit 1 set: the file is named for step 1
// (ckpt-0000000001.elck), so the meta record's step is checked against the name.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/checkpoint/crc32.h"
#include "agent/checkpoint/format.h"

namespace {

namespace ckpt = elastic::agent::checkpoint;
using elastic::agent::CheckpointError;
using elastic::agent::CheckpointReader;

void SetU32(std::string& bytes, std::size_t at, std::uint32_t value) {
  std::string encoded;
  ckpt::PutU32(&encoded, value);
  bytes.replace(at, encoded.size(), encoded);
}

void SetU64(std::string& bytes, std::size_t at, std::uint64_t value) {
  std::string encoded;
  ckpt::PutU64(&encoded, value);
  bytes.replace(at, encoded.size(), encoded);
}

// Recomputes what a writer would have stored for the records as they are framed.
void RepairCrcs(std::string& bytes) {
  std::size_t at = ckpt::kFileHeaderSize;
  if (bytes.size() < at) return;
  std::uint32_t file_crc = ckpt::Crc32(0, bytes.data(), at);
  std::uint64_t records = 0;
  while (bytes.size() - at >= ckpt::kRecordHeaderSize) {
    const std::uint64_t length = ckpt::GetU64(bytes.data() + at + 4);
    const std::size_t name_length = ckpt::GetU16(bytes.data() + at + 12);
    const std::size_t left = bytes.size() - at - ckpt::kRecordHeaderSize;
    if (name_length > ckpt::kMaxNameLength || name_length > left || length > left - name_length) {
      return;
    }
    const std::size_t payload_at = at + ckpt::kRecordHeaderSize + name_length;
    if (name_length == 0 && length == ckpt::kEndPayloadSize) {
      SetU64(bytes, payload_at, records);
      SetU32(bytes, payload_at + 8, file_crc);
    }
    const std::size_t covered = ckpt::kRecordHeaderSize - 4 + name_length + length;
    SetU32(bytes, at, ckpt::Crc32(0, bytes.data() + at + 4, covered));
    if (name_length == 0) return;
    file_crc = ckpt::Crc32(file_crc, bytes.data() + at, covered + 4);
    ++records;
    at = payload_at + length;
  }
}

// This process's directory for the file under test, removed at exit.
const std::filesystem::path& ScratchDir() {
  // Never destroyed, so the exit handler can still read it.
  static const std::filesystem::path* const dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "ckpt-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    return new std::filesystem::path(pattern);
  }();
  static const int remove_at_exit = std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(*dir, ignored);
  });
  (void)remove_at_exit;
  return *dir;
}

// Ok and the failure reason, from one way of reading the file.
template <typename Read>
std::pair<bool, std::string> Outcome(Read read) {
  try {
    read();
    return {true, ""};
  } catch (const CheckpointError& e) {
    return {false, e.reason()};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (mode & 1) RepairCrcs(bytes);
  const std::filesystem::path path =
      ScratchDir() / (mode & 2 ? ckpt::CheckpointFileName(1) : "fuzz.elck");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) std::abort();
  }

  std::optional<CheckpointReader> reader;
  auto opened = Outcome([&] { reader.emplace(CheckpointReader::Open(path)); });
  auto validated = Outcome([&] { CheckpointReader::Validate(path); });
  // Validate streams the payloads Open keeps; they must judge every file alike.
  if (opened != validated) std::abort();
  if (reader) {
    for (const std::string& name : reader->Names()) {
      if (!ckpt::CheckRecordName(name).empty() || name == ckpt::kMetaRecordName) std::abort();
      if (!reader->Contains(name)) std::abort();
      (void)reader->Get(name);
    }
    reader->RequireCompatible(reader->fingerprint());  // a checkpoint fits its own fingerprint
    Outcome([&] { reader->RequireCompatible(elastic::agent::Fingerprint()); });
  }
  return 0;
}
