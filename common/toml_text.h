// A config file's text, and the keys of a TOML table whose key names are the user's own
// (elasticd.toml [quotas]: one key per Slurm account), to read each through TomlReader's typed
// getters. Apart from TomlReader so that its header, which nearly every agent file includes,
// stays small.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace elastic {

// The whole file; throws ConfigError naming the path and errno's reason when it cannot be read.
std::string ReadConfigFile(const std::string& path);

// Keys of table `table` (a top-level name such as "quotas") in `text`, sorted; empty when the
// table is absent. Sub-tables count as keys too (the typed getter then refuses their type).
// REQUIRES: `text` parses as TOML (TomlReader::FromString accepted it).
std::vector<std::string> TomlTableKeys(std::string_view text, std::string_view table);
// Whether `text` has a top-level key or table `table`.
bool TomlHasTable(std::string_view text, std::string_view table);

}  // namespace elastic
