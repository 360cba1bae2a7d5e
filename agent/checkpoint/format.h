// Byte layout of a checkpoint file (docs/checkpoint-format.md): constants, little-endian coding,
// record-name rules and the ckpt-<step>.elck file names. Pure: no I/O, nothing throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace elastic::agent::checkpoint {

// File header: the magic, then the format version (u32). The magic never changes; a reader
// refuses versions it does not know rather than guess at a layout.
inline constexpr std::string_view kMagic = "ELCKPT01";
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kFileHeaderSize = 12;

// Record header: crc u32 | payload length u64 | name length u16, then name, then payload. The CRC
// covers everything after itself up to the end of the payload, so a damaged length or name is
// caught like a damaged payload. The length is 64-bit because optimizer state outgrows 4 GiB.
inline constexpr std::size_t kRecordHeaderSize = 14;
inline constexpr std::size_t kMaxNameLength = 255;

// The end record has the empty name; its payload is the number of named records (u64) and the
// CRC of every byte before the end record (u32), so a file cut at a record boundary, or one with
// a record spliced out, is still caught.
inline constexpr std::size_t kEndPayloadSize = 12;

// Written by CheckpointWriter itself as record 0: the step and the config fingerprint.
inline constexpr std::string_view kMetaRecordName = "meta";

void PutU16(std::string* out, std::uint16_t value);
void PutU32(std::string* out, std::uint32_t value);
void PutU64(std::string* out, std::uint64_t value);
std::uint16_t GetU16(const char* bytes);
std::uint32_t GetU32(const char* bytes);
std::uint64_t GetU64(const char* bytes);

// "" when `name` may name a caller's record, else why not. Names are 1..255 bytes of printable
// ASCII without spaces ("params", "est/3"); the empty name is reserved for the end record.
std::string CheckRecordName(std::string_view name);

// Printable form of a name or value read from a file that may be corrupt: quoted, with bytes
// outside printable ASCII as \xNN, cut at 64 characters.
std::string QuoteForMessage(std::string_view bytes);

// ckpt-<step, zero-padded to 10 digits>.elck: names sort like steps up to 10^10 and a reader
// still orders by the parsed number, never by the name.
std::string CheckpointFileName(std::uint64_t step);
std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view file_name);

// A writer's temp file is <final name>.tmp-XXXXXX (mkostemp fills the X's). Anything so named
// is either being written or was left by a crash; it never counts as a checkpoint.
inline constexpr std::string_view kTempInfix = ".tmp-";
bool IsTempFileName(std::string_view file_name);

}  // namespace elastic::agent::checkpoint
