// CRC-32: carry-less-multiply folding on x86-64 with PCLMULQDQ, zlib everywhere else.
#include "agent/checkpoint/crc32.h"

#include <zlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ELASTIC_CRC32_CLMUL 1
#endif

namespace elastic::agent::checkpoint {
namespace {

// Payloads past 2 GiB must combine correctly; z_off_t is `long`, 64-bit on LP64 Linux.
static_assert(sizeof(z_off_t) >= 8, "zlib's z_off_t must be 64-bit for multi-GiB records");

#ifdef ELASTIC_CRC32_CLMUL

#define ELASTIC_CLMUL_TARGET __attribute__((target("pclmul,sse4.1"), always_inline)) inline

ELASTIC_CLMUL_TARGET __m128i Load(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// One fold step: `lane` times x^k (mod P), its two 64-bit halves multiplied separately, xor the
// next 16 bytes of data.
ELASTIC_CLMUL_TARGET __m128i Fold(__m128i lane, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x11), next),
                       _mm_clmulepi64_si128(lane, k, 0x00));
}

// Folds `size` bytes (a multiple of 16, at least 64) into the CRC register `reg` (the inverted
// running CRC) and returns the new register. Four 128-bit lanes are folded 64 bytes at a time,
// then into one lane, then reduced to 32 bits by Barrett reduction. The constants are the
// bit-reflected x^k mod P(x) values of the paper for P = 0x104C11DB7 (k1..k5) and the Barrett
// pair (P', mu).
__attribute__((target("pclmul,sse4.1"))) std::uint32_t FoldBlocks(std::uint32_t reg,
                                                                  const unsigned char* data,
                                                                  std::size_t size) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
  const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
  __m128i x1 = _mm_xor_si128(Load(data), _mm_cvtsi32_si128(static_cast<int>(reg)));
  __m128i x2 = Load(data + 16), x3 = Load(data + 32), x4 = Load(data + 48);
  data += 64;
  size -= 64;
  for (; size >= 64; data += 64, size -= 64) {
    x1 = Fold(x1, k1k2, Load(data));
    x2 = Fold(x2, k1k2, Load(data + 16));
    x3 = Fold(x3, k1k2, Load(data + 32));
    x4 = Fold(x4, k1k2, Load(data + 48));
  }
  x1 = Fold(Fold(Fold(x1, k3k4, x2), k3k4, x3), k3k4, x4);
  for (; size >= 16; data += 16, size -= 16) x1 = Fold(x1, k3k4, Load(data));

  // 128 -> 64 bits, then 64 -> 32 bits.
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k3k4, 0x10));
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5k0, 0x00),
                     _mm_srli_si128(x1, 4));
  // Barrett reduction.
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), poly, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(x1, t), 1));
}

bool DetectClmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

#endif

// Below this the fold's setup and final reduction cost more than zlib's table loop.
constexpr std::size_t kMinClmulSize = 64;

}  // namespace

std::uint32_t Crc32Portable(std::uint32_t crc, const void* data, std::size_t size) {
  return static_cast<std::uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(size)));
}

bool Crc32UsesClmul() {
#ifdef ELASTIC_CRC32_CLMUL
  static const bool available = DetectClmul();
  return available;
#else
  return false;
#endif
}

std::uint32_t Crc32(std::uint32_t crc, const void* data, std::size_t size) {
#ifdef ELASTIC_CRC32_CLMUL
  if (size >= kMinClmulSize && Crc32UsesClmul()) {
    const std::size_t blocks = size & ~std::size_t{15};
    const auto* bytes = static_cast<const unsigned char*>(data);
    crc = ~FoldBlocks(~crc, bytes, blocks);
    return Crc32Portable(crc, bytes + blocks, size - blocks);
  }
#endif
  return Crc32Portable(crc, data, size);
}

std::uint32_t Crc32Combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t size_b) {
  return static_cast<std::uint32_t>(crc32_combine(crc_a, crc_b, static_cast<z_off_t>(size_b)));
}

}  // namespace elastic::agent::checkpoint
