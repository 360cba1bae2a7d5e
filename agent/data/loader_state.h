// The "loader" checkpoint record: the state of the shared data-loading queue (EasyScale §3.2,
// Fig. 7's queueing buffer) at a step boundary, per EST: its data stream and the mini-batches
// dispatched to the loaders but not yet consumed, so a resume on any W rebuilds exactly those
// batches and continues each stream where it was (docs/checkpoint-format.md). Torch-free, pure.
//
// Text, one item a line, ESTs in id order, each EST's pending batches after it in step order:
//   loader=1
//   step=12
//   augment=flip
//   est=0 stream=9e3779b97f4a7c15
//   pending=12 3 0123456789abcdef        (step, epoch, batch seed in hex)
//   est=1 stream=...
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace elastic::agent {

inline constexpr std::string_view kLoaderRecordName = "loader";
inline constexpr int kLoaderRecordVersion = 1;

// A mini-batch whose seed was drawn from its EST's stream but which no EST has consumed yet.
struct PendingBatch {
  std::int64_t step = 0;
  std::int64_t epoch = 0;  // step / steps per epoch: stored so a record of another dataset fails
  std::uint64_t seed = 0;
  bool operator==(const PendingBatch&) const = default;
};

struct EstLoaderState {
  std::int64_t est = 0;
  std::uint64_t stream = 0;  // EstDataStream state after the last dispatched batch
  std::vector<PendingBatch> pending;
  bool operator==(const EstLoaderState&) const = default;
};

// The "est=" and "pending=" lines of some ESTs (a rank's hosted block, in id order).
std::string EncodeEstLoaderLines(std::span<const EstLoaderState> ests);

// The whole record: the header lines, then `est_lines` (every EST's, in id order).
std::string EncodeLoaderRecord(std::int64_t step, std::string_view augment,
                               std::string_view est_lines);

// What a record must agree with to be used by this run.
struct LoaderExpectations {
  std::int64_t step = 0;  // the checkpoint's step: the first batch not consumed by any EST
  std::int64_t ests = 0;
  std::int64_t steps_per_epoch = 1;
  std::string_view augment;
};

// Parses `text` into one state per EST (id order) and checks it against `expected`: the
// version, the step, the augmentation, every EST exactly once in order, pending batches that
// start at the step and follow each other with the right epochs. Returns "" on success, else
// what is wrong (for an error message naming the checkpoint), leaving `out` unspecified.
std::string DecodeLoaderRecord(std::string_view text, const LoaderExpectations& expected,
                               std::vector<EstLoaderState>* out);

}  // namespace elastic::agent
