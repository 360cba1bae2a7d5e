// A tensor shape as the agent's messages and checkpoint fingerprints spell it: "[2, 3]".
// Header-only over c10's ArrayRef (no LibTorch tensor headers).
#pragma once

#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <string>

namespace elastic::agent {

inline std::string ShapeText(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(sizes[i]);
  }
  return text + "]";
}

}  // namespace elastic::agent
