// Memory sizes for config files: "4096", "512K", "2.5M", "16G" (binary units, as Slurm's --mem).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace elastic {

// <number>[K|M|G|T], the number a non-negative decimal ("2.5"), the suffix case-insensitive and
// binary (K = 1024 bytes), optionally followed by "B" or "iB"; without a suffix, whole bytes.
// Rounds down to whole bytes. Returns nullopt for anything else, for 0 and beyond 2^62 bytes.
std::optional<std::int64_t> ParseByteSize(std::string_view text);

// The accepted forms, for error messages.
inline constexpr std::string_view kByteSizeForms =
    "a size in bytes, or with a K/M/G/T suffix (binary: 1K = 1024 bytes), e.g. \"2500000\", "
    "\"512K\", \"2.5M\", \"16G\"";

// "2.50 MiB"-style text for logs (bytes below 1 KiB as "N bytes").
std::string FormatByteSize(double bytes);

}  // namespace elastic
