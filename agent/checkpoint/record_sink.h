// RecordSink: streams framed checkpoint records (docs/checkpoint-format.md) to an open file in
// one pass over each payload: small pieces go through a staging buffer, large payloads straight
// from the caller's memory; the record CRC and the whole-file CRC are computed on the way, chunk
// by chunk while the bytes are hot in cache, and writeback to the device is started behind the
// writer so the final fsync has little left to wait for. Not thread-safe. Throws CheckpointError.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace elastic::agent::checkpoint {

class RecordSink {
 public:
  // Borrows `fd`, which must be open for writing at offset 0 of an empty file.
  RecordSink(int fd, const std::filesystem::path& path);

  // The file header (magic, version). REQUIRES: first call.
  void WriteHeader();
  // One record: crc | length | name_length | name | payload.
  void WriteRecord(std::string_view name, std::string_view payload);
  // The end record (count of records before it, file CRC), then flushes everything.
  void WriteEnd(std::uint64_t record_count);

 private:
  void Stage(std::string_view bytes);
  void Flush();
  void WriteDirect(std::string_view bytes);  // not staged; starts writeback behind itself
  void WriteStreamedRecord(std::string_view name, std::string_view payload);

  int fd_;
  std::filesystem::path path_;
  std::string staging_;
  std::uint64_t offset_ = 0;        // bytes handed to the kernel so far
  std::uint32_t file_crc_ = 0;      // CRC of every byte of the file so far
  std::uint64_t sync_started_ = 0;  // writeback was requested for [0, sync_started_)
};

}  // namespace elastic::agent::checkpoint
