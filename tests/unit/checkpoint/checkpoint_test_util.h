// Helpers shared by the checkpoint tests: whole-file I/O, sample fingerprints and checkpoints,
// and a walk over a file's record layout for tests that splice records.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/checkpoint/checkpoint_writer.h"
#include "agent/checkpoint/fingerprint.h"
#include "agent/checkpoint/format.h"

namespace elastic::agent::testing_util {

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// Overwrites one byte in place. Rewriting the whole file instead (O_TRUNC) makes ext4 flush it
// on close (auto_da_alloc), which turns a loop over every byte into minutes.
inline void PatchByte(const std::filesystem::path& path, std::size_t offset, char value) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(value);
  if (!file) throw std::runtime_error("cannot patch " + path.string());
}

inline std::string RandomBytes(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(engine() & 0xff);
  return bytes;
}

inline Fingerprint SampleFingerprint(const std::string& ests = "8") {
  Fingerprint fingerprint;
  fingerprint.Add("model", "fmnist_cnn");
  fingerprint.Add("ests", ests);
  fingerprint.Add("global_batch", "256");
  fingerprint.Add("seed", "1");
  fingerprint.Add("determinism", "d1");
  fingerprint.Add("param/conv1.weight", "[32, 1, 5, 5]");
  return fingerprint;
}

// A small checkpoint with the record names the trainer will use, one of them empty.
inline std::filesystem::path WriteSampleCheckpoint(const std::filesystem::path& dir,
                                                   std::uint64_t step) {
  CheckpointWriter writer(SampleFingerprint());
  writer.Add("params", RandomBytes(3000, step));
  writer.Add("optimizer", RandomBytes(1500, step + 1));
  writer.Add("est/0", "");
  writer.Add("est/1", RandomBytes(200, step + 2));
  writer.Add("bucket_map", "0:0-9\n1:10-19\n");
  return writer.Commit(dir, step);
}

struct RecordSpan {
  std::size_t offset = 0;  // of the record header
  std::size_t size = 0;    // header + name + payload
  std::string name;
};

// Record boundaries of a valid file, end record last (it has the empty name).
inline std::vector<RecordSpan> RecordLayout(const std::string& file) {
  std::vector<RecordSpan> spans;
  std::size_t offset = checkpoint::kFileHeaderSize;
  while (offset < file.size()) {
    std::uint64_t length = checkpoint::GetU64(file.data() + offset + 4);
    std::uint16_t name_length = checkpoint::GetU16(file.data() + offset + 12);
    RecordSpan span{offset, checkpoint::kRecordHeaderSize + name_length + length,
                    file.substr(offset + checkpoint::kRecordHeaderSize, name_length)};
    spans.push_back(span);
    offset += span.size;
  }
  return spans;
}

}  // namespace elastic::agent::testing_util
