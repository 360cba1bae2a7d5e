// The text corpus the gpt model trains on: the fortune files of Debian's fortunes-min, read as
// bytes, cut into fixed-length windows with next-byte targets. Torch-free (the job config checks
// data.path with it); char_dataset.h turns the windows into tensors.
//
// Corpus: the files "fortunes", "literature" and "riddles" of data.path (fortunes-min installs
// exactly these into /usr/share/games/fortunes), concatenated in that order as they are on disk,
// "%" separator lines included. A fixed list, not "every file in the directory", so installing
// more fortune packages into the same directory does not change the dataset.
// Samples: window i is the kTextWindow bytes starting at byte i * kTextWindowStride, its target
// the kTextWindow bytes one further; every window whose target fits is a sample. Tokens are the
// bytes themselves (vocabulary 256), so no vocabulary file exists to get out of step.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace elastic::agent {

inline constexpr std::array<std::string_view, 3> kCorpusFiles = {"fortunes", "literature",
                                                                  "riddles"};
inline constexpr std::int64_t kTextWindow = 32;       // tokens per sample (the model's context)
inline constexpr std::int64_t kTextWindowStride = 8;  // bytes between consecutive windows
inline constexpr std::int64_t kTextVocabulary = 256;  // byte-level tokens

// The first corpus file missing from `dir`, or nullopt when all are there.
std::optional<std::string> MissingCorpusFile(const std::string& dir);

// The corpus bytes. Throws DataError naming the file (missing, unreadable) and the package.
std::string ReadTextCorpus(const std::string& dir);

// Start offsets of the sample windows in a corpus of `bytes` bytes (the header's rule).
std::int64_t TextWindowCount(std::int64_t bytes);

}  // namespace elastic::agent
