// parsim hardware/presets.cpp — the built-in presets (hardware/presets/<name>.json, compiled in by
// embed_presets.cmake), names and aliases, derived fields, and the stack views of a GPU.
#include "hardware/hardware.hpp"
#include "sim/core/embedded.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace parsim::detail {
extern const EmbeddedPreset kEmbeddedPresets[];
extern const std::size_t kEmbeddedPresetCount;
}  // namespace parsim::detail

namespace parsim {

double GpuSpec::peak_flops(Precision p) const {
  switch (p) {
    case Precision::BF16: return peak_bf16;
    case Precision::FP16: return peak_fp16;
    case Precision::FP32: return peak_fp32;
    case Precision::FP8:
      if (!has_fp8())
        throw InputError("GPU '" + name + "' has no fp8 tensor cores: use --precision bf16, or a GPU with fp8 "
                         "(h100, h200, b200, mi300x, …)");
      return peak_fp8;
  }
  return peak_bf16;
}

const LinkTier& NodeSpec::scale_up() const {
  if (tiers.empty() || tiers.front().kind != TierKind::ScaleUp)
    throw InputError("node has no scale-up (NVLink/xGMI) tier");
  return tiers.front();
}
LinkTier& NodeSpec::scale_up() { return const_cast<LinkTier&>(static_cast<const NodeSpec&>(*this).scale_up()); }
const LinkTier* NodeSpec::scale_out() const {
  for (const auto& t : tiers)
    if (t.kind == TierKind::ScaleOut) return &t;
  return nullptr;
}
LinkTier* NodeSpec::scale_out() { return const_cast<LinkTier*>(static_cast<const NodeSpec&>(*this).scale_out()); }
const LinkTier& NodeSpec::inter() const {
  if (const LinkTier* t = scale_out()) return *t;
  throw InputError("node has no scale-out (NIC) tier: collectives cannot span nodes");
}
LinkTier& NodeSpec::inter() { return const_cast<LinkTier&>(static_cast<const NodeSpec&>(*this).inter()); }

namespace {

struct Alias {
  const char* alias;
  const char* name;
};
constexpr Alias kAliases[] = {{"a100", "a100-80gb"}};

std::string canonical(const std::string& name) {
  std::string key = to_lower(trim(name));
  for (const Alias& a : kAliases)
    if (key == a.alias) return a.name;
  return key;
}

// The kernel profile of one stack as the active compute model: its curves, and which calibration value (or the
// profile's own override) sets the sustained fraction.
void apply_profile(ComputeModel& c, const KernelProfile& k, bool megatron) {
  c.megatron_kernels = megatron;
  c.sustained_override = k.sustained_override;
  c.attn_fwd_efficiency = k.attn_fwd_efficiency;
  c.attn_seq_half = k.attn_fwd_seq_half;
  c.attn_bwd_efficiency = k.attn_bwd_efficiency;
  c.attn_bwd_seq_half = k.attn_bwd_seq_half;
  c.attn_profile_head_dim_half = k.attn_head_dim_half;
  c.fp8_cast_bytes_per_element = k.fp8_cast_bytes_per_element;
}

}  // namespace

std::vector<std::string> hardware_preset_names() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < detail::kEmbeddedPresetCount; ++i) out.emplace_back(detail::kEmbeddedPresets[i].name);
  return out;
}

std::string hardware_preset_text(const std::string& canonical_name) {
  for (std::size_t i = 0; i < detail::kEmbeddedPresetCount; ++i)
    if (canonical_name == detail::kEmbeddedPresets[i].name) return detail::kEmbeddedPresets[i].text;
  return {};
}

bool is_hardware_preset(const std::string& name) { return !hardware_preset_text(canonical(name)).empty(); }

Hardware hardware_preset(const std::string& name) {
  const std::string key = canonical(name);
  const std::string text = hardware_preset_text(key);
  if (text.empty()) {
    std::string valid;
    for (const auto& n : hardware_preset_names()) valid += std::string(valid.empty() ? "" : ", ") + n;
    throw InputError("unknown GPU '" + name + "' (valid: " + valid + ", alias a100 = a100-80gb, or a path to a hardware "
                     "JSON file)");
  }
  return parse_hardware_json(text, "hardware/presets/" + key + ".json");
}

void finalize_hardware(Hardware& hw) {
  auto& n = hw.node;
  if (LinkTier* out = n.scale_out(); out && n.gpus_per_node > 0)
    out->bw_Bps_unidir = out->nics_per_node * out->nic_bits_per_s / 8.0 / n.gpus_per_node;
  if (auto it = hw.gpu.kernels.find("pytorch"); it != hw.gpu.kernels.end()) apply_profile(hw.gpu.compute, it->second, false);
}

Hardware hardware_for_stack(const Hardware& hw, const std::string& stack) {
  auto it = hw.gpu.kernels.find(stack);
  if (it == hw.gpu.kernels.end()) {
    std::string valid;
    for (const auto& [k, v] : hw.gpu.kernels) valid += std::string(valid.empty() ? "" : ", ") + k;
    throw InputError("hardware '" + hw.name + "' has no kernel profile for stack '" + stack + "' (valid: " + valid + ")");
  }
  Hardware h = hw;
  apply_profile(h.gpu.compute, it->second, stack == "megatron");
  return h;
}

Hardware megatron_compute(const Hardware& hw) { return hardware_for_stack(hw, "megatron"); }

Hardware legacy_compute(const Hardware& hw) {
  Hardware h = hw.gpu.kernels.count("pytorch") ? hardware_for_stack(hw, "pytorch") : hw;
  h.gpu.compute.megatron_kernels = true;
  const auto it = hw.gpu.kernels.find("megatron");
  h.gpu.compute.sustained_override = it != hw.gpu.kernels.end() ? it->second.sustained_override : 0.0;
  return h;
}

Hardware with_free_network(Hardware hw) {
  for (LinkTier& t : hw.node.tiers) {
    t.latency_s = 0;
    t.bw_Bps_unidir = 1e30;
    t.efficiency = 1;
    t.nvls = false;
    if (t.kind == TierKind::ScaleOut) t.nic_bits_per_s = 1e31;
  }
  hw.comm.model_latency = false;
  hw.gpu.compute.comm_compute_slowdown = 0;
  return hw;
}

double nic_share_Bps(const NodeSpec& node, int concurrent) {
  const LinkTier* out = node.scale_out();
  if (!out) return 0;
  const double nic_Bps = out->nic_bits_per_s / 8.0, node_Bps = out->nics_per_node * nic_Bps;
  // A GPU can drive its own NICs (node total / GPUs; several on AWS p5) or, when fewer GPUs talk, one whole NIC.
  const double own = std::max(nic_Bps, node_Bps / std::max(node.gpus_per_node, 1));
  return std::min(node_Bps / std::max(concurrent, 1), own);
}

}  // namespace parsim
