// ReadIdxFile with zlib's gzFile API.
#include "agent/data/idx_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "agent/common/errors.h"

namespace elastic::agent {
namespace {

// Larger than any dataset we ship (Fashion-MNIST train images are 47 MB), small enough that a
// corrupt header cannot make us allocate the machine's memory.
constexpr std::uint64_t kMaxDataBytes = std::uint64_t{1} << 32;

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

class IdxInput {
 public:
  explicit IdxInput(const std::string& path) : path_(path) {
    errno = 0;
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) {
      Fail(std::string("cannot open: ") + (errno != 0 ? std::strerror(errno) : "out of memory"));
    }
    gzbuffer(file_.get(), 1 << 20);
  }

  // Reads up to `size` bytes; returns how many were read (fewer only at end of file).
  std::size_t Read(void* out, std::size_t size) {
    auto* bytes = static_cast<unsigned char*>(out);
    std::size_t done = 0;
    while (done < size) {
      // gzread takes an unsigned and returns an int: read in chunks well below INT_MAX.
      unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(size - done, 1 << 24));
      int got = gzread(file_.get(), bytes + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_.get(), &code);
        Fail(std::string("read error: ") + (code == Z_ERRNO ? std::strerror(errno) : message));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

  [[noreturn]] void Fail(const std::string& problem) const {
    throw DataError(path_ + ": " + problem);
  }

 private:
  std::string path_;
  GzHandle file_;
};

std::uint32_t BigEndian32(const unsigned char* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
         (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
}

}  // namespace

IdxArray ReadIdxFile(const std::string& path, std::size_t expected_rank) {
  IdxInput in(path);
  unsigned char magic[4];
  if (in.Read(magic, 4) != 4) in.Fail("truncated: file shorter than the 4-byte IDX magic");
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] != expected_rank) {
    char expected[16];
    std::snprintf(expected, sizeof expected, "0x000008%02zx", expected_rank);
    char found[16];
    std::snprintf(found, sizeof found, "0x%02x%02x%02x%02x", magic[0], magic[1], magic[2],
                  magic[3]);
    in.Fail(std::string("bad IDX magic ") + found + ": expected " + expected +
            " (unsigned bytes, " + std::to_string(expected_rank) + " dimensions)");
  }

  IdxArray array;
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < expected_rank; ++i) {
    unsigned char bytes[4];
    if (in.Read(bytes, 4) != 4) in.Fail("truncated: header ends inside the dimension sizes");
    std::uint32_t dim = BigEndian32(bytes);
    if (dim == 0) in.Fail("dimension " + std::to_string(i) + " is 0: expected a size >= 1");
    total *= dim;
    if (total > kMaxDataBytes) in.Fail("dimensions describe more than 4 GiB of data");
    array.dims.push_back(dim);
  }

  array.data.resize(total);
  std::size_t got = in.Read(array.data.data(), array.data.size());
  if (got != total) {
    in.Fail("truncated: header promises " + std::to_string(total) + " data bytes, file has " +
            std::to_string(got));
  }
  unsigned char extra;
  if (in.Read(&extra, 1) != 0) {
    in.Fail("trailing bytes after the " + std::to_string(total) +
            " data bytes the header describes");
  }
  return array;
}

}  // namespace elastic::agent
