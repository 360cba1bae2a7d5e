// CRC-32 over zlib: crc32_z takes a size_t, so multi-GiB payloads need no chunking here.
#include "agent/checkpoint/crc32.h"

#include <zlib.h>

namespace elastic::agent::checkpoint {

// Payloads past 2 GiB must combine correctly; z_off_t is `long`, 64-bit on LP64 Linux.
static_assert(sizeof(z_off_t) >= 8, "zlib's z_off_t must be 64-bit for multi-GiB records");

std::uint32_t Crc32(std::uint32_t crc, const void* data, std::size_t size) {
  return static_cast<std::uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(size)));
}

std::uint32_t Crc32Combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t size_b) {
  return static_cast<std::uint32_t>(crc32_combine(crc_a, crc_b, static_cast<z_off_t>(size_b)));
}

}  // namespace elastic::agent::checkpoint
