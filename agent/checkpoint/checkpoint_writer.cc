// CheckpointWriter: record names, and the temp/fsync/rename/fsync-dir protocol around RecordSink.
#include "agent/checkpoint/checkpoint_writer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/format.h"
#include "agent/checkpoint/meta_record.h"
#include "agent/checkpoint/private_files.h"
#include "agent/checkpoint/record_sink.h"

namespace elastic::agent {
namespace {

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

void CheckpointWriter::CheckNewName(const std::string& name) const {
  if (std::string problem = checkpoint::CheckRecordName(name); !problem.empty()) {
    throw CheckpointError(problem);
  }
  if (name == checkpoint::kMetaRecordName) {
    throw CheckpointError("record name \"meta\" is reserved for the checkpoint's own metadata");
  }
  for (const Record& record : records_) {
    if (record.name == name) throw CheckpointError("record \"" + name + "\" is added twice");
  }
}

void CheckpointWriter::Add(std::string name, std::string payload) {
  CheckNewName(name);
  records_.push_back(Record{std::move(name), std::move(payload), {}, false});
}

void CheckpointWriter::AddView(std::string name, std::string_view payload) {
  CheckNewName(name);
  records_.push_back(Record{std::move(name), {}, payload, true});
}

std::filesystem::path CheckpointWriter::Commit(const std::filesystem::path& dir,
                                               std::uint64_t step) const {
  checkpoint::EnsurePrivateDirectory(dir);
  std::filesystem::path final_path = dir / checkpoint::CheckpointFileName(step);
  checkpoint::TempFile temp = checkpoint::CreateTempFile(dir, final_path.filename().string());
  TempFileGuard guard(temp.path);

  checkpoint::RecordSink sink(temp.fd.get(), temp.path);
  sink.WriteHeader();
  sink.WriteRecord(checkpoint::kMetaRecordName, checkpoint::EncodeMeta({step, fingerprint_}));
  for (const Record& record : records_) sink.WriteRecord(record.name, record.payload());
  sink.WriteEnd(records_.size() + 1);  // + meta

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
