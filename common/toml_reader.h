// Strict TOML reading for config files: typed getters with ranges, and unknown keys are errors.
// Error model: every problem throws ConfigError whose message names file, line, key, the value
// and what was expected, e.g. `elasticd.toml:7: scheduler.policy: invalid value "x": expected …`.
// Not thread-safe; one reader per file, used once at start-up.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace elastic {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TomlReader {
 public:
  // Throws ConfigError when the file cannot be read or is not valid TOML.
  static TomlReader FromFile(const std::string& path);
  static TomlReader FromString(std::string_view text, std::string source_name);
  TomlReader(TomlReader&&) noexcept;
  TomlReader& operator=(TomlReader&&) noexcept;
  ~TomlReader();

  // Each getter returns nullopt when the key is absent and throws ConfigError when it is
  // present with the wrong type or out of range. Keys are dotted: "train.steps".
  std::optional<std::string> String(std::string_view key);
  std::optional<std::int64_t> Integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<double> Double(std::string_view key, double min, double max);
  std::optional<bool> Bool(std::string_view key);
  std::optional<std::chrono::milliseconds> Duration(std::string_view key);
  // An array of integers, each in [min, max] (e.g. train.burst_workers = [2, 1, 1, 2]).
  std::optional<std::vector<std::int64_t>> IntegerArray(std::string_view key, std::int64_t min,
                                                        std::int64_t max);

  // Throws ConfigError for the value of `key`, with its line: for checks the reader cannot do.
  [[noreturn]] void Fail(std::string_view key, std::string_view problem) const;
  // Throws ConfigError naming the first key (in file order) no getter asked for.
  void RejectUnknownKeys() const;
  const std::string& source_name() const;

 private:
  struct Impl;
  explicit TomlReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace elastic
