// CheckpointWriter: record framing on the way out and the temp/fsync/rename/fsync-dir protocol.
#include "agent/checkpoint/checkpoint_writer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string_view>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/crc32.h"
#include "agent/checkpoint/format.h"
#include "agent/checkpoint/meta_record.h"
#include "agent/checkpoint/private_files.h"

namespace elastic::agent {
namespace {

using checkpoint::Crc32;
using checkpoint::Crc32Combine;

// Writes one framed record and folds its bytes into `file_crc` (the CRC of everything written
// so far). Each payload is read once: its CRC serves both the record and the file.
void WriteRecord(int fd, const std::filesystem::path& path, std::string_view name,
                 std::string_view payload, std::uint32_t* file_crc) {
  std::string covered;  // the header bytes after the CRC field, then the name
  checkpoint::PutU64(&covered, payload.size());
  checkpoint::PutU16(&covered, static_cast<std::uint16_t>(name.size()));
  covered += name;
  std::uint32_t payload_crc = Crc32(0, payload);
  std::uint32_t record_crc = Crc32Combine(Crc32(0, covered), payload_crc, payload.size());

  std::string header;
  checkpoint::PutU32(&header, record_crc);
  header += covered;
  checkpoint::WriteAll(fd, path, header);
  checkpoint::WriteAll(fd, path, payload);
  *file_crc = Crc32Combine(Crc32(*file_crc, header), payload_crc, payload.size());
}

// Removes the temp file unless Commit got as far as renaming it.
class TempFileGuard {
 public:
  explicit TempFileGuard(const std::filesystem::path& path) : path_(path) {}
  ~TempFileGuard() {
    if (armed_) ::unlink(path_.c_str());
  }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  void Disarm() { armed_ = false; }

 private:
  std::filesystem::path path_;
  bool armed_ = true;
};

}  // namespace

CheckpointWriter::CheckpointWriter(Fingerprint fingerprint)
    : fingerprint_(std::move(fingerprint)) {}

void CheckpointWriter::Add(std::string name, std::string payload) {
  if (std::string problem = checkpoint::CheckRecordName(name); !problem.empty()) {
    throw CheckpointError(problem);
  }
  if (name == checkpoint::kMetaRecordName) {
    throw CheckpointError("record name \"meta\" is reserved for the checkpoint's own metadata");
  }
  for (const auto& record : records_) {
    if (record.first == name) throw CheckpointError("record \"" + name + "\" is added twice");
  }
  records_.emplace_back(std::move(name), std::move(payload));
}

std::filesystem::path CheckpointWriter::Commit(const std::filesystem::path& dir,
                                               std::uint64_t step) const {
  checkpoint::EnsurePrivateDirectory(dir);
  std::filesystem::path final_path = dir / checkpoint::CheckpointFileName(step);
  checkpoint::TempFile temp = checkpoint::CreateTempFile(dir, final_path.filename().string());
  TempFileGuard guard(temp.path);

  std::string header(checkpoint::kMagic);
  checkpoint::PutU32(&header, checkpoint::kFormatVersion);
  checkpoint::WriteAll(temp.fd.get(), temp.path, header);
  std::uint32_t file_crc = Crc32(0, header);

  std::string meta = checkpoint::EncodeMeta({step, fingerprint_});
  WriteRecord(temp.fd.get(), temp.path, checkpoint::kMetaRecordName, meta, &file_crc);
  for (const auto& [name, payload] : records_) {
    WriteRecord(temp.fd.get(), temp.path, name, payload, &file_crc);
  }
  std::string end;
  checkpoint::PutU64(&end, records_.size() + 1);  // + meta
  checkpoint::PutU32(&end, file_crc);
  std::uint32_t ignored_crc = 0;
  WriteRecord(temp.fd.get(), temp.path, "", end, &ignored_crc);

  // Data must be durable before the name points at it, and the name before we report success.
  checkpoint::SyncFile(temp.fd.get(), temp.path);
  temp.fd.Close(temp.path);
  if (::rename(temp.path.c_str(), final_path.c_str()) != 0) {
    throw CheckpointError(final_path, "cannot rename " + temp.path.string() +
                                          " to it: " + std::string(strerror(errno)));
  }
  guard.Disarm();
  checkpoint::SyncDirectory(dir);
  return final_path;
}

}  // namespace elastic::agent
