// CheckpointReader: a front-to-back scan that checks each piece of the file before trusting it.
#include "agent/checkpoint/checkpoint_reader.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/crc32.h"
#include "agent/checkpoint/format.h"
#include "agent/checkpoint/meta_record.h"
#include "agent/checkpoint/private_files.h"

namespace elastic::agent {
namespace {

using checkpoint::Crc32;
using checkpoint::Crc32Combine;

// Validate streams payloads through a buffer of this size.
constexpr std::size_t kStreamChunk = std::size_t{1} << 20;
// Validate still keeps the meta and end payloads; a damaged length must not make it allocate
// gigabytes before the CRC check rejects the record.
constexpr std::uint64_t kMaxKeptWhenStreaming = std::uint64_t{16} << 20;

struct Record {
  std::string name;
  std::string payload;  // empty when streamed (Validate), except for meta and end
};

std::string Hex32(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

std::string Label(std::size_t index, std::string_view name) {
  if (name.empty()) return "end record (record " + std::to_string(index) + ")";
  return "record " + std::to_string(index) + " (" + checkpoint::QuoteForMessage(name) + ")";
}

class Scanner {
 public:
  Scanner(const std::filesystem::path& path, bool keep_payloads)
      : path_(path),
        keep_payloads_(keep_payloads),
        fd_(checkpoint::OpenRegularFile(path, &size_)) {}

  // The named records in file order, meta first; throws at the first damage found.
  std::vector<Record> Run() {
    ReadFileHeader();
    std::vector<Record> records;
    for (;;) {
      if (offset_ == size_) {
        Fail(Truncated() + "no end record after " + std::to_string(records.size()) + " records");
      }
      std::optional<Record> record = ReadRecord(records);
      if (!record) return records;
      records.push_back(std::move(*record));
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& reason) const { throw CheckpointError(path_, reason); }

  std::string Truncated() const { return "truncated after " + std::to_string(size_) + " bytes: "; }

  void Read(char* out, std::size_t size, const std::string& what) {
    if (size_ - offset_ < size) Fail(Truncated() + what + " is incomplete");
    if (!checkpoint::ReadAt(fd_.get(), path_, offset_, out, size)) {
      Fail("file shrank below " + std::to_string(size_) + " bytes while being read");
    }
    offset_ += size;
  }

  void ReadFileHeader() {
    char header[checkpoint::kFileHeaderSize];
    Read(header, sizeof header, "file header");
    std::string_view magic(header, checkpoint::kMagic.size());
    if (magic != checkpoint::kMagic) {
      Fail("not a checkpoint file: magic is " + checkpoint::QuoteForMessage(magic) + ", expected " +
           checkpoint::QuoteForMessage(checkpoint::kMagic));
    }
    std::uint32_t version = checkpoint::GetU32(header + checkpoint::kMagic.size());
    if (version != checkpoint::kFormatVersion) {
      Fail("format version " + std::to_string(version) + " is not supported (this agent reads " +
           std::to_string(checkpoint::kFormatVersion) + ")");
    }
    file_crc_ = Crc32(0, header, sizeof header);
  }

  // Reads the payload, keeping it in `*kept` unless that is null; returns the payload's CRC.
  std::uint32_t ReadPayload(std::uint64_t length, const std::string& label, std::string* kept) {
    if (kept != nullptr) {
      kept->resize(length);
      Read(kept->data(), length, label + " payload");
      return Crc32(0, *kept);
    }
    std::string buffer(std::min<std::uint64_t>(length, kStreamChunk), '\0');
    std::uint32_t crc = 0;
    for (std::uint64_t left = length; left > 0;) {
      std::size_t chunk = std::min<std::uint64_t>(left, buffer.size());
      Read(buffer.data(), chunk, label + " payload");
      crc = Crc32(crc, buffer.data(), chunk);
      left -= chunk;
    }
    return crc;
  }

  // Returns the record, or nothing once the end record has been checked.
  std::optional<Record> ReadRecord(const std::vector<Record>& before) {
    const std::size_t index = before.size();
    const std::string where = "record " + std::to_string(index);
    char header[checkpoint::kRecordHeaderSize];
    Read(header, sizeof header, where + " header");
    std::uint32_t stored_crc = checkpoint::GetU32(header);
    std::uint64_t length = checkpoint::GetU64(header + 4);
    std::uint16_t name_length = checkpoint::GetU16(header + 12);
    if (name_length > checkpoint::kMaxNameLength) {
      Fail(where + ": name length " + std::to_string(name_length) + " exceeds " +
           std::to_string(checkpoint::kMaxNameLength) + " (corrupt header)");
    }
    Record record;
    record.name.resize(name_length);
    Read(record.name.data(), name_length, where + " name");
    const std::string label = Label(index, record.name);
    if (length > size_ - offset_) {
      Fail(Truncated() + label + " declares " + std::to_string(length) + " payload bytes but " +
           std::to_string(size_ - offset_) + " remain (a truncated file or a corrupt length)");
    }
    bool keep =
        keep_payloads_ || ((index == 0 || name_length == 0) && length <= kMaxKeptWhenStreaming);
    std::uint32_t payload_crc = ReadPayload(length, label, keep ? &record.payload : nullptr);

    // The CRC covers the length, the name length, the name and the payload.
    std::uint32_t crc = Crc32Combine(Crc32(Crc32(0, header + 4, sizeof header - 4), record.name),
                                     payload_crc, length);
    if (crc != stored_crc) {
      Fail(label + ": CRC mismatch (stored " + Hex32(stored_crc) + ", computed " + Hex32(crc) +
           ")");
    }
    if (record.name.empty()) {
      CheckEndRecord(record.payload, before.size());
      return std::nullopt;
    }
    if (std::string problem = checkpoint::CheckRecordName(record.name); !problem.empty()) {
      Fail(label + ": " + problem);
    }
    for (const Record& earlier : before) {
      if (earlier.name == record.name) Fail(label + ": name appears twice");
    }
    file_crc_ = Crc32Combine(Crc32(Crc32(file_crc_, header, sizeof header), record.name),
                             payload_crc, length);
    return record;
  }

  void CheckEndRecord(const std::string& payload, std::size_t records) {
    if (payload.size() != checkpoint::kEndPayloadSize) {
      Fail("end record has " + std::to_string(payload.size()) + " payload bytes, expected " +
           std::to_string(checkpoint::kEndPayloadSize));
    }
    std::uint64_t count = checkpoint::GetU64(payload.data());
    if (count != records) {
      Fail("end record counts " + std::to_string(count) + " records but the file has " +
           std::to_string(records));
    }
    std::uint32_t stored_crc = checkpoint::GetU32(payload.data() + 8);
    if (stored_crc != file_crc_) {
      Fail("whole-file CRC mismatch (stored " + Hex32(stored_crc) + ", computed " +
           Hex32(file_crc_) + ")");
    }
    if (offset_ != size_) {
      Fail(std::to_string(size_ - offset_) + " unexpected bytes after the end record at byte " +
           std::to_string(offset_));
    }
  }

  std::filesystem::path path_;
  bool keep_payloads_;
  std::uint64_t size_ = 0;  // set by fd_'s initializer, so declared before fd_
  UniqueFd fd_;
  std::uint64_t offset_ = 0;
  std::uint32_t file_crc_ = 0;  // CRC of every byte before the current record
};

// Scans `path` and checks the meta record; the records returned exclude meta.
checkpoint::Meta ScanAndCheckMeta(const std::filesystem::path& path, bool keep_payloads,
                                  std::vector<Record>* records) {
  *records = Scanner(path, keep_payloads).Run();
  if (records->empty() || records->front().name != checkpoint::kMetaRecordName) {
    std::string first = records->empty() ? "missing" : "named " + records->front().name;
    throw CheckpointError(path, "record 0 is " + first + "; expected the \"meta\" record");
  }
  checkpoint::Meta meta;
  try {
    meta = checkpoint::DecodeMeta(records->front().payload);
  } catch (const CheckpointError& e) {
    throw CheckpointError(path, "record 0 (\"meta\"): " + e.reason());
  }
  auto named_step = checkpoint::ParseCheckpointFileName(path.filename().string());
  if (named_step && *named_step != meta.step) {
    throw CheckpointError(path, "the meta record says step " + std::to_string(meta.step) +
                                    " but the file name says step " + std::to_string(*named_step));
  }
  records->erase(records->begin());
  return meta;
}

}  // namespace

CheckpointReader CheckpointReader::Open(const std::filesystem::path& path) {
  std::vector<Record> records;
  checkpoint::Meta meta = ScanAndCheckMeta(path, /*keep_payloads=*/true, &records);
  CheckpointReader reader;
  reader.path_ = path;
  reader.step_ = meta.step;
  reader.fingerprint_ = std::move(meta.fingerprint);
  reader.records_.reserve(records.size());
  for (Record& record : records) {
    reader.records_.emplace_back(std::move(record.name), std::move(record.payload));
  }
  return reader;
}

void CheckpointReader::Validate(const std::filesystem::path& path) {
  std::vector<Record> records;
  ScanAndCheckMeta(path, /*keep_payloads=*/false, &records);
}

std::vector<std::string> CheckpointReader::Names() const {
  std::vector<std::string> names;
  names.reserve(records_.size());
  for (const auto& record : records_) names.push_back(record.first);
  return names;
}

bool CheckpointReader::Contains(std::string_view name) const {
  return std::any_of(records_.begin(), records_.end(),
                     [&](const auto& record) { return record.first == name; });
}

const std::string& CheckpointReader::Get(std::string_view name) const {
  for (const auto& record : records_) {
    if (record.first == name) return record.second;
  }
  throw CheckpointError(path_, "no record " + checkpoint::QuoteForMessage(name));
}

void CheckpointReader::RequireCompatible(const Fingerprint& current) const {
  std::string mismatch = DescribeMismatch(fingerprint_, current);
  if (!mismatch.empty()) throw CheckpointError(path_, "cannot resume: " + mismatch);
}

}  // namespace elastic::agent
