// IdleFiller: the pacing rule and the conservative idle-time learning described in the header.
#include "agent/multiplex/idle_filler.h"

#include "agent/multiplex/duration_window.h"

namespace elastic::agent::multiplex {

IdleFiller::IdleFiller(BackgroundWork& work, const Clock& clock, IdleFillerOptions options)
    : work_(work), clock_(clock), options_(options) {}

bool IdleFiller::ShouldStartPiece(const std::deque<Duration>& idle, Duration elapsed) const {
  if (idle.empty() || !work_.HasWork()) return false;  // a new slot only learns
  const Duration predicted = MedianOf(idle);
  if (pieces_.empty()) return predicted > Duration::zero();  // measure a piece once
  return elapsed + MedianOf(pieces_) <= predicted;
}

void IdleFiller::Wait(const std::string& slot, const std::function<bool()>& ready) {
  std::deque<Duration>& idle = idle_[slot];
  const TimePoint start = clock_.Now();
  ++stats_.waits;
  // The last moment the wait was known to go on: ready() was false then.
  TimePoint known_waiting = start;
  bool filled_last = false;
  TimePoint piece_start{};
  while (true) {
    const TimePoint polled = clock_.Now();
    if (ready()) {
      if (filled_last) stats_.overrun += polled - piece_start;
      break;
    }
    known_waiting = polled;
    filled_last = false;
    if (!ShouldStartPiece(idle, polled - start)) continue;
    piece_start = clock_.Now();
    work_.RunPiece();
    const Duration ran = clock_.Now() - piece_start;
    PushWindowed(pieces_, ran, options_.window);
    ++stats_.pieces;
    stats_.background += ran;
    filled_last = true;
  }
  // A wait that ended during a piece is known only to have lasted until the piece started.
  PushWindowed(idle, (filled_last ? piece_start : known_waiting) - start, options_.window);
  stats_.waited += clock_.Now() - start;
}

}  // namespace elastic::agent::multiplex
