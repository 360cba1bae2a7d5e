// Checkpoint byte layout helpers: little-endian integers, name rules, file naming.
#include "agent/checkpoint/format.h"

#include <charconv>
#include <cstdio>

namespace elastic::agent::checkpoint {
namespace {

constexpr std::string_view kFilePrefix = "ckpt-";
constexpr std::string_view kFileSuffix = ".elck";
constexpr int kStepDigits = 10;
constexpr std::size_t kMaxQuotedLength = 64;

template <typename T>
void PutLittleEndian(std::string* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out->push_back(static_cast<char>(static_cast<unsigned char>(value >> (8 * i))));
  }
}

template <typename T>
T GetLittleEndian(const char* bytes) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return value;
}

bool IsPrintableNonSpace(char c) { return c > ' ' && c <= '~'; }

}  // namespace

void PutU16(std::string* out, std::uint16_t value) { PutLittleEndian(out, value); }
void PutU32(std::string* out, std::uint32_t value) { PutLittleEndian(out, value); }
void PutU64(std::string* out, std::uint64_t value) { PutLittleEndian(out, value); }
std::uint16_t GetU16(const char* bytes) { return GetLittleEndian<std::uint16_t>(bytes); }
std::uint32_t GetU32(const char* bytes) { return GetLittleEndian<std::uint32_t>(bytes); }
std::uint64_t GetU64(const char* bytes) { return GetLittleEndian<std::uint64_t>(bytes); }

std::string CheckRecordName(std::string_view name) {
  if (name.empty()) return "record name is empty (reserved for the end record)";
  if (name.size() > kMaxNameLength) {
    return "record name " + QuoteForMessage(name) + " is " + std::to_string(name.size()) +
           " bytes long; expected at most " + std::to_string(kMaxNameLength);
  }
  for (char c : name) {
    if (!IsPrintableNonSpace(c)) {
      return "record name " + QuoteForMessage(name) +
             " contains a space or a non-printable byte; expected printable ASCII";
    }
  }
  return "";
}

std::string QuoteForMessage(std::string_view bytes) {
  std::string out = "\"";
  for (std::size_t i = 0; i < bytes.size() && i < kMaxQuotedLength; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= ' ' && c <= '~') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (bytes.size() > kMaxQuotedLength) out += "...";
  return out + "\"";
}

std::string CheckpointFileName(std::uint64_t step) {
  std::string digits = std::to_string(step);
  if (digits.size() < kStepDigits) digits.insert(0, kStepDigits - digits.size(), '0');
  return std::string(kFilePrefix) + digits + std::string(kFileSuffix);
}

std::optional<std::uint64_t> ParseCheckpointFileName(std::string_view file_name) {
  if (file_name.size() < kFilePrefix.size() + kFileSuffix.size() ||
      !file_name.starts_with(kFilePrefix) || !file_name.ends_with(kFileSuffix)) {
    return {};
  }
  std::string_view digits = file_name.substr(
      kFilePrefix.size(), file_name.size() - kFilePrefix.size() - kFileSuffix.size());
  if (digits.empty()) return {};
  for (char c : digits) {
    if (c < '0' || c > '9') return {};
  }
  std::uint64_t step = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (error != std::errc() || end != digits.data() + digits.size()) return {};  // overflow
  return step;
}

bool IsTempFileName(std::string_view file_name) {
  std::size_t infix = file_name.find(kTempInfix);
  return infix != std::string_view::npos &&
         ParseCheckpointFileName(file_name.substr(0, infix)).has_value();
}

}  // namespace elastic::agent::checkpoint
