// pkill/pgrep for the integration tests, run without an inherited LD_PRELOAD: contrib/sanitize.sh
// preloads the ASan runtime into every process of a cluster suite (so Slurm's daemons can load
// the ASan-built plugin), and procps' pkill/pgrep then hang in a futex before signalling anything
// (seen in the fault-injection and elasticd-restart suites). A no-op in a normal build.
#pragma once

namespace elastic::testing {

inline constexpr const char* kPkill = "env -u LD_PRELOAD pkill";
inline constexpr const char* kPgrep = "env -u LD_PRELOAD pgrep";

}  // namespace elastic::testing
