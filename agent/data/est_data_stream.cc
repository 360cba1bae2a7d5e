// EstDataStream: per-EST seeding and the SplitMix64 step.
#include "agent/data/est_data_stream.h"

#include <random>

namespace elastic::agent {
namespace {

// Distinguishes the data streams from the EST compute streams ("EST\0", est_context.cc) and
// the sample order, which seed_seq also derives from the job seed.
constexpr std::uint32_t kDataStreamTag = 0x44415441;  // "DATA"

}  // namespace

EstDataStream EstDataStream::ForEst(std::uint64_t job_seed, std::int64_t est_id) {
  const auto id = static_cast<std::uint64_t>(est_id);
  std::seed_seq seq{static_cast<std::uint32_t>(job_seed),
                    static_cast<std::uint32_t>(job_seed >> 32), static_cast<std::uint32_t>(id),
                    static_cast<std::uint32_t>(id >> 32), kDataStreamTag};
  std::uint32_t words[2];
  seq.generate(words, words + 2);
  return EstDataStream((static_cast<std::uint64_t>(words[1]) << 32) | words[0]);
}

std::uint64_t EstDataStream::Next() {
  std::uint64_t z = (state_ += kGamma);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace elastic::agent
