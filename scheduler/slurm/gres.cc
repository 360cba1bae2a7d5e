// Gres string -> GPU count (see gres.h).
#include "scheduler/slurm/gres.h"

#include <charconv>
#include <cstddef>
#include <vector>

namespace elastic::slurm {
namespace {

// Splits on commas outside parentheses: a socket list such as "(S:0,2)" may hold commas.
// nullopt for unbalanced or nested parentheses.
std::optional<std::vector<std::string_view>> SplitEntries(std::string_view gres) {
  std::vector<std::string_view> entries;
  std::size_t start = 0;
  bool open = false;
  for (std::size_t i = 0; i < gres.size(); ++i) {
    const char c = gres[i];
    if (c == '(' || c == ')') {
      if (open == (c == '(')) return std::nullopt;
      open = c == '(';
    } else if (c == ',' && !open) {
      entries.push_back(gres.substr(start, i - start));
      start = i + 1;
    }
  }
  if (open) return std::nullopt;
  entries.push_back(gres.substr(start));
  return entries;
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

bool IsWord(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsWordChar(c)) return false;
  }
  return true;
}

std::optional<int> ParseCount(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// The colon-separated fields of one entry "name[:type...][:count][(suffix)]", suffix dropped;
// nullopt when malformed (text after the suffix, an empty field, a stray character).
std::optional<std::vector<std::string_view>> EntryFields(std::string_view entry) {
  const std::size_t paren = entry.find('(');
  if (paren != std::string_view::npos) {
    if (entry.back() != ')') return std::nullopt;  // text after the suffix
    entry = entry.substr(0, paren);
  }
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t colon = entry.find(':', start);
    fields.push_back(entry.substr(start, colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  for (std::string_view field : fields) {
    if (!IsWord(field)) return std::nullopt;
  }
  return fields;
}

bool IsCount(std::string_view field) {
  return field.find_first_not_of("0123456789") == std::string_view::npos;
}

// The GPUs of one entry: 0 for another gres, nullopt when malformed. A non-numeric last field
// is a type (Slurm's implied count of 1).
std::optional<int> EntryGpus(std::string_view entry) {
  std::optional<std::vector<std::string_view>> fields = EntryFields(entry);
  if (!fields) return std::nullopt;
  if (fields->front() != "gpu") return 0;
  if (fields->size() == 1) return 1;
  return IsCount(fields->back()) ? ParseCount(fields->back()) : std::optional<int>(1);
}

}  // namespace

std::optional<int> ParseGpuCount(std::string_view gres) {
  if (gres.empty() || gres == "(null)") return 0;
  auto entries = SplitEntries(gres);
  if (!entries) return std::nullopt;
  int total = 0;
  for (std::string_view entry : *entries) {
    std::optional<int> gpus = EntryGpus(entry);
    if (!gpus || *gpus > kMaxGpusPerNode - total) return std::nullopt;
    total += *gpus;
  }
  return total;
}

std::string GpuType(std::string_view gres) {
  if (!ParseGpuCount(gres)) return "";  // malformed anywhere: no type either
  const std::optional<std::vector<std::string_view>> entries = SplitEntries(gres);
  for (std::string_view entry : entries.value_or(std::vector<std::string_view>{})) {
    std::optional<std::vector<std::string_view>> fields = EntryFields(entry);
    if (fields && fields->front() == "gpu" && fields->size() >= 2 && !IsCount((*fields)[1])) {
      return std::string((*fields)[1]);
    }
  }
  return "";
}

int NodeDevices(const char* gres) {
  if (gres == nullptr) return 1;
  std::optional<int> gpus = ParseGpuCount(gres);
  return gpus && *gpus > 0 ? *gpus : 1;
}

}  // namespace elastic::slurm
