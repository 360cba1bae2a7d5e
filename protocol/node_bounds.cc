// ParseNodeBounds / ParseRecordedClass: fields of an "elastic:" AdminComment.
#include "protocol/node_bounds.h"

#include <charconv>
#include <string_view>

namespace elastic::daemon {
namespace {

std::optional<int> ParseInt(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The value of the first "key=" field of an "elastic:" comment; nullopt if there is none.
std::optional<std::string_view> RecordField(std::string_view comment, std::string_view key) {
  constexpr std::string_view kPrefix = "elastic:";
  if (comment.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  comment.remove_prefix(kPrefix.size());
  while (!comment.empty()) {
    const std::size_t comma = comment.find(',');
    std::string_view field = comment.substr(0, comma);
    comment = comma == std::string_view::npos ? std::string_view() : comment.substr(comma + 1);
    if (field.size() > key.size() && field.substr(0, key.size()) == key &&
        field[key.size()] == '=') {
      return field.substr(key.size() + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<NodeBounds> ParseNodeBounds(std::string_view comment) {
  std::optional<std::string_view> field = RecordField(comment, "nodes");
  if (!field) return std::nullopt;
  const std::size_t slash = field->find('/'), dash = field->find('-', slash);
  if (slash == std::string_view::npos || dash == std::string_view::npos) return std::nullopt;
  auto min = ParseInt(field->substr(slash + 1, dash - slash - 1));
  auto max = ParseInt(field->substr(dash + 1));
  if (!min || !max || *min < 1 || *max < *min) return std::nullopt;
  return NodeBounds{*min, *max};
}

std::optional<SlaClass> ParseRecordedClass(std::string_view comment) {
  std::optional<std::string_view> field = RecordField(comment, "class");
  if (!field) return std::nullopt;
  Result<SlaClass> sla_class = ParseSlaClass(*field);
  if (!sla_class) return std::nullopt;
  return *sla_class;
}

}  // namespace elastic::daemon
