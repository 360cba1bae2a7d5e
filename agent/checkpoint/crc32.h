// CRC-32 (zlib's, the IEEE 802.3 polynomial) for checkpoint framing, plus the combination of
// adjacent CRCs so the whole-file CRC costs no second pass over the payloads.
//
// Speed matters here: the writer computes the CRC of every byte it writes, and zlib 1.2.13's
// table-driven loop (under 1 GiB/s on the development VM) took longer than writing the bytes.
// Where the CPU has PCLMULQDQ, whole 16-byte blocks are folded with carry-less multiplication
// (Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", Intel 2009),
// many GiB/s; the tail and other CPUs use zlib. Both give the same value (tested byte by byte).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace elastic::agent::checkpoint {

// CRC of `size` bytes at `data`, continuing from `crc` (start with 0). Thread-safe.
std::uint32_t Crc32(std::uint32_t crc, const void* data, std::size_t size);

inline std::uint32_t Crc32(std::uint32_t crc, std::string_view bytes) {
  return Crc32(crc, bytes.data(), bytes.size());
}

// zlib's implementation alone, for tests that compare the two paths.
std::uint32_t Crc32Portable(std::uint32_t crc, const void* data, std::size_t size);

// Whether Crc32 uses the carry-less multiplication path on this CPU.
bool Crc32UsesClmul();

// CRC of A followed by B, given CRC(A), CRC(B) and the length of B.
std::uint32_t Crc32Combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t size_b);

}  // namespace elastic::agent::checkpoint
