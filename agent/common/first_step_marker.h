// The line rank 0 of `elastic-agent train` prints once per launch after its first step; the
// supervisor (`elastic-agent run`) takes a resize's pause to end there. Torch-free.
#pragma once

namespace elastic::agent {

// Followed by the step number.
inline constexpr const char kFirstStepMarker[] = "elastic-agent: first step done step=";

}  // namespace elastic::agent
