// The "meta" record (record 0 of every checkpoint): the step and the config fingerprint as text,
// one key=value per line, so `strings ckpt-*.elck | head` shows what a checkpoint is for.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "agent/checkpoint/fingerprint.h"

namespace elastic::agent::checkpoint {

struct Meta {
  std::uint64_t step = 0;
  Fingerprint fingerprint;
};

// step=<N>\n then fingerprint.<key>=<value>\n per entry, in the fingerprint's order.
std::string EncodeMeta(const Meta& meta);

// Throws CheckpointError (without a path; the reader adds it) when a line is malformed or the
// step is missing. Lines with other keys are skipped: a later writer may add keys that an older
// reader can ignore; a change older readers must not ignore bumps kFormatVersion instead.
Meta DecodeMeta(std::string_view text);

}  // namespace elastic::agent::checkpoint
