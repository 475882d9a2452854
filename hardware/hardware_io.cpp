// parsim hardware/hardware_io.cpp — the hardware JSON file: the compiled-in presets (hardware/presets/*.json), what
// `--gpu FILE` reads, and what `calibrate --out` writes.
//
// Schema (units in the key names; converted to SI here and nowhere else; examples/hardware/*.json):
// {
//   "name": "my-cluster",                         optional label (default: the file path)
//   "description": "...",                         optional free text, ignored
//   "base": "h100",                               optional preset to start from; then every key below is optional
//                                                 and overrides the preset. Without "base" every key is required.
//   "gpu": { "name": "...", "arch": "ampere" | "hopper" | "blackwell" | "cdna3" | "cdna4",
//            "peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops", "peak_fp16_tflops": dense TFLOP/s (> 0),
//            "peak_fp8_tflops": dense TFLOP/s, 0 = no fp8 tensor cores,
//            "hbm_gib": CUDA-visible memory in GiB (2^30 B), "hbm_bw_gbytes_per_s": HBM bandwidth in GB/s (1e9 B/s),
//            "compute": { "gemm_ceiling", "gemm_ceiling_fp8", "gemm_ceiling_fp32": fractions of peak in (0,1],
//                         "num_sms": SMs (CUs), "gemm_k_half": k, "attn_head_dim_half": head-dim units,
//                         "hbm_efficiency": (0,1], "kernel_overhead_us", "layer_overhead_us": µs (≥ 0),
//                         "comm_compute_slowdown": fraction in [0,1],
//                         "fp8_fast_accum_gain": optional (default 1), > 0: fp8 forward GEMMs (fast accumulation)
//                           over the fp8 ceiling (measured with split accumulation),
//                         "attn_causal_efficiency": optional override of calibration.json's value, (0,1],
//                         "attn_block_overhead_tiles": optional (default 0), ≥ 0: an attention kernel's fixed work per
//                           query block in key-tile iterations (what a sliding window's short key loop pays) },
//            "kernels": { "pytorch": {…}, "megatron": {…} }   one kernel profile per software stack:
//                         "attn_fwd_efficiency", "attn_bwd_efficiency": fractions in (0,1],
//                         "sustained_efficiency": optional, (0,1]: this cluster's own in-training fraction instead of
//                         calibration.json's one value per stack (no preset sets it),
//                         "attn_fwd_seq_half", "attn_bwd_seq_half": tokens (> 0),
//                         "fp8_cast_bytes_per_element": bytes (≥ 0), "collective_call_overhead_us": µs (≥ 0),
//                         "attn_head_dim_half": optional (> 0), the profile's own head-dim roll-off instead of
//                         gpu.compute's },
//   "node": { "gpus_per_node": int, "cpu_vendor": "intel" | "amd" | "arm",
//             "host_cpu": "...", "host_time_factor": host time of one op relative to the reference host (> 0; both
//             optional, default the reference x86 host, 1.0),
//             "host_link_gbytes_per_s": optional, one GPU's CPU–GPU link per direction in GB/s (> 0; absent: not
//             stated, activation offloading refused),
//             "host_memory_gbytes_per_gpu": optional, the node's host DRAM per GPU in GB (> 0; absent: not stated,
//             offloaded activations not checked against it),
//             "tiers": [ one object per network tier, matched to the base's tiers by "kind":
//               { "kind": "scale_up", "name": "nvlink4", "topology": "switch" | "full_mesh",
//                 "gbytes_per_s_unidir": per GPU per direction in GB/s (full_mesh: summed over its links),
//                 "links_per_gpu": int (full_mesh: one per peer, so ≥ gpus_per_node − 1),
//                 "efficiency": achievable ring busbw / nominal (> 0), "latency_us": extra µs per hop (≥ 0),
//                 "nvls": bool, "nvls_efficiency": > 0, "nvls_min_gpus": int },
//               { "kind": "scale_out", "name": "ib-ndr", "nics_per_node": int, "nic_gbits_per_s": per NIC in Gb/s
//                 (1e9 bit/s), "efficiency": NIC goodput / line rate (> 0), "latency_us": extra µs per network step
//                 (≥ 0), "sharp": bool (in-network reduction) } ] },
//   "collectives": { "library": "nccl" | "rccl", "protocols": ["ll", "ll128", "simple"],
//                    "algorithms": ["tree", "ring", "collnet", "nvls", "nvls_tree", "pat"],
//                    "buffsize_bytes", "nvls_chunk_bytes", "nvls_tree_chunk_bytes": bytes (> 0),
//                    "min_channels", "max_channels": int, "net_latency_us": µs the net plugin declares to NCCL's tuner
//                    (≥ 0), "gdr_flush": bool },
//   "sources": { "<field path>": "provenance", ... }   optional, string values; a number the file sets without a
//              source gets "set in hardware file '<path>'". Paths: gpu.peak_bf16_tflops, gpu.compute.num_sms,
//              gpu.kernels.megatron.sustained_efficiency, node.scale_up.efficiency, node.scale_out.nic_gbits_per_s,
//              collectives.buffsize_bytes, …
// }
// Unknown keys, wrong types and out-of-range values are InputErrors naming the file and the key. hardware_to_json
// writes the complete form (no "base"), which parse_hardware_json reads back to an identical Hardware.
#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <utility>

namespace parsim {
namespace {

using nlohmann::json;

enum class Rule { Positive, NonNegative, Fraction, UnitInterval };  // >0, ≥0, (0,1], [0,1]

// A number of one section. `ref` reaches the field inside the object the section describes (T).
template <class T>
struct NumField {
  const char* key;
  double scale;  // SI value = file value × scale
  Rule rule;
  std::function<double&(T&)> ref;
};
template <class T>
struct IntField {
  const char* key;
  int min;
  std::function<int&(T&)> ref;
};
template <class T>
struct BoolField {
  const char* key;
  std::function<bool&(T&)> ref;
};

#define PARSIM_NUM(T, key, scale, rule, expr) \
  NumField<T> { key, scale, rule, [](T& x) -> double& { return expr; } }
#define PARSIM_INT(T, key, min, expr) \
  IntField<T> { key, min, [](T& x) -> int& { return expr; } }
#define PARSIM_BOOL(T, key, expr) \
  BoolField<T> { key, [](T& x) -> bool& { return expr; } }

const std::vector<NumField<GpuSpec>>& gpu_nums() {
  static const std::vector<NumField<GpuSpec>> f = {
      PARSIM_NUM(GpuSpec, "peak_fp32_tflops", 1e12, Rule::Positive, x.peak_fp32),
      PARSIM_NUM(GpuSpec, "peak_tf32_tflops", 1e12, Rule::Positive, x.peak_tf32),
      PARSIM_NUM(GpuSpec, "peak_bf16_tflops", 1e12, Rule::Positive, x.peak_bf16),
      PARSIM_NUM(GpuSpec, "peak_fp16_tflops", 1e12, Rule::Positive, x.peak_fp16),
      PARSIM_NUM(GpuSpec, "peak_fp8_tflops", 1e12, Rule::NonNegative, x.peak_fp8),
      PARSIM_NUM(GpuSpec, "hbm_gib", kGiB, Rule::Positive, x.hbm_capacity_bytes),
      PARSIM_NUM(GpuSpec, "hbm_bw_gbytes_per_s", kGB, Rule::Positive, x.hbm_bandwidth_Bps),
  };
  return f;
}
const std::vector<NumField<ComputeModel>>& compute_nums() {
  static const std::vector<NumField<ComputeModel>> f = {
      PARSIM_NUM(ComputeModel, "gemm_ceiling", 1, Rule::Fraction, x.gemm_ceiling),
      PARSIM_NUM(ComputeModel, "gemm_ceiling_fp8", 1, Rule::Fraction, x.gemm_ceiling_fp8),
      PARSIM_NUM(ComputeModel, "gemm_ceiling_fp32", 1, Rule::Fraction, x.gemm_ceiling_fp32),
      PARSIM_NUM(ComputeModel, "gemm_k_half", 1, Rule::Positive, x.gemm_k_half),
      PARSIM_NUM(ComputeModel, "attn_head_dim_half", 1, Rule::Positive, x.attn_head_dim_half),
      PARSIM_NUM(ComputeModel, "hbm_efficiency", 1, Rule::Fraction, x.hbm_efficiency),
      PARSIM_NUM(ComputeModel, "kernel_overhead_us", 1e-6, Rule::NonNegative, x.kernel_overhead_s),
      PARSIM_NUM(ComputeModel, "layer_overhead_us", 1e-6, Rule::NonNegative, x.layer_overhead_s),
      PARSIM_NUM(ComputeModel, "comm_compute_slowdown", 1, Rule::UnitInterval, x.comm_compute_slowdown),
  };
  return f;
}
const std::vector<IntField<ComputeModel>>& compute_ints() {
  static const std::vector<IntField<ComputeModel>> f = {PARSIM_INT(ComputeModel, "num_sms", 1, x.num_sms)};
  return f;
}
const std::vector<NumField<KernelProfile>>& kernel_nums() {
  static const std::vector<NumField<KernelProfile>> f = {
      PARSIM_NUM(KernelProfile, "attn_fwd_efficiency", 1, Rule::Fraction, x.attn_fwd_efficiency),
      PARSIM_NUM(KernelProfile, "attn_fwd_seq_half", 1, Rule::Positive, x.attn_fwd_seq_half),
      PARSIM_NUM(KernelProfile, "attn_bwd_efficiency", 1, Rule::Fraction, x.attn_bwd_efficiency),
      PARSIM_NUM(KernelProfile, "attn_bwd_seq_half", 1, Rule::Positive, x.attn_bwd_seq_half),
      PARSIM_NUM(KernelProfile, "fp8_cast_bytes_per_element", 1, Rule::NonNegative, x.fp8_cast_bytes_per_element),
      PARSIM_NUM(KernelProfile, "collective_call_overhead_us", 1e-6, Rule::NonNegative, x.collective_call_overhead_s),
  };
  return f;
}
const std::vector<NumField<LinkTier>>& scale_up_nums() {
  static const std::vector<NumField<LinkTier>> f = {
      PARSIM_NUM(LinkTier, "gbytes_per_s_unidir", kGB, Rule::Positive, x.bw_Bps_unidir),
      PARSIM_NUM(LinkTier, "efficiency", 1, Rule::Positive, x.efficiency),
      PARSIM_NUM(LinkTier, "latency_us", 1e-6, Rule::NonNegative, x.latency_s),
      PARSIM_NUM(LinkTier, "nvls_efficiency", 1, Rule::Positive, x.nvls_efficiency),
  };
  return f;
}
const std::vector<IntField<LinkTier>>& scale_up_ints() {
  static const std::vector<IntField<LinkTier>> f = {PARSIM_INT(LinkTier, "links_per_gpu", 1, x.links_per_gpu),
                                                    PARSIM_INT(LinkTier, "nvls_min_gpus", 2, x.nvls_min_gpus)};
  return f;
}
const std::vector<BoolField<LinkTier>>& scale_up_bools() {
  static const std::vector<BoolField<LinkTier>> f = {PARSIM_BOOL(LinkTier, "nvls", x.nvls)};
  return f;
}
const std::vector<NumField<LinkTier>>& scale_out_nums() {
  static const std::vector<NumField<LinkTier>> f = {
      PARSIM_NUM(LinkTier, "nic_gbits_per_s", 1e9, Rule::Positive, x.nic_bits_per_s),
      PARSIM_NUM(LinkTier, "efficiency", 1, Rule::Positive, x.efficiency),
      PARSIM_NUM(LinkTier, "latency_us", 1e-6, Rule::NonNegative, x.latency_s),
  };
  return f;
}
const std::vector<IntField<LinkTier>>& scale_out_ints() {
  static const std::vector<IntField<LinkTier>> f = {PARSIM_INT(LinkTier, "nics_per_node", 1, x.nics_per_node)};
  return f;
}
const std::vector<BoolField<LinkTier>>& scale_out_bools() {
  static const std::vector<BoolField<LinkTier>> f = {PARSIM_BOOL(LinkTier, "sharp", x.sharp)};
  return f;
}
const std::vector<NumField<CollectiveLibrary>>& comm_nums() {
  static const std::vector<NumField<CollectiveLibrary>> f = {
      PARSIM_NUM(CollectiveLibrary, "buffsize_bytes", 1, Rule::Positive, x.buffsize_bytes),
      PARSIM_NUM(CollectiveLibrary, "nvls_chunk_bytes", 1, Rule::Positive, x.nvls_chunk_bytes),
      PARSIM_NUM(CollectiveLibrary, "nvls_tree_chunk_bytes", 1, Rule::Positive, x.nvls_tree_chunk_bytes),
      PARSIM_NUM(CollectiveLibrary, "net_latency_us", 1e-6, Rule::NonNegative, x.net_latency_s),
  };
  return f;
}
const std::vector<IntField<CollectiveLibrary>>& comm_ints() {
  static const std::vector<IntField<CollectiveLibrary>> f = {
      PARSIM_INT(CollectiveLibrary, "min_channels", 0, x.min_channels),
      PARSIM_INT(CollectiveLibrary, "max_channels", 1, x.max_channels)};
  return f;
}
const std::vector<BoolField<CollectiveLibrary>>& comm_bools() {
  static const std::vector<BoolField<CollectiveLibrary>> f = {PARSIM_BOOL(CollectiveLibrary, "gdr_flush", x.gdr_flush)};
  return f;
}

#undef PARSIM_NUM
#undef PARSIM_INT
#undef PARSIM_BOOL

const char* const kStacks[] = {"pytorch", "megatron"};

std::string rule_text(Rule r) {
  switch (r) {
    case Rule::Positive: return "a number > 0";
    case Rule::NonNegative: return "a number ≥ 0";
    case Rule::Fraction: return "a fraction in (0, 1]";
    case Rule::UnitInterval: return "a fraction in [0, 1]";
  }
  return "";
}
bool rule_ok(Rule r, double v) {
  if (!std::isfinite(v)) return false;
  switch (r) {
    case Rule::Positive: return v > 0;
    case Rule::NonNegative: return v >= 0;
    case Rule::Fraction: return v > 0 && v <= 1;
    case Rule::UnitInterval: return v >= 0 && v <= 1;
  }
  return false;
}

// SI → file units so that reading back (q × scale) reproduces x exactly when some neighbour of x/scale does.
double to_unit(double x, double scale) {
  double q = x / scale;
  for (double c : {q, std::nextafter(q, INFINITY), std::nextafter(q, -INFINITY)})
    if (c * scale == x) return c;
  return q;
}

// ---- enum names ----
struct EnumName {
  const char* name;
  int value;
};
const std::vector<EnumName> kArchNames = {{"ampere", static_cast<int>(GpuArch::Ampere)},
                                          {"hopper", static_cast<int>(GpuArch::Hopper)},
                                          {"blackwell", static_cast<int>(GpuArch::Blackwell)},
                                          {"cdna3", static_cast<int>(GpuArch::CDNA3)},
                                          {"cdna4", static_cast<int>(GpuArch::CDNA4)}};
const std::vector<EnumName> kCpuNames = {{"intel", static_cast<int>(CpuVendor::Intel)},
                                         {"amd", static_cast<int>(CpuVendor::AMD)},
                                         {"arm", static_cast<int>(CpuVendor::Arm)}};
const std::vector<EnumName> kTopoNames = {{"switch", static_cast<int>(IntraTopology::Switch)},
                                          {"full_mesh", static_cast<int>(IntraTopology::FullMesh)}};
const std::vector<EnumName> kKindNames = {{"scale_up", static_cast<int>(TierKind::ScaleUp)},
                                          {"scale_out", static_cast<int>(TierKind::ScaleOut)}};
const std::vector<EnumName> kProtoNames = {{"ll", kProtoLL}, {"ll128", kProtoLL128}, {"simple", kProtoSimple}};
const std::vector<EnumName> kAlgoNames = {{"tree", kAlgoTree},   {"ring", kAlgoRing},          {"collnet", kAlgoCollNet},
                                          {"nvls", kAlgoNVLS},   {"nvls_tree", kAlgoNVLSTree}, {"pat", kAlgoPAT}};

std::string names_of(const std::vector<EnumName>& v) {
  std::string s;
  for (const auto& e : v) s += std::string(s.empty() ? "" : ", ") + e.name;
  return s;
}
int enum_value(const std::vector<EnumName>& v, const std::string& text, const std::string& what) {
  const std::string t = to_lower(trim(text));
  for (const auto& e : v)
    if (t == e.name) return e.value;
  throw InputError(what + " '" + text + "' is not valid (choose " + names_of(v) + ")");
}
std::string enum_name(const std::vector<EnumName>& v, int value) {
  for (const auto& e : v)
    if (e.value == value) return e.name;
  return "?";
}
std::vector<std::string> flag_names(const std::vector<EnumName>& v, unsigned mask) {
  std::vector<std::string> out;
  for (const auto& e : v)
    if (mask & static_cast<unsigned>(e.value)) out.push_back(e.name);
  return out;
}

// ---- reading ----
struct Reader {
  std::string ctx;   // "hardware file 'x.json'"
  bool all;          // no base: every key required
  Hardware& hw;
  std::set<std::string>& set_paths;
};

// Reads the numbers, ints and bools of one section into `obj`; `path` is the section's source-key prefix.
template <class T>
void read_fields(const Reader& r, StrictObject& o, const std::string& path, T& obj, bool all,
                 const std::vector<NumField<T>>& nums, const std::vector<IntField<T>>& ints,
                 const std::vector<BoolField<T>>& bools) {
  auto present = [&](const char* key) {
    o.ignore(key);
    if (all && !o.has(key))
      throw InputError(r.ctx + ": missing key '" + path + "." + key + "' (required when the file has no \"base\" preset)");
    return o.has(key);
  };
  for (const auto& f : nums) {
    if (!present(f.key)) continue;
    const double v = o.req_num(f.key);
    if (!rule_ok(f.rule, v))
      throw InputError(r.ctx + ": " + path + "." + f.key + " must be " + rule_text(f.rule) + ", got " + fmt_num(v, 6));
    f.ref(obj) = v * f.scale;
    r.set_paths.insert(path + "." + f.key);
  }
  for (const auto& f : ints) {
    if (!present(f.key)) continue;
    const auto v = o.req_int(f.key);
    if (v < f.min || v > 1'000'000)
      throw InputError(r.ctx + ": " + path + "." + f.key + " must be an integer ≥ " + std::to_string(f.min) + ", got " +
                       std::to_string(v));
    f.ref(obj) = static_cast<int>(v);
    r.set_paths.insert(path + "." + f.key);
  }
  for (const auto& f : bools) {
    if (!present(f.key)) continue;
    f.ref(obj) = o.req_bool(f.key);
    r.set_paths.insert(path + "." + f.key);
  }
}

// An optional key (never required, even without "base"), checked by `rule` (a fraction in (0,1] unless said): the
// overrides of fitted constants (absent, the field keeps 0 = use hardware/calibration.json) and optional model values
// with a default (fp8_fast_accum_gain: 1).
void read_override(const Reader& r, StrictObject& o, const std::string& path, const char* key, double& dst,
                   Rule rule = Rule::Fraction) {
  o.ignore(key);
  if (!o.has(key)) return;
  const double v = o.req_num(key);
  if (!rule_ok(rule, v))
    throw InputError(r.ctx + ": " + path + "." + key + " must be " + rule_text(rule) + ", got " + fmt_num(v, 6));
  dst = v;
  r.set_paths.insert(path + "." + key);
}

// A required-or-optional string key; returns whether it was present.
bool read_str(const Reader& r, StrictObject& o, const std::string& path, const char* key, bool all, std::string& dst) {
  o.ignore(key);
  if (!o.has(key)) {
    if (all) throw InputError(r.ctx + ": missing key '" + path + "." + key + "' (required when the file has no \"base\" preset)");
    return false;
  }
  dst = o.req_str(key);
  if (trim(dst).empty()) throw InputError(r.ctx + ": " + path + "." + key + " must not be empty");
  return true;
}

template <class E>
void read_enum(const Reader& r, StrictObject& o, const std::string& path, const char* key, bool all,
               const std::vector<EnumName>& names, E& dst) {
  std::string s;
  if (!read_str(r, o, path, key, all, s)) return;
  dst = static_cast<E>(enum_value(names, s, r.ctx + ": " + path + "." + key));
  r.set_paths.insert(path + "." + key);
}

unsigned read_flag_list(const Reader& r, const json& arr, const std::string& path, const std::vector<EnumName>& names) {
  if (!arr.is_array() || arr.empty())
    throw InputError(r.ctx + ": " + path + " must be a non-empty list of strings (" + names_of(names) + ")");
  unsigned mask = 0;
  for (const auto& e : arr) {
    if (!e.is_string()) throw InputError(r.ctx + ": " + path + " must be a list of strings (" + names_of(names) + ")");
    mask |= static_cast<unsigned>(enum_value(names, e.get<std::string>(), r.ctx + ": " + path + " entry"));
  }
  return mask;
}

void read_kernels(const Reader& r, const json& j) {
  StrictObject o(j, r.ctx + ": \"gpu.kernels\"");
  for (const char* stack : kStacks) {
    o.ignore(stack);
    auto it = r.hw.gpu.kernels.find(stack);
    const bool is_new = it == r.hw.gpu.kernels.end();
    if (!o.has(stack)) {
      if (is_new) throw InputError(r.ctx + ": missing kernel profile 'gpu.kernels." + stack + "'");
      continue;
    }
    KernelProfile& k = r.hw.gpu.kernels[stack];
    StrictObject ko(o.req_obj(stack), r.ctx + ": \"gpu.kernels." + stack + "\"");
    read_fields<KernelProfile>(r, ko, std::string("gpu.kernels.") + stack, k, r.all || is_new, kernel_nums(), {}, {});
    read_override(r, ko, std::string("gpu.kernels.") + stack, "sustained_efficiency", k.sustained_override);
    // Optional: the profile's own head-dim roll-off (absent: gpu.compute.attn_head_dim_half).
    read_override(r, ko, std::string("gpu.kernels.") + stack, "attn_head_dim_half", k.attn_head_dim_half,
                  Rule::Positive);
    ko.finish();
  }
  o.finish();
}

void read_gpu(const Reader& r, const json& j) {
  StrictObject o(j, r.ctx + ": \"gpu\"");
  if (read_str(r, o, "gpu", "name", r.all, r.hw.gpu.name)) r.set_paths.insert("gpu.name");
  read_enum(r, o, "gpu", "arch", r.all, kArchNames, r.hw.gpu.arch);
  read_fields<GpuSpec>(r, o, "gpu", r.hw.gpu, r.all, gpu_nums(), {}, {});
  o.ignore("compute");
  if (o.has("compute")) {
    StrictObject c(o.req_obj("compute"), r.ctx + ": \"gpu.compute\"");
    read_fields<ComputeModel>(r, c, "gpu.compute", r.hw.gpu.compute, r.all, compute_nums(), compute_ints(), {});
    read_override(r, c, "gpu.compute", "attn_causal_efficiency", r.hw.gpu.compute.attn_causal_override);
    // Optional even without "base" (default 1: no fast-accumulation gain, the Blackwell / AMD case).
    read_override(r, c, "gpu.compute", "fp8_fast_accum_gain", r.hw.gpu.compute.fp8_fast_accum_gain, Rule::Positive);
    // Optional even without "base" (default 0: a windowed kernel's tiles at the long-loop rate, no per-block cost).
    read_override(r, c, "gpu.compute", "attn_block_overhead_tiles", r.hw.gpu.compute.attn_block_overhead_tiles,
                  Rule::NonNegative);
    c.finish();
  } else if (r.all) {
    throw InputError(r.ctx + ": missing key 'gpu.compute' (required when the file has no \"base\" preset)");
  }
  o.ignore("kernels");
  if (o.has("kernels")) read_kernels(r, o.req_obj("kernels"));
  else if (r.all) throw InputError(r.ctx + ": missing key 'gpu.kernels' (required when the file has no \"base\" preset)");
  o.finish();
}

void read_tier(const Reader& r, const json& j, std::size_t index) {
  const std::string where = r.ctx + ": node.tiers[" + std::to_string(index) + "]";
  StrictObject o(j, where);
  if (!o.has("kind")) throw InputError(where + ": missing key 'kind' (" + names_of(kKindNames) + ")");
  const auto kind = static_cast<TierKind>(enum_value(kKindNames, o.req_str("kind"), where + ": kind"));
  const bool up = kind == TierKind::ScaleUp;
  const std::string path = up ? "node.scale_up" : "node.scale_out";
  auto& tiers = r.hw.node.tiers;
  auto it = std::find_if(tiers.begin(), tiers.end(), [&](const LinkTier& t) { return t.kind == kind; });
  const bool is_new = it == tiers.end();
  if (is_new) {
    LinkTier t;
    t.kind = kind;
    tiers.push_back(t);
    it = std::prev(tiers.end());
  }
  LinkTier& t = *it;
  const bool all = r.all || is_new;
  if (read_str(r, o, path, "name", all, t.name)) r.set_paths.insert(path + ".name");
  if (up) {
    read_enum(r, o, path, "topology", all, kTopoNames, t.topology);
    read_fields<LinkTier>(r, o, path, t, all, scale_up_nums(), scale_up_ints(), scale_up_bools());
  } else {
    read_fields<LinkTier>(r, o, path, t, all, scale_out_nums(), scale_out_ints(), scale_out_bools());
  }
  o.finish();
}

void read_node(const Reader& r, const json& j) {
  StrictObject o(j, r.ctx + ": \"node\"");
  read_fields<NodeSpec>(r, o, "node", r.hw.node, r.all, {}, {{"gpus_per_node", 1, [](NodeSpec& n) -> int& { return n.gpus_per_node; }}}, {});
  read_enum(r, o, "node", "cpu_vendor", r.all, kCpuNames, r.hw.node.cpu);
  // The host CPU (optional: the reference x86 host when absent).
  if (read_str(r, o, "node", "host_cpu", false, r.hw.node.host_cpu)) r.set_paths.insert("node.host_cpu");
  o.ignore("host_time_factor");
  if (o.has("host_time_factor")) {
    const double v = o.req_num("host_time_factor");
    if (!rule_ok(Rule::Positive, v))
      throw InputError(r.ctx + ": node.host_time_factor must be " + rule_text(Rule::Positive) + ", got " + fmt_num(v, 6));
    r.hw.node.host_time_factor = v;
    r.set_paths.insert("node.host_time_factor");
  }
  // Optional positive host figures (absent: 0, not stated).
  for (auto [key, dst] : {std::pair<const char*, double*>{"host_link_gbytes_per_s", &r.hw.node.host_link_gbytes_per_s},
                          {"host_memory_gbytes_per_gpu", &r.hw.node.host_memory_gbytes_per_gpu}}) {
    o.ignore(key);
    if (!o.has(key)) continue;
    const double v = o.req_num(key);
    if (!rule_ok(Rule::Positive, v))
      throw InputError(r.ctx + ": node." + key + " must be " + rule_text(Rule::Positive) + ", got " + fmt_num(v, 6));
    *dst = v;
    r.set_paths.insert(std::string("node.") + key);
  }
  o.ignore("tiers");
  if (o.has("tiers")) {
    const json& arr = j.at("tiers");
    if (!arr.is_array() || arr.empty())
      throw InputError(r.ctx + ": node.tiers must be a non-empty list of tier objects (kind scale_up / scale_out)");
    std::set<std::string> kinds;
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_object()) throw InputError(r.ctx + ": node.tiers[" + std::to_string(i) + "] must be an object");
      const std::string k = arr[i].contains("kind") && arr[i]["kind"].is_string() ? arr[i]["kind"].get<std::string>() : "";
      if (!kinds.insert(to_lower(k)).second)
        throw InputError(r.ctx + ": node.tiers lists kind '" + k + "' twice (one scale_up and at most one scale_out tier)");
      read_tier(r, arr[i], i);
    }
    if (r.all && !kinds.count("scale_up"))
      throw InputError(r.ctx + ": node.tiers needs a tier of kind scale_up (the NVLink/xGMI domain)");
  } else if (r.all) {
    throw InputError(r.ctx + ": missing key 'node.tiers' (required when the file has no \"base\" preset)");
  }
  o.finish();
}

void read_collectives(const Reader& r, const json& j) {
  StrictObject o(j, r.ctx + ": \"collectives\"");
  CollectiveLibrary& c = r.hw.comm;
  std::string lib;
  if (read_str(r, o, "collectives", "library", r.all, lib)) {
    lib = to_lower(trim(lib));
    if (lib != "nccl" && lib != "rccl")
      throw InputError(r.ctx + ": collectives.library '" + lib + "' is not valid (choose nccl or rccl)");
    c.name = lib;
    r.set_paths.insert("collectives.library");
  }
  for (const char* key : {"protocols", "algorithms"}) {
    o.ignore(key);
    if (!o.has(key)) {
      if (r.all) throw InputError(r.ctx + ": missing key 'collectives." + std::string(key) + "' (required when the file has no \"base\" preset)");
      continue;
    }
    const bool proto = std::string(key) == "protocols";
    (proto ? c.protocols : c.algorithms) =
        read_flag_list(r, j.at(key), std::string("collectives.") + key, proto ? kProtoNames : kAlgoNames);
    r.set_paths.insert(std::string("collectives.") + key);
  }
  read_fields<CollectiveLibrary>(r, o, "collectives", c, r.all, comm_nums(), comm_ints(), comm_bools());
  o.finish();
}

// Provenance: a field the file sets gets the file's source when it gives one, else "set in hardware file …".
void apply_sources(Hardware& hw, const std::set<std::string>& set_paths, const std::map<std::string, std::string>& given,
                   const std::string& origin) {
  for (const auto& p : set_paths)  // names are labels, not numbers: they need no provenance
    if (p.size() < 5 || p.substr(p.size() - 5) != ".name") hw.sources[p] = "set in hardware file '" + origin + "'";
  for (const auto& [k, v] : given) hw.sources[k] = v;
}

// Reads the document into `hw` (a base already loaded into it when `has_base`).
void read_document(const json& j, const std::string& ctx, bool all, Hardware& hw, const std::string& origin,
                   StrictObject& root) {
  std::set<std::string> set_paths;
  Reader r{ctx, all, hw, set_paths};
  for (const char* sec : {"gpu", "node", "collectives"}) {
    root.ignore(sec);
    if (!root.has(sec)) {
      if (all) throw InputError(ctx + ": missing key '" + sec + "' (required when the file has no \"base\" preset)");
      continue;
    }
    const json& s = root.req_obj(sec);
    if (std::string(sec) == "gpu") read_gpu(r, s);
    else if (std::string(sec) == "node") read_node(r, s);
    else read_collectives(r, s);
  }
  std::map<std::string, std::string> given;
  root.ignore("sources");
  if (root.has("sources")) {
    StrictObject s(root.req_obj("sources"), ctx + ": \"sources\"");
    // Provenance is documentation: any key is kept (the convention is the field path, e.g. gpu.peak_bf16_tflops or
    // node.scale_out.latency_us), but every value must be a string.
    for (const auto& [k, v] : j.at("sources").items()) given[k] = s.req_str(k);
    s.finish();
  }
  apply_sources(hw, set_paths, given, origin);
}

// The strict reader of sim/core: repeated keys, nesting beyond 64 levels and numbers beyond a double (1e400) are
// InputErrors too, and errors name the line, column and text.
json parse_text(const std::string& text, const std::string& ctx) { return parse_json_text(text, ctx); }

void check_fields(const std::string& ctx, const std::string& path, auto& obj, const auto& nums, const auto& ints) {
  for (const auto& f : nums) {
    const double v = f.ref(obj) / f.scale;
    if (!rule_ok(f.rule, v))
      throw InputError(ctx + ": " + path + "." + f.key + " must be " + rule_text(f.rule) + ", got " + fmt_num(v, 6));
  }
  for (const auto& f : ints)
    if (f.ref(obj) < f.min)
      throw InputError(ctx + ": " + path + "." + f.key + " must be ≥ " + std::to_string(f.min) + ", got " +
                       std::to_string(f.ref(obj)));
}

}  // namespace

void validate_hardware(const Hardware& hw_in) {
  Hardware hw = hw_in;  // the field accessors take non-const references
  const std::string ctx = "hardware '" + hw.name + "'";
  check_fields(ctx, "gpu", hw.gpu, gpu_nums(), std::vector<IntField<GpuSpec>>{});
  check_fields(ctx, "gpu.compute", hw.gpu.compute, compute_nums(), compute_ints());
  for (const char* stack : kStacks) {
    auto it = hw.gpu.kernels.find(stack);
    require(it != hw.gpu.kernels.end(), ctx + ": gpu.kernels needs a '" + stack + "' kernel profile");
    check_fields(ctx, std::string("gpu.kernels.") + stack, it->second, kernel_nums(), std::vector<IntField<KernelProfile>>{});
    const double o = it->second.sustained_override;  // 0 = calibration.json's value
    require(o >= 0 && o <= 1, ctx + ": gpu.kernels." + stack + ".sustained_efficiency must be " +
                                  rule_text(Rule::Fraction) + ", got " + fmt_num(o, 6));
  }
  const double co = hw.gpu.compute.attn_causal_override;
  require(co >= 0 && co <= 1, ctx + ": gpu.compute.attn_causal_efficiency must be " + rule_text(Rule::Fraction) +
                                  ", got " + fmt_num(co, 6));
  require(hw.node.gpus_per_node >= 1, ctx + ": node.gpus_per_node must be ≥ 1, got " + std::to_string(hw.node.gpus_per_node));
  require(!hw.node.tiers.empty() && hw.node.tiers.front().kind == TierKind::ScaleUp,
          ctx + ": node.tiers must start with the scale_up tier (the NVLink/xGMI domain)");
  require(hw.node.tiers.size() <= 2 && (hw.node.tiers.size() == 1 || hw.node.tiers[1].kind == TierKind::ScaleOut),
          ctx + ": node.tiers holds one scale_up tier and at most one scale_out tier");
  LinkTier& up = hw.node.scale_up();
  check_fields(ctx, "node.scale_up", up, scale_up_nums(), scale_up_ints());
  if (LinkTier* out = hw.node.scale_out()) check_fields(ctx, "node.scale_out", *out, scale_out_nums(), scale_out_ints());
  check_fields(ctx, "collectives", hw.comm, comm_nums(), comm_ints());
  require(!hw.gpu.name.empty() && !up.name.empty() && (!hw.node.scale_out() || !hw.node.scale_out()->name.empty()),
          ctx + ": gpu.name and the tier names must not be empty");
  require(hw.comm.protocols != 0 && (hw.comm.algorithms & (kAlgoRing | kAlgoTree)) != 0,
          ctx + ": collectives needs at least one protocol and the ring or tree algorithm");
  require(hw.comm.min_channels <= hw.comm.max_channels,
          ctx + ": collectives.min_channels (" + std::to_string(hw.comm.min_channels) + ") exceeds max_channels (" +
              std::to_string(hw.comm.max_channels) + ")");
  if (up.topology == IntraTopology::FullMesh) {
    require(up.links_per_gpu >= hw.node.gpus_per_node - 1,
            ctx + ": a full_mesh node needs one link per peer: gpus_per_node " + std::to_string(hw.node.gpus_per_node) +
                " needs links_per_gpu ≥ " + std::to_string(hw.node.gpus_per_node - 1) + ", have " +
                std::to_string(up.links_per_gpu) + " (at most " + std::to_string(up.links_per_gpu + 1) +
                " GPUs per node)");
    require(!up.nvls, ctx + ": node.scale_up.nvls needs an NVSwitch (topology switch), not a full_mesh");
  }
}

Hardware parse_hardware_json(const std::string& text, const std::string& origin) {
  const std::string ctx = "hardware file '" + origin + "'";
  const json j = parse_text(text, ctx);
  StrictObject root(j, ctx);
  const bool has_base = root.has("base");
  Hardware hw;
  if (has_base) hw = hardware_preset(root.req_str("base"));
  root.ignore("base");
  root.ignore("description");
  if (root.has("description")) (void)root.req_str("description");
  const std::string label = utf8_sanitize(origin);  // a path may hold any bytes; names and sources go to JSON
  hw.name = root.opt_str("name", label);
  read_document(j, ctx, !has_base, hw, label, root);
  root.finish();
  finalize_hardware(hw);
  validate_hardware(hw);
  return hw;
}

Hardware apply_hardware_overrides(const Hardware& base, const std::string& text, const std::string& origin) {
  const std::string ctx = "hardware overrides '" + origin + "'";
  const json j = parse_text(text, ctx);
  StrictObject root(j, ctx);
  Hardware hw = base;
  root.ignore("description");
  if (root.has("description")) (void)root.req_str("description");
  read_document(j, ctx, false, hw, utf8_sanitize(origin), root);
  root.finish();
  finalize_hardware(hw);
  validate_hardware(hw);
  return hw;
}

std::string hardware_to_json(const Hardware& hw_in) {
  Hardware hw = hw_in;
  nlohmann::ordered_json j;
  j["name"] = hw.name;
  auto& g = j["gpu"];
  g["name"] = hw.gpu.name;
  g["arch"] = enum_name(kArchNames, static_cast<int>(hw.gpu.arch));
  for (const auto& f : gpu_nums()) g[f.key] = to_unit(f.ref(hw.gpu), f.scale);
  for (const auto& f : compute_nums()) g["compute"][f.key] = to_unit(f.ref(hw.gpu.compute), f.scale);
  for (const auto& f : compute_ints()) g["compute"][f.key] = f.ref(hw.gpu.compute);
  // Overrides of the fitted constants are written only where the hardware sets them (0 = calibration.json's value).
  if (hw.gpu.compute.attn_causal_override > 0) g["compute"]["attn_causal_efficiency"] = hw.gpu.compute.attn_causal_override;
  if (hw.gpu.compute.fp8_fast_accum_gain != 1.0) g["compute"]["fp8_fast_accum_gain"] = hw.gpu.compute.fp8_fast_accum_gain;
  if (hw.gpu.compute.attn_block_overhead_tiles != 0)
    g["compute"]["attn_block_overhead_tiles"] = hw.gpu.compute.attn_block_overhead_tiles;
  for (auto& [stack, k] : hw.gpu.kernels) {
    for (const auto& f : kernel_nums()) g["kernels"][stack][f.key] = to_unit(f.ref(k), f.scale);
    if (k.sustained_override > 0) g["kernels"][stack]["sustained_efficiency"] = k.sustained_override;
    if (k.attn_head_dim_half > 0) g["kernels"][stack]["attn_head_dim_half"] = k.attn_head_dim_half;
  }
  auto& n = j["node"];
  n["gpus_per_node"] = hw.node.gpus_per_node;
  n["cpu_vendor"] = enum_name(kCpuNames, static_cast<int>(hw.node.cpu));
  // The host CPU: written when the hardware states it (a source or a value other than the reference host); absent,
  // a reader assumes the reference host, so the complete form still reads back to the same hardware.
  const NodeSpec ref_node;
  if (hw.sources.count("node.host_cpu") || hw.node.host_cpu != ref_node.host_cpu) n["host_cpu"] = hw.node.host_cpu;
  if (hw.sources.count("node.host_time_factor") || hw.node.host_time_factor != ref_node.host_time_factor)
    n["host_time_factor"] = hw.node.host_time_factor;
  if (hw.node.host_link_gbytes_per_s > 0) n["host_link_gbytes_per_s"] = hw.node.host_link_gbytes_per_s;
  if (hw.node.host_memory_gbytes_per_gpu > 0) n["host_memory_gbytes_per_gpu"] = hw.node.host_memory_gbytes_per_gpu;
  n["tiers"] = nlohmann::ordered_json::array();
  for (LinkTier& t : hw.node.tiers) {
    nlohmann::ordered_json o;
    o["kind"] = enum_name(kKindNames, static_cast<int>(t.kind));
    o["name"] = t.name;
    if (t.kind == TierKind::ScaleUp) {
      o["topology"] = enum_name(kTopoNames, static_cast<int>(t.topology));
      for (const auto& f : scale_up_nums()) o[f.key] = to_unit(f.ref(t), f.scale);
      for (const auto& f : scale_up_ints()) o[f.key] = f.ref(t);
      for (const auto& f : scale_up_bools()) o[f.key] = f.ref(t);
    } else {
      for (const auto& f : scale_out_nums()) o[f.key] = to_unit(f.ref(t), f.scale);
      for (const auto& f : scale_out_ints()) o[f.key] = f.ref(t);
      for (const auto& f : scale_out_bools()) o[f.key] = f.ref(t);
    }
    n["tiers"].push_back(o);
  }
  auto& c = j["collectives"];
  c["library"] = hw.comm.name;
  c["protocols"] = flag_names(kProtoNames, hw.comm.protocols);
  c["algorithms"] = flag_names(kAlgoNames, hw.comm.algorithms);
  for (const auto& f : comm_nums()) c[f.key] = to_unit(f.ref(hw.comm), f.scale);
  for (const auto& f : comm_ints()) c[f.key] = f.ref(hw.comm);
  for (const auto& f : comm_bools()) c[f.key] = f.ref(hw.comm);
  auto& src = j["sources"];
  src = nlohmann::ordered_json::object();
  for (const auto& [k, v] : hw.sources) src[k] = v;
  return j.dump(2) + "\n";
}

Hardware resolve_hardware(const std::string& name_or_path, int gpus_per_node_override) {
  // A preset's name means the preset even when a file or directory of that name sits in the working directory (`--gpu
  // h100` read ./h100; models also look up presets first). A path needs a slash or .json then: `--gpu ./h100`.
  const bool preset = name_or_path.find('/') == std::string::npos && is_hardware_preset(name_or_path);
  Hardware hw = !preset && looks_like_path(name_or_path)
                    ? parse_hardware_json(read_file_text(name_or_path, "hardware file", kConfigFileLimit), name_or_path)
                    : hardware_preset(name_or_path);
  if (gpus_per_node_override < 0)
    throw InputError("--gpus-per-node must be a positive integer, got " + std::to_string(gpus_per_node_override));
  if (gpus_per_node_override > 0 && gpus_per_node_override != hw.node.gpus_per_node) {
    auto& n = hw.node;
    const int g_old = n.gpus_per_node, g_new = gpus_per_node_override;
    if (LinkTier* out = n.scale_out()) {
      // Keep each GPU's share of NIC bandwidth: the node's NICs scale with its size. When the NIC count does not scale
      // to an integer (e.g. 4 NICs for 8 GPUs → 1 GPU), the node gets one NIC per GPU at the per-GPU share instead.
      const long long scaled = static_cast<long long>(out->nics_per_node) * g_new;
      if (scaled % g_old == 0) {
        out->nics_per_node = static_cast<int>(scaled / g_old);
      } else {
        out->nic_bits_per_s = out->nic_bits_per_s * out->nics_per_node / g_old;
        out->nics_per_node = g_new;
        hw.sources["node.scale_out.nic_gbits_per_s"] = "per-GPU share of the preset's NIC bandwidth (--gpus-per-node " +
                                                       std::to_string(g_new) + "); " +
                                                       hw.sources["node.scale_out.nic_gbits_per_s"];
      }
      hw.sources["node.scale_out.nics_per_node"] = "scaled with --gpus-per-node " + std::to_string(g_new) +
                                                   " to keep each GPU's NIC share; " +
                                                   hw.sources["node.scale_out.nics_per_node"];
    }
    hw.sources["node.gpus_per_node"] = "--gpus-per-node " + std::to_string(g_new) + " (preset: " + std::to_string(g_old) + ")";
    n.gpus_per_node = g_new;
  }
  finalize_hardware(hw);
  validate_hardware(hw);
  return hw;
}

}  // namespace parsim
