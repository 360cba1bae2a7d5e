// ReadConfigFile, and TomlTableKeys / TomlHasTable on toml++.
#include "common/toml_text.h"

#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/toml_reader.h"

namespace elastic {

std::string ReadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read config file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> TomlTableKeys(std::string_view text, std::string_view table) {
  std::vector<std::string> keys;
  const toml::table root = toml::parse(text);
  if (const toml::table* sub = root[table].as_table()) {
    for (const auto& [key, node] : *sub) keys.emplace_back(key.str());
  }
  return keys;
}

bool TomlHasTable(std::string_view text, std::string_view table) {
  return toml::parse(text).contains(table);
}

}  // namespace elastic
