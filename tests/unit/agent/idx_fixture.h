// Writes small IDX files (gzip'd or plain) for the agent's data tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace elastic::agent::testing {

// The IDX bytes for an unsigned-byte array: magic 0x000008<rank>, big-endian dims, data.
std::string IdxBytes(const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& data);

// Writes `bytes` to `path`, gzip-compressed when `gzip`.
void WriteFile(const std::filesystem::path& path, const std::string& bytes, bool gzip);

// Writes a Fashion-MNIST-shaped train split of `count` images into `dir`: image i has every
// pixel equal to i, label i % 10.
void WriteTrainSplit(const std::filesystem::path& dir, std::uint32_t count, bool gzip);
// The same as the test split (t10k-*).
void WriteTestSplit(const std::filesystem::path& dir, std::uint32_t count, bool gzip);

}  // namespace elastic::agent::testing
