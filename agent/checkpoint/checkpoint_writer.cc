// CheckpointWriter: record names, and RecordSink streaming into a common AtomicFile.
#include "agent/checkpoint/checkpoint_writer.h"

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/format.h"
#include "agent/checkpoint/meta_record.h"
#include "agent/checkpoint/private_files.h"
#include "agent/checkpoint/record_sink.h"
#include "common/atomic_file.h"

namespace elastic::agent {

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

// AtomicFile gives the temp file (O_EXCL, 0600), the fsync/rename/fsync-dir order and the
// removal of the temp file on failure; RecordSink streams the records into it.
std::filesystem::path CheckpointWriter::Commit(const std::filesystem::path& dir,
                                               std::uint64_t step) const {
  checkpoint::EnsurePrivateDirectory(dir);
  const std::filesystem::path final_path = dir / checkpoint::CheckpointFileName(step);
  try {
    AtomicFile file(final_path, {.mode = 0600, .temp_name = TempName::kUnique});
    checkpoint::RecordSink sink(file.fd(), file.temp_path());
    sink.WriteHeader();
    sink.WriteRecord(checkpoint::kMetaRecordName, checkpoint::EncodeMeta({step, fingerprint_}));
    for (const Record& record : records_) sink.WriteRecord(record.name, record.payload());
    sink.WriteEnd(records_.size() + 1);  // + meta
    file.Commit();
  } catch (const FileError& e) {
    throw CheckpointError(e.path(), e.reason());
  }
  return final_path;
}

}  // namespace elastic::agent
