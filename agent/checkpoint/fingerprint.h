// Fingerprint: the settings a checkpoint is only valid for (model, ests, global_batch, seed,
// determinism, parameter shapes, ...), stored in the "meta" record so that resuming with an
// incompatible config is refused with a message saying what differs.
// Value type, not thread-safe; Add throws CheckpointError on a malformed or repeated key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace elastic::agent {

class Fingerprint {
 public:
  using Entry = std::pair<std::string, std::string>;

  // Keys are 1..255 bytes of printable ASCII without spaces or '='; values may be any text
  // without a line break ("[32, 1, 5, 5]"). Order is kept: messages list keys as added.
  void Add(std::string key, std::string value);

  const std::vector<Entry>& entries() const { return entries_; }
  std::optional<std::string> Find(std::string_view key) const;

  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;

 private:
  std::vector<Entry> entries_;
};

// "" when `saved` and `current` agree on every key, else one line naming every key that differs
// (a key only one side has shows "<unset>" on the other):
//   checkpoint was written for ests=8 seed=1, this run has ests=4 seed=2
std::string DescribeMismatch(const Fingerprint& saved, const Fingerprint& current);

}  // namespace elastic::agent
