// CRC-32 (zlib's, the IEEE 802.3 polynomial) for checkpoint framing, plus the combination of
// adjacent CRCs so the whole-file CRC costs no second pass over the payloads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace elastic::agent::checkpoint {

// CRC of `size` bytes at `data`, continuing from `crc` (start with 0).
std::uint32_t Crc32(std::uint32_t crc, const void* data, std::size_t size);

inline std::uint32_t Crc32(std::uint32_t crc, std::string_view bytes) {
  return Crc32(crc, bytes.data(), bytes.size());
}

// CRC of A followed by B, given CRC(A), CRC(B) and the length of B.
std::uint32_t Crc32Combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t size_b);

}  // namespace elastic::agent::checkpoint
