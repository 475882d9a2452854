// parsim models/ — per-layer kinds: "what is layer i" (dense or MoE FFN; full, sliding-window or latent attention).
#include "models/model.hpp"
#include "sim/core/error.hpp"

namespace parsim {

std::string to_string(AttentionKind k) {
  switch (k) {
    case AttentionKind::Full: return "full";
    case AttentionKind::Sliding: return "sliding";
    case AttentionKind::MLA: return "mla";
  }
  return "?";
}

std::string to_string(FfnKind k) { return k == FfnKind::MoE ? "moe" : "dense"; }

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

LayerKind representative_kind(const ModelSpec& m) {
  if (m.layer_kinds.empty()) return m.uniform_kind();
  LayerKind k = m.layer(0);
  bool mixed_attention = false;
  for (int i = 1; i < m.layers; ++i) {
    const LayerKind li = m.layer(i);
    if (li.ffn != k.ffn)
      throw InputError("model '" + m.name + "' mixes dense and mixture-of-experts layers (layer 0 " + to_string(k.ffn) +
                       ", layer " + std::to_string(i) + " " + to_string(li.ffn) +
                       "): its work, memory and parameters differ from layer to layer and need the per-layer-kind "
                       "model (layers are not all alike)");
    if (li.attention != k.attention) mixed_attention = true;
  }
  // Full and Sliding layers share every shape; only the attention core differs. Count all of them as Full.
  if (mixed_attention) k.attention = AttentionKind::Full;
  return k;
}

}  // namespace parsim
