// ReadTextCorpus: the fortunes-min files as one byte string.
#include "agent/data/text_corpus.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "agent/common/errors.h"

namespace elastic::agent {

std::optional<std::string> MissingCorpusFile(const std::string& dir) {
  for (std::string_view name : kCorpusFiles) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / name, error)) {
      return std::string(name);
    }
  }
  return std::nullopt;
}

std::string ReadTextCorpus(const std::string& dir) {
  if (auto missing = MissingCorpusFile(dir)) {
    throw DataError(dir + ": no file " + *missing +
                    " (the gpt model's text corpus: install the Debian package fortunes-min)");
  }
  std::string corpus;
  for (std::string_view name : kCorpusFiles) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ifstream in(path, std::ios::binary);
    corpus.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) throw DataError(path + ": read error");
  }
  return corpus;
}

std::int64_t TextWindowCount(std::int64_t bytes) {
  // A window needs kTextWindow + 1 bytes: its inputs and, shifted by one, its targets.
  if (bytes < kTextWindow + 1) return 0;
  return (bytes - kTextWindow - 1) / kTextWindowStride + 1;
}

}  // namespace elastic::agent
