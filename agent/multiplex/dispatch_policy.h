// Which queued piece the engine launches next: priority, launch pacing and co-location pauses.
// Pure (no threads, clocks or devices), so every rule is unit-tested on plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "agent/multiplex/piece.h"

namespace elastic::agent::multiplex {

// The mechanisms of DeepPool §5 that act at dispatch time; each can be switched off so the
// benchmark can add them one at a time (Fig. 11).
struct DispatchOptions {
  // A ready foreground piece is launched before any background piece. Off: one FIFO over all
  // jobs in submission order (what a shared driver queue does).
  bool prioritize_foreground = true;
  // Launch pacing: at most this many launched-but-unfinished pieces per job; 0 = unlimited.
  int max_outstanding_foreground = 2;
  int max_outstanding_background = 1;
  // Isolation: while a foreground piece that must run alone (hinted, or marked sensitive by the
  // slowdown feedback) is queued or running, no background piece is launched, and that piece
  // itself waits until every background piece already launched has finished.
  bool isolate_sensitive = true;
};

// What the policy sees of one job.
struct JobView {
  JobClass job_class = JobClass::kForeground;
  bool has_queued = false;       // a piece waits in the job's virtual queue
  std::uint64_t head_seq = 0;    // submission number of that piece (global order)
  bool head_isolated = false;    // that piece must run with no background piece beside it
  int outstanding = 0;           // launched, not finished
  int isolated_outstanding = 0;  // of those, pieces launched as isolated
};

// Index (into `jobs`) of the job whose head piece to launch now, or nullopt when nothing may be
// launched until some piece finishes or a new one is submitted.
std::optional<std::size_t> PickNext(const DispatchOptions& options, std::span<const JobView> jobs);

}  // namespace elastic::agent::multiplex
