// Background work in a rank's idle slots (DeepPool §4-§5): while a burst-parallel rank waits for
// a block it is not part of, it runs pieces of a background job, but only pieces predicted to end
// before the wait does, so the foreground job is delayed by mispredictions only.
//
// The rank's host thread calls Wait(slot, ready) where it would block on a message; ready() polls
// it (MPI_Iprobe). Between polls, a background piece starts when
//   elapsed + median(piece durations) <= median(idle at this slot)
// (DeepPool's launch pacing in time rather than in queued launches: a piece, once started, is
// not preempted, like a GPU kernel). The idle time at a slot is learnt from earlier waits there,
// conservatively: a wait that ended during a piece counts only up to that piece's start, so a
// piece that overran never makes the prediction longer. A slot seen for the first time only
// learns; a piece of unknown duration starts once, to be measured, whenever the slot's wait
// was ever nonzero.
//
// Pure of devices and threads: time comes from the injected Clock; the work is an interface.
// Not thread-safe: one host thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>

#include "agent/multiplex/clock.h"

namespace elastic::agent::multiplex {

// A background job cut into pieces that run on the waiting thread.
class BackgroundWork {
 public:
  virtual ~BackgroundWork() = default;
  // False once the job has nothing left to run (it reached its own end).
  virtual bool HasWork() const = 0;
  // Runs the next piece to completion. Exceptions propagate to Wait's caller.
  virtual void RunPiece() = 0;
};

struct IdleFillerOptions {
  std::size_t window = 8;  // samples kept per slot and of piece durations (sliding medians)
};

struct IdleFillerStats {
  std::uint64_t waits = 0;   // calls to Wait
  std::uint64_t pieces = 0;  // background pieces run
  Duration waited{};         // time spent in Wait, pieces included
  Duration background{};     // of which running pieces
  // Time pieces ran past the moment ready() would have been seen without them (an upper bound:
  // the message may have arrived any time during the piece).
  Duration overrun{};
};

class IdleFiller {
 public:
  IdleFiller(BackgroundWork& work, const Clock& clock, IdleFillerOptions options = {});

  // Returns once ready() is true, having run background pieces while it was predicted safe.
  // `slot` names the wait (e.g. "fwd.2"): waits with one name should take similar time.
  void Wait(const std::string& slot, const std::function<bool()>& ready);

  const IdleFillerStats& stats() const { return stats_; }

 private:
  bool ShouldStartPiece(const std::deque<Duration>& idle, Duration elapsed) const;

  BackgroundWork& work_;
  const Clock& clock_;
  IdleFillerOptions options_;
  std::map<std::string, std::deque<Duration>> idle_;  // per slot: learnt idle times
  std::deque<Duration> pieces_;                       // recent piece durations
  IdleFillerStats stats_;
};

}  // namespace elastic::agent::multiplex
