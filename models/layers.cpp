// parsim models/ — per-layer kinds: "what is layer i" (dense or MoE FFN; full, sliding-window or latent attention).
#include "models/model.hpp"
#include "sim/core/error.hpp"

namespace parsim {

std::string to_string(AttentionKind k) {
  switch (k) {
    case AttentionKind::Full: return "full";
    case AttentionKind::Sliding: return "sliding";
    case AttentionKind::Chunked: return "chunked";
    case AttentionKind::MLA: return "mla";
    case AttentionKind::Mamba: return "mamba";
    case AttentionKind::None: return "none";
  }
  return "?";
}

std::string to_string(FfnKind k) {
  switch (k) {
    case FfnKind::Dense: return "dense";
    case FfnKind::MoE: return "moe";
    case FfnKind::None: return "none";
  }
  return "?";
}

LayerKind ModelSpec::uniform_kind() const {
  LayerKind k;
  k.attention = mla ? AttentionKind::MLA : (sliding_window > 0 ? AttentionKind::Sliding : AttentionKind::Full);
  k.ffn = is_moe() ? FfnKind::MoE : FfnKind::Dense;
  return k;
}

namespace {
void check_range(const ModelSpec& m, int first, int last) {
  if (first >= 0 && first <= last && last <= m.layers) return;  // (no message built on the hot path)
  throw InputError("layer range [" + std::to_string(first) + ", " + std::to_string(last) + ") is outside the " +
                   std::to_string(m.layers) + " layers of model '" + m.name + "'");
}
}  // namespace

LayerKind ModelSpec::layer(int i) const {
  if (i < 0 || i >= layers)
    throw InputError("layer index " + std::to_string(i) + " is outside the " + std::to_string(layers) +
                     " layers of model '" + name + "'");
  if (layer_kinds.empty()) return uniform_kind();
  return layer_kinds[static_cast<std::size_t>(i)];
}

std::vector<LayerKind> ModelSpec::mtp_module_kinds() const {
  if (!mtp_kinds.empty()) return mtp_kinds;
  return {layer(layers - 1)};
}

bool ModelSpec::uniform_layers() const {
  for (const LayerKind& k : layer_kinds)
    if (!(k == layer_kinds.front())) return false;
  return true;
}

int ModelSpec::count_layers(LayerKind k, int first, int last) const {
  if (last < 0) last = layers;
  check_range(*this, first, last);
  if (layer_kinds.empty()) return k == uniform_kind() ? last - first : 0;
  int n = 0;
  for (int i = first; i < last; ++i) n += layer_kinds[static_cast<std::size_t>(i)] == k ? 1 : 0;
  return n;
}

std::vector<std::pair<LayerKind, int>> ModelSpec::layer_kind_counts(int first, int last) const {
  if (last < 0) last = layers;
  check_range(*this, first, last);
  std::vector<std::pair<LayerKind, int>> out;
  if (layer_kinds.empty()) {
    if (last > first) out.emplace_back(uniform_kind(), last - first);
    return out;
  }
  for (int i = first; i < last; ++i) {
    const LayerKind k = layer_kinds[static_cast<std::size_t>(i)];
    bool found = false;
    for (auto& [kind, n] : out) {
      if (kind == k) {
        ++n;
        found = true;
        break;
      }
    }
    if (!found) out.emplace_back(k, 1);
  }
  return out;
}

HybridCounts hybrid_counts(const ModelSpec& m) {
  HybridCounts c;
  for (const auto& [k, n] : m.layer_kind_counts()) {
    if (k.blocks() < 2 || k.attention == AttentionKind::Mamba) c.hybrid = true;
    if (k.attention == AttentionKind::Mamba) c.mamba += n;
    if (k.has_attention()) c.attention += n;
    if (k.ffn == FfnKind::Dense) c.mlp += n;
    if (k.ffn == FfnKind::MoE) c.moe += n;
  }
  if (!c.hybrid) c = HybridCounts{};
  return c;
}

LayerKind representative_kind(const ModelSpec& m) {
  if (m.layer_kinds.empty()) return m.uniform_kind();
  LayerKind k = m.layer(0);
  bool mixed_attention = false;
  for (int i = 1; i < m.layers; ++i) {
    const LayerKind li = m.layer(i);
    if (li.ffn != k.ffn)
      throw InputError("model '" + m.name + "' mixes " +
                       (li.has_ffn() && k.has_ffn() ? std::string("dense and mixture-of-experts layers")
                                                    : std::string("layers with and without an FFN")) +
                       " (layer 0 " + to_string(k.ffn) + ", layer " + std::to_string(i) + " " + to_string(li.ffn) +
                       "): its work, memory and parameters differ from layer to layer and need the per-layer-kind "
                       "model (layers are not all alike)");
    if (li.attention != k.attention) {
      // Full and Sliding layers share every shape; any other difference (latent vs Mamba vs none) is a different layer.
      const bool softmax = li.has_attention() && k.has_attention() && li.attention != AttentionKind::MLA &&
                           k.attention != AttentionKind::MLA;
      if (!softmax)
        throw InputError("model '" + m.name + "' mixes layer kinds (layer 0 " + to_string(k.attention) + " mixer, layer " +
                         std::to_string(i) + " " + to_string(li.attention) +
                         "): its work, memory and parameters differ from layer to layer and need the per-layer-kind "
                         "model (layers are not all alike)");
      mixed_attention = true;
    }
  }
  // Full and Sliding layers share every shape; only the attention core differs. Count all of them as Full.
  if (mixed_attention) k.attention = AttentionKind::Full;
  return k;
}

}  // namespace parsim
