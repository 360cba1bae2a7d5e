// TomlReader on top of toml++ (kept out of the header: it is heavy to compile).
#include "common/toml_reader.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/duration.h"
#include "common/toml_text.h"

namespace elastic {

struct TomlReader::Impl {
  std::string source_name;
  toml::table root;
  std::set<std::string, std::less<>> consumed;
};

namespace {

std::string Where(const std::string& source, const toml::node* node) {
  std::string where = source;
  if (node != nullptr && node->source().begin.line > 0) {
    where += ":" + std::to_string(node->source().begin.line);
  }
  return where;
}

void CollectLeaves(const toml::table& table, const std::string& prefix,
                   std::vector<std::pair<std::string, const toml::node*>>& out) {
  for (const auto& [key, node] : table) {
    std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table()) {
      CollectLeaves(*sub, path, out);
    } else {
      out.emplace_back(path, &node);
    }
  }
}

}  // namespace

TomlReader::TomlReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TomlReader::TomlReader(TomlReader&&) noexcept = default;
TomlReader& TomlReader::operator=(TomlReader&&) noexcept = default;
TomlReader::~TomlReader() = default;

TomlReader TomlReader::FromString(std::string_view text, std::string source_name) {
  auto impl = std::make_unique<Impl>();
  impl->source_name = std::move(source_name);
  try {
    impl->root = toml::parse(text, impl->source_name);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << impl->source_name << ":" << e.source().begin.line << ": invalid TOML: "
        << e.description();
    throw ConfigError(msg.str());
  }
  return TomlReader(std::move(impl));
}

TomlReader TomlReader::FromFile(const std::string& path) {
  return FromString(ReadConfigFile(path), path);
}

const std::string& TomlReader::source_name() const { return impl_->source_name; }

void TomlReader::Fail(std::string_view key, std::string_view problem) const {
  const toml::node* node = impl_->root.at_path(key).node();
  throw ConfigError(Where(impl_->source_name, node) + ": " + std::string(key) + ": " +
                    std::string(problem));
}

std::optional<std::string> TomlReader::String(std::string_view key) {
  impl_->consumed.emplace(key);
  auto view = impl_->root.at_path(key);
  if (!view) return std::nullopt;
  if (!view.is_string()) Fail(key, "expected a string");
  return std::string(*view.value<std::string_view>());
}

std::optional<std::int64_t> TomlReader::Integer(std::string_view key, std::int64_t min,
                                                std::int64_t max) {
  impl_->consumed.emplace(key);
  auto view = impl_->root.at_path(key);
  if (!view) return std::nullopt;
  if (!view.is_integer()) Fail(key, "expected an integer from " + std::to_string(min) + " to " +
                                        std::to_string(max));
  std::int64_t value = *view.value<std::int64_t>();
  if (value < min || value > max) {
    Fail(key, "invalid value " + std::to_string(value) + ": expected an integer from " +
                  std::to_string(min) + " to " + std::to_string(max));
  }
  return value;
}

std::optional<double> TomlReader::Double(std::string_view key, double min, double max) {
  impl_->consumed.emplace(key);
  auto view = impl_->root.at_path(key);
  if (!view) return std::nullopt;
  if (!view.is_number()) Fail(key, "expected a number");
  double value = *view.value<double>();
  if (!std::isfinite(value) || value < min || value > max) {
    std::ostringstream msg;
    msg << "invalid value " << value << ": expected a number from " << min << " to " << max;
    Fail(key, msg.str());
  }
  return value;
}

std::optional<bool> TomlReader::Bool(std::string_view key) {
  impl_->consumed.emplace(key);
  auto view = impl_->root.at_path(key);
  if (!view) return std::nullopt;
  if (!view.is_boolean()) Fail(key, "expected true or false");
  return *view.value<bool>();
}

std::optional<std::chrono::milliseconds> TomlReader::Duration(std::string_view key) {
  auto text = String(key);
  if (!text) return std::nullopt;
  auto value = ParseDuration(*text);
  if (!value) {
    Fail(key, "invalid duration \"" + *text + "\": expected a whole number with ms, s, m or h "
              "(e.g. \"30s\")");
  }
  return value;
}

std::optional<std::vector<std::int64_t>> TomlReader::IntegerArray(std::string_view key,
                                                                  std::int64_t min,
                                                                  std::int64_t max) {
  impl_->consumed.emplace(key);
  auto view = impl_->root.at_path(key);
  if (!view) return std::nullopt;
  const std::string expected =
      "expected an array of integers from " + std::to_string(min) + " to " + std::to_string(max);
  const toml::array* array = view.as_array();
  if (array == nullptr) Fail(key, expected);
  std::vector<std::int64_t> values;
  for (const toml::node& item : *array) {
    if (!item.is_integer()) Fail(key, expected);
    const std::int64_t value = *item.value<std::int64_t>();
    if (value < min || value > max) {
      Fail(key, "invalid value " + std::to_string(value) + " at index " +
                    std::to_string(values.size()) + ": " + expected);
    }
    values.push_back(value);
  }
  return values;
}

void TomlReader::RejectUnknownKeys() const {
  std::vector<std::pair<std::string, const toml::node*>> leaves;
  CollectLeaves(impl_->root, "", leaves);
  // toml++ tables iterate in key order; report in file order so the first typo is named first.
  std::stable_sort(leaves.begin(), leaves.end(), [](const auto& a, const auto& b) {
    return a.second->source().begin.line < b.second->source().begin.line;
  });
  for (const auto& [path, node] : leaves) {
    if (!impl_->consumed.contains(path)) {
      throw ConfigError(Where(impl_->source_name, node) + ": " + path +
                        ": unknown key (check the spelling and the section it is in)");
    }
  }
}

}  // namespace elastic
