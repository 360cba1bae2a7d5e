// RecordSink: staging buffer, direct payload writes with incremental CRCs, early writeback.
#include "agent/checkpoint/record_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/crc32.h"
#include "agent/checkpoint/format.h"
#include "agent/checkpoint/private_files.h"

namespace elastic::agent::checkpoint {
namespace {

// Payloads at least this large skip the staging buffer (one copy less); smaller ones are
// batched so a checkpoint of many small records costs few system calls.
constexpr std::size_t kDirectThreshold = 256 << 10;
constexpr std::size_t kStagingCapacity = 1 << 20;
// Direct payloads are checksummed and written in chunks of this size: small enough to stay in
// cache between the CRC and the kernel's copy, large enough to keep system calls rare.
constexpr std::size_t kChunkSize = 4 << 20;
// Once this much is written past the last writeback request, ask the kernel to start writing
// it out (sync_file_range), so the disk works while we produce the rest.
constexpr std::uint64_t kWritebackInterval = 8 << 20;

}  // namespace

RecordSink::RecordSink(int fd, const std::filesystem::path& path) : fd_(fd), path_(path) {
  staging_.reserve(kStagingCapacity);
}

void RecordSink::WriteHeader() {
  std::string header(kMagic);
  PutU32(&header, kFormatVersion);
  Stage(header);
}

void RecordSink::WriteRecord(std::string_view name, std::string_view payload) {
  if (payload.size() >= kDirectThreshold) return WriteStreamedRecord(name, payload);
  std::string covered;  // everything the record CRC covers: length, name length, name, payload
  covered.reserve(kRecordHeaderSize + name.size() + payload.size());
  PutU64(&covered, payload.size());
  PutU16(&covered, static_cast<std::uint16_t>(name.size()));
  covered += name;
  covered += payload;
  std::string crc;
  PutU32(&crc, Crc32(0, covered));
  Stage(crc);
  Stage(covered);
}

void RecordSink::WriteEnd(std::uint64_t record_count) {
  std::string end;
  PutU64(&end, record_count);
  PutU32(&end, file_crc_);
  WriteRecord("", end);
  Flush();
}

void RecordSink::Stage(std::string_view bytes) {
  file_crc_ = Crc32(file_crc_, bytes);
  if (staging_.size() + bytes.size() > kStagingCapacity) Flush();
  if (bytes.size() >= kStagingCapacity) return WriteDirect(bytes);
  staging_ += bytes;
}

void RecordSink::Flush() {
  if (staging_.empty()) return;
  WriteDirect(staging_);
  staging_.clear();
}

void RecordSink::WriteDirect(std::string_view bytes) {
  WriteAll(fd_, path_, bytes);
  offset_ += bytes.size();
  if (offset_ - sync_started_ >= kWritebackInterval) {
    // Only a hint: durability comes from the fsync in Commit, so an error (a filesystem without
    // support) changes nothing but speed.
    (void)::sync_file_range(fd_, static_cast<off_t>(sync_started_),
                            static_cast<off_t>(offset_ - sync_started_), SYNC_FILE_RANGE_WRITE);
    sync_started_ = offset_;
  }
}

// A large payload: the header goes out with a placeholder CRC, the payload is checksummed and
// written chunk by chunk from the caller's memory, then the CRC is written into its place
// (pwrite) and folded into the file CRC, which covers the header with the real CRC.
void RecordSink::WriteStreamedRecord(std::string_view name, std::string_view payload) {
  std::string covered;
  PutU64(&covered, payload.size());
  PutU16(&covered, static_cast<std::uint16_t>(name.size()));
  covered += name;
  Flush();
  const std::uint64_t crc_offset = offset_;
  std::string header(4, '\0');
  header += covered;
  WriteDirect(header);
  std::uint32_t payload_crc = 0;
  for (std::size_t at = 0; at < payload.size(); at += kChunkSize) {
    const std::string_view chunk = payload.substr(at, kChunkSize);
    payload_crc = Crc32(payload_crc, chunk);
    WriteDirect(chunk);
  }
  const std::uint32_t record_crc = Crc32Combine(Crc32(0, covered), payload_crc, payload.size());
  std::string crc;
  PutU32(&crc, record_crc);
  WriteAt(fd_, path_, crc_offset, crc);
  header.replace(0, 4, crc);
  file_crc_ = Crc32Combine(Crc32(file_crc_, header), payload_crc, payload.size());
}

}  // namespace elastic::agent::checkpoint
