// A node's GPU count and type from its Slurm gres string (node_info_t::gres): elasticd counts devices per
// node, one training rank per GPU, and a node without GPUs as one device (its CPUs).
// Pure: no libslurm call, so it is tested on plain strings.
// Error model: nothing here fails or throws; text that is not a gres list Slurm would print
// (bad counts, unbalanced parentheses, empty fields) yields nullopt from ParseGpuCount, and
// NodeDevices falls back to one device for it: a node is never shown as more than it surely is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace elastic::slurm {

// More GPUs than this on one node is taken for corrupt text (the fallback), not believed.
inline constexpr int kMaxGpusPerNode = 1024;

// The GPUs a gres string lists, summed over its "gpu" entries: "gpu:4" and "gpu:a100:4(S:0-1)"
// -> 4, "gpu:a100:2,gpu:v100:2" -> 4, "gpu" or "gpu:a100" -> 1 (Slurm's implied count),
// "mps:100" or "" -> 0 (other gres are ignored). nullopt when the text is malformed anywhere or
// the total exceeds kMaxGpusPerNode.
std::optional<int> ParseGpuCount(std::string_view gres);

// The type of the node's first typed GPU entry ("gpu:a100:4(S:0-1)" -> "a100"), "" for untyped
// GPUs, no GPUs or malformed text. A node type for elasticd's [node_types] (node_types.h).
std::string GpuType(std::string_view gres);

// Devices elasticd counts on a node: its GPUs, else 1 (no GPU gres, "(null)", null or
// malformed text).
int NodeDevices(const char* gres);

}  // namespace elastic::slurm
