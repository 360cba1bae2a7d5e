// libFuzzer target: the checkpoint CRC-32 (carry-less multiplication path where the CPU has it)
// against zlib's, at every alignment and split the input gives, and CRC combination.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "agent/checkpoint/crc32.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ckpt = elastic::agent::checkpoint;
  if (size < 2) return 0;
  // Byte 0 picks where to split the rest, byte 1 the CRC to continue from.
  const std::size_t split = data[0] % (size - 1);
  const std::uint32_t seed = data[1] * 0x01000193u;
  const std::uint8_t* bytes = data + 2;
  const std::size_t length = size - 2;
  const std::size_t head = split < length ? split : length;

  const std::uint32_t whole = ckpt::Crc32(seed, bytes, length);
  if (whole != ckpt::Crc32Portable(seed, bytes, length)) std::abort();
  const std::uint32_t first = ckpt::Crc32(seed, bytes, head);
  if (ckpt::Crc32(first, bytes + head, length - head) != whole) std::abort();
  const std::uint32_t second = ckpt::Crc32(0, bytes + head, length - head);
  if (ckpt::Crc32Combine(first, second, length - head) != whole) std::abort();
  return 0;
}
