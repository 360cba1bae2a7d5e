// IDX fixtures written with zlib, the way Debian ships Fashion-MNIST.
#include "tests/unit/agent/idx_fixture.h"

#include <zlib.h>

#include <fstream>
#include <stdexcept>

namespace elastic::agent::testing {

std::string IdxBytes(const std::vector<std::uint32_t>& dims,
                     const std::vector<std::uint8_t>& data) {
  std::string bytes = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (std::uint32_t dim : dims) {
    for (int shift : {24, 16, 8, 0}) bytes += static_cast<char>((dim >> shift) & 0xff);
  }
  bytes.append(data.begin(), data.end());
  return bytes;
}

void WriteFile(const std::filesystem::path& path, const std::string& bytes, bool gzip) {
  if (!gzip) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    if (!out) throw std::runtime_error("cannot write " + path.string());
    return;
  }
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot gzopen " + path.string());
  int written =
      bytes.empty() ? 0 : gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
  if (gzclose(file) != Z_OK || written != static_cast<int>(bytes.size())) {
    throw std::runtime_error("cannot gzwrite " + path.string());
  }
}

namespace {

// Image i has every pixel equal to i, label i % 10.
void WriteSplit(const std::filesystem::path& dir, const std::string& prefix, std::uint32_t count,
                bool gzip) {
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;
  for (std::uint32_t i = 0; i < count; ++i) {
    pixels.insert(pixels.end(), 28 * 28, static_cast<std::uint8_t>(i));
    labels.push_back(static_cast<std::uint8_t>(i % 10));
  }
  const std::string suffix = gzip ? ".gz" : "";
  WriteFile(dir / (prefix + "-images-idx3-ubyte" + suffix), IdxBytes({count, 28, 28}, pixels),
            gzip);
  WriteFile(dir / (prefix + "-labels-idx1-ubyte" + suffix), IdxBytes({count}, labels), gzip);
}

}  // namespace

void WriteTrainSplit(const std::filesystem::path& dir, std::uint32_t count, bool gzip) {
  WriteSplit(dir, "train", count, gzip);
}

void WriteTestSplit(const std::filesystem::path& dir, std::uint32_t count, bool gzip) {
  WriteSplit(dir, "t10k", count, gzip);
}

}  // namespace elastic::agent::testing
