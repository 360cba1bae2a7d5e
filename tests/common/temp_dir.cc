// TempDir: mkdtemp under $TMPDIR, recursive removal on destruction.
#include "tests/common/temp_dir.h"

#include <stdlib.h>

#include <fstream>
#include <stdexcept>
#include <vector>

namespace elastic::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "elastic-test-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path TempDir::Write(const std::string& name, const std::string& content) const {
  std::filesystem::path file = path_ / name;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + file.string());
  return file;
}

}  // namespace elastic::testing
