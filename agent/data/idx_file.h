// Reader for IDX files (the MNIST / Fashion-MNIST container), gzip-compressed or plain.
// Torch-free on purpose: it returns plain vectors so it is cheap to compile and unit-test.
// Format: 2 zero bytes, a type byte (0x08 = unsigned byte, the only type these datasets use),
// a dimension count, then each dimension as a big-endian uint32, then the data row-major.
// Errors: throws DataError naming the file and what was wrong (missing, bad magic, truncated).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace elastic::agent {

struct IdxArray {
  std::vector<std::uint32_t> dims;  // e.g. {60000, 28, 28} for images, {60000} for labels
  std::vector<std::uint8_t> data;   // product(dims) bytes, row-major
};

// Reads a whole unsigned-byte IDX file with exactly `expected_rank` dimensions. zlib reads
// plain files transparently, so `path` may be the .gz as Debian installs it or an unpacked copy.
// Trailing bytes after the data are an error: they mean the header does not describe the file.
IdxArray ReadIdxFile(const std::string& path, std::size_t expected_rank);

}  // namespace elastic::agent
