// parsim sim/core/embedded.hpp — a preset compiled into the binary (hardware/embed_presets.cmake writes the arrays:
// kEmbeddedPresets for hardware/presets, kEmbeddedModels for models/presets): its name (the file name without .json)
// and the file's text.
#pragma once
#include <cstddef>

namespace parsim::detail {
struct EmbeddedPreset {
  const char* name;
  const char* text;
};
}  // namespace parsim::detail
