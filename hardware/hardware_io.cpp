// parsim hardware/hardware_io.cpp — the hardware JSON file (what `--gpu FILE` reads and `calibrate --out` writes).
//
// Schema (units in the key names; converted to SI here and nowhere else; examples/hardware/*.json):
// {
//   "name": "my-cluster",                         optional label (default: the file path)
//   "description": "...",                         optional free text, ignored
//   "base": "h100",                               optional preset to start from; then every key below is optional
//                                                 and overrides the preset. Without "base" every key is required.
//   "gpu": { "name": "...",
//            "peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops", "peak_fp16_tflops": dense TFLOP/s (> 0),
//            "peak_fp8_tflops": dense TFLOP/s, 0 = no fp8 tensor cores,
//            "hbm_gib": CUDA-visible memory in GiB (2^30 B), "hbm_bw_gbytes_per_s": HBM bandwidth in GB/s (1e9 B/s),
//            "compute": { "gemm_ceiling", "gemm_ceiling_fp8", "gemm_ceiling_fp32": fractions of peak in (0,1],
//                         "num_sms": SMs (CUs), "gemm_k_half": k, "attn_fwd_efficiency", "attn_bwd_efficiency": (0,1],
//                         "attn_fwd_seq_half", "attn_bwd_seq_half": tokens, "attn_head_dim_half": head-dim units,
//                         "hbm_efficiency": (0,1], "kernel_overhead_us", "layer_overhead_us": µs (≥ 0),
//                         "comm_compute_slowdown", "sustained_efficiency": fractions in [0,1],
//                         "attn_causal_efficiency": fraction in [0,1],
//                         "fp8_cast_bytes_per_element": bytes (≥ 0),
//                         Transformer Engine stack: "te_sustained_efficiency", "te_attn_fwd_efficiency",
//                         "te_attn_bwd_efficiency" (fractions), "te_attn_fwd_seq_half", "te_attn_bwd_seq_half"
//                         (tokens), "te_fp8_cast_bytes_per_element" (bytes) } },
//   "node": { "gpus_per_node": int,
//             "intra": { "name": "nvlink4", "topology": "switch" | "full_mesh",
//                        "gbytes_per_s_unidir": per GPU per direction in GB/s (full_mesh: summed over its links),
//                        "links_per_gpu": int (full_mesh: one per peer, so ≥ gpus_per_node − 1),
//                        "efficiency": achievable ring busbw / nominal (> 0; above 1 only when a calibration beats
//                        the nominal figure), "latency_us": α per step in µs,
//                        "nvls": bool, "nvls_efficiency": > 0, "nvls_latency_us": µs, "nvls_min_gpus": int },
//             "inter": { "name": "ib-ndr", "nics_per_node": int, "nic_gbits_per_s": per NIC in Gb/s (1e9 bit/s),
//                        "efficiency": > 0, "latency_us": α per inter-node step in µs } },
//   "sources": { "<field path, e.g. gpu.peak_bf16_tflops>": "provenance", ... }   optional, string values; a
//              number the file sets without a source gets "set in hardware file '<path>'"
// }
// Unknown keys, wrong types and out-of-range values are InputErrors naming the file and the key. hardware_to_json
// writes the complete form (no "base"), which parse_hardware_json reads back to an identical Hardware.
#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"

#include <cmath>
#include <functional>
#include <set>

namespace parsim {
namespace {

using nlohmann::json;

enum class Rule { Positive, NonNegative, Fraction, UnitInterval };  // >0, ≥0, (0,1], [0,1]

struct NumField {
  const char* section;  // "gpu", "gpu.compute", "node.intra", "node.inter"
  const char* key;
  double scale;  // SI value = file value × scale
  Rule rule;
  std::function<double&(Hardware&)> ref;
};
struct IntField {
  const char* section;
  const char* key;
  int min;
  std::function<int&(Hardware&)> ref;
};

const std::vector<NumField>& num_fields() {
  static const std::vector<NumField> f = {
      {"gpu", "peak_fp32_tflops", 1e12, Rule::Positive, [](Hardware& h) -> double& { return h.gpu.peak_fp32; }},
      {"gpu", "peak_tf32_tflops", 1e12, Rule::Positive, [](Hardware& h) -> double& { return h.gpu.peak_tf32; }},
      {"gpu", "peak_bf16_tflops", 1e12, Rule::Positive, [](Hardware& h) -> double& { return h.gpu.peak_bf16; }},
      {"gpu", "peak_fp16_tflops", 1e12, Rule::Positive, [](Hardware& h) -> double& { return h.gpu.peak_fp16; }},
      {"gpu", "peak_fp8_tflops", 1e12, Rule::NonNegative, [](Hardware& h) -> double& { return h.gpu.peak_fp8; }},
      {"gpu", "hbm_gib", kGiB, Rule::Positive, [](Hardware& h) -> double& { return h.gpu.hbm_capacity_bytes; }},
      {"gpu", "hbm_bw_gbytes_per_s", kGB, Rule::Positive, [](Hardware& h) -> double& { return h.gpu.hbm_bandwidth_Bps; }},
      {"gpu.compute", "gemm_ceiling", 1, Rule::Fraction, [](Hardware& h) -> double& { return h.gpu.compute.gemm_ceiling; }},
      {"gpu.compute", "gemm_ceiling_fp8", 1, Rule::Fraction,
       [](Hardware& h) -> double& { return h.gpu.compute.gemm_ceiling_fp8; }},
      {"gpu.compute", "gemm_ceiling_fp32", 1, Rule::Fraction,
       [](Hardware& h) -> double& { return h.gpu.compute.gemm_ceiling_fp32; }},
      {"gpu.compute", "gemm_k_half", 1, Rule::Positive, [](Hardware& h) -> double& { return h.gpu.compute.gemm_k_half; }},
      {"gpu.compute", "attn_fwd_efficiency", 1, Rule::Fraction,
       [](Hardware& h) -> double& { return h.gpu.compute.attn_fwd_efficiency; }},
      {"gpu.compute", "attn_bwd_efficiency", 1, Rule::Fraction,
       [](Hardware& h) -> double& { return h.gpu.compute.attn_bwd_efficiency; }},
      {"gpu.compute", "attn_fwd_seq_half", 1, Rule::Positive,
       [](Hardware& h) -> double& { return h.gpu.compute.attn_seq_half; }},
      {"gpu.compute", "attn_bwd_seq_half", 1, Rule::Positive,
       [](Hardware& h) -> double& { return h.gpu.compute.attn_bwd_seq_half; }},
      {"gpu.compute", "attn_head_dim_half", 1, Rule::Positive,
       [](Hardware& h) -> double& { return h.gpu.compute.attn_head_dim_half; }},
      {"gpu.compute", "hbm_efficiency", 1, Rule::Fraction,
       [](Hardware& h) -> double& { return h.gpu.compute.hbm_efficiency; }},
      {"gpu.compute", "kernel_overhead_us", 1e-6, Rule::NonNegative,
       [](Hardware& h) -> double& { return h.gpu.compute.kernel_overhead_s; }},
      {"gpu.compute", "layer_overhead_us", 1e-6, Rule::NonNegative,
       [](Hardware& h) -> double& { return h.gpu.compute.layer_overhead_s; }},
      {"gpu.compute", "comm_compute_slowdown", 1, Rule::UnitInterval,
       [](Hardware& h) -> double& { return h.gpu.compute.comm_compute_slowdown; }},
      {"gpu.compute", "sustained_efficiency", 1, Rule::UnitInterval,
       [](Hardware& h) -> double& { return h.gpu.compute.sustained_efficiency; }},
      {"gpu.compute", "attn_causal_efficiency", 1, Rule::UnitInterval,
       [](Hardware& h) -> double& { return h.gpu.compute.attn_causal_efficiency; }},
      {"gpu.compute", "te_sustained_efficiency", 1, Rule::UnitInterval,
       [](Hardware& h) -> double& { return h.gpu.compute.te_sustained_efficiency; }},
      {"gpu.compute", "te_attn_fwd_efficiency", 1, Rule::UnitInterval,
       [](Hardware& h) -> double& { return h.gpu.compute.te_attn_fwd_efficiency; }},
      {"gpu.compute", "te_attn_fwd_seq_half", 1, Rule::NonNegative,
       [](Hardware& h) -> double& { return h.gpu.compute.te_attn_seq_half; }},
      {"gpu.compute", "te_attn_bwd_efficiency", 1, Rule::UnitInterval,
       [](Hardware& h) -> double& { return h.gpu.compute.te_attn_bwd_efficiency; }},
      {"gpu.compute", "te_attn_bwd_seq_half", 1, Rule::NonNegative,
       [](Hardware& h) -> double& { return h.gpu.compute.te_attn_bwd_seq_half; }},
      {"gpu.compute", "te_fp8_cast_bytes_per_element", 1, Rule::NonNegative,
       [](Hardware& h) -> double& { return h.gpu.compute.te_fp8_cast_bytes_per_element; }},
      {"gpu.compute", "fp8_cast_bytes_per_element", 1, Rule::NonNegative,
       [](Hardware& h) -> double& { return h.gpu.compute.fp8_cast_bytes_per_element; }},
      {"node.intra", "gbytes_per_s_unidir", kGB, Rule::Positive,
       [](Hardware& h) -> double& { return h.node.intra.bw_Bps_unidir; }},
      {"node.intra", "efficiency", 1, Rule::Positive, [](Hardware& h) -> double& { return h.node.intra.efficiency; }},
      {"node.intra", "latency_us", 1e-6, Rule::Positive, [](Hardware& h) -> double& { return h.node.intra.latency_s; }},
      {"node.intra", "nvls_efficiency", 1, Rule::Positive, [](Hardware& h) -> double& { return h.node.nvls_efficiency; }},
      {"node.intra", "nvls_latency_us", 1e-6, Rule::Positive,
       [](Hardware& h) -> double& { return h.node.nvls_latency_s; }},
      {"node.inter", "nic_gbits_per_s", 1e9, Rule::Positive, [](Hardware& h) -> double& { return h.node.nic_bits_per_s; }},
      {"node.inter", "efficiency", 1, Rule::Positive, [](Hardware& h) -> double& { return h.node.inter.efficiency; }},
      {"node.inter", "latency_us", 1e-6, Rule::Positive, [](Hardware& h) -> double& { return h.node.inter.latency_s; }},
  };
  return f;
}

const std::vector<IntField>& int_fields() {
  static const std::vector<IntField> f = {
      {"gpu.compute", "num_sms", 1, [](Hardware& h) -> int& { return h.gpu.compute.num_sms; }},
      {"node", "gpus_per_node", 1, [](Hardware& h) -> int& { return h.node.gpus_per_node; }},
      {"node.intra", "links_per_gpu", 1, [](Hardware& h) -> int& { return h.node.links_per_gpu; }},
      {"node.intra", "nvls_min_gpus", 2, [](Hardware& h) -> int& { return h.node.nvls_min_gpus; }},
      {"node.inter", "nics_per_node", 1, [](Hardware& h) -> int& { return h.node.nics_per_node; }},
  };
  return f;
}

std::string path_of(const char* section, const char* key) { return std::string(section) + "." + key; }

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

std::string topology_name(IntraTopology t) { return t == IntraTopology::Switch ? "switch" : "full_mesh"; }

// Reads one JSON section into hw. `all` = every key required (no base preset).
void read_section(const json& j, const std::string& section, const std::string& ctx, bool all, Hardware& hw,
                  std::set<std::string>& set_paths) {
  StrictObject o(j, ctx + ": \"" + section + "\"");
  auto present = [&](const char* key) {
    o.ignore(key);
    if (all && !o.has(key))
      throw InputError(ctx + ": missing key '" + section + "." + key + "' (required when the file has no \"base\" preset)");
    return o.has(key);
  };
  for (const auto& f : num_fields()) {
    if (section != f.section || !present(f.key)) continue;
    const double v = o.req_num(f.key);
    if (!rule_ok(f.rule, v))
      throw InputError(ctx + ": " + path_of(f.section, f.key) + " must be " + rule_text(f.rule) + ", got " + fmt_num(v, 6));
    f.ref(hw) = v * f.scale;
    set_paths.insert(path_of(f.section, f.key));
  }
  for (const auto& f : int_fields()) {
    if (section != f.section || !present(f.key)) continue;
    const auto v = o.req_int(f.key);
    if (v < f.min || v > 1'000'000)
      throw InputError(ctx + ": " + path_of(f.section, f.key) + " must be an integer ≥ " + std::to_string(f.min) + ", got " +
                       std::to_string(v));
    f.ref(hw) = static_cast<int>(v);
    set_paths.insert(path_of(f.section, f.key));
  }
  auto str = [&](const char* key, std::string& dst) {
    if (!present(key)) return;
    dst = o.req_str(key);
    if (trim(dst).empty()) throw InputError(ctx + ": " + section + "." + key + " must not be empty");
    set_paths.insert(section + "." + key);
  };
  if (section == "gpu") {
    str("name", hw.gpu.name);
    if (present("compute")) read_section(o.req_obj("compute"), "gpu.compute", ctx, all, hw, set_paths);
  } else if (section == "node") {
    if (present("intra")) read_section(o.req_obj("intra"), "node.intra", ctx, all, hw, set_paths);
    if (present("inter")) read_section(o.req_obj("inter"), "node.inter", ctx, all, hw, set_paths);
  } else if (section == "node.intra") {
    str("name", hw.node.intra.name);
    if (present("topology")) {
      const std::string t = to_lower(o.req_str("topology"));
      if (t == "switch") hw.node.topology = IntraTopology::Switch;
      else if (t == "full_mesh") hw.node.topology = IntraTopology::FullMesh;
      else throw InputError(ctx + ": node.intra.topology '" + t + "' is not valid (choose switch or full_mesh)");
      set_paths.insert("node.intra.topology");
    }
    if (present("nvls")) {
      hw.node.nvls = o.req_bool("nvls");
      set_paths.insert("node.intra.nvls");
    }
  } else if (section == "node.inter") {
    str("name", hw.node.inter.name);
  }
  o.finish();
}

}  // namespace

void validate_hardware(const Hardware& hw_in) {
  Hardware hw = hw_in;  // the field accessors take non-const references
  const std::string ctx = "hardware '" + hw.name + "'";
  for (const auto& f : num_fields()) {
    const double v = f.ref(hw) / f.scale;
    if (!rule_ok(f.rule, v))
      throw InputError(ctx + ": " + path_of(f.section, f.key) + " must be " + rule_text(f.rule) + ", got " + fmt_num(v, 6));
  }
  for (const auto& f : int_fields())
    if (f.ref(hw) < f.min)
      throw InputError(ctx + ": " + path_of(f.section, f.key) + " must be ≥ " + std::to_string(f.min) + ", got " +
                       std::to_string(f.ref(hw)));
  require(!hw.gpu.name.empty() && !hw.node.intra.name.empty() && !hw.node.inter.name.empty(),
          ctx + ": gpu.name, node.intra.name and node.inter.name must not be empty");
  if (hw.node.topology == IntraTopology::FullMesh) {
    require(hw.node.links_per_gpu >= hw.node.gpus_per_node - 1,
            ctx + ": a full_mesh node needs one link per peer: gpus_per_node " + std::to_string(hw.node.gpus_per_node) +
                " needs links_per_gpu ≥ " + std::to_string(hw.node.gpus_per_node - 1) + ", have " +
                std::to_string(hw.node.links_per_gpu) + " (at most " + std::to_string(hw.node.links_per_gpu + 1) +
                " GPUs per node)");
    require(!hw.node.nvls, ctx + ": node.intra.nvls needs an NVSwitch (topology switch), not a full_mesh");
  }
}

Hardware parse_hardware_json(const std::string& text, const std::string& origin) {
  const std::string ctx = "hardware file '" + origin + "'";
  const json j = parse_json_text(text, ctx);  // repeated keys, depth, 1e400: InputErrors (sim/core)
  StrictObject root(j, ctx);
  const bool has_base = root.has("base");
  Hardware hw;
  if (has_base) hw = hardware_preset(root.req_str("base"));
  root.ignore("base");
  root.ignore("description");
  if (root.has("description")) (void)root.req_str("description");
  const std::string label = utf8_sanitize(origin);  // a path may hold any bytes; names and sources go to JSON
  hw.name = root.opt_str("name", label);
  std::set<std::string> set_paths;
  for (const char* sec : {"gpu", "node"}) {
    root.ignore(sec);
    if (!root.has(sec)) {
      if (!has_base) throw InputError(ctx + ": missing key '" + sec + "' (required when the file has no \"base\" preset)");
      continue;
    }
    read_section(root.req_obj(sec), sec, ctx, !has_base, hw, set_paths);
  }
  std::map<std::string, std::string> given;
  if (root.has("sources")) {
    StrictObject s(root.req_obj("sources"), ctx + ": \"sources\"");
    // Provenance is documentation: any key is kept (the convention is the field path, e.g. gpu.peak_bf16_tflops or
    // node.inter.latency_us), but every value must be a string.
    for (const auto& [k, v] : root.req_obj("sources").items()) given[k] = s.req_str(k);
    s.finish();
  }
  root.ignore("sources");
  root.finish();
  for (const auto& p : set_paths)  // names are labels, not numbers: they need no provenance
    if (p.size() < 5 || p.substr(p.size() - 5) != ".name") hw.sources[p] = "set in hardware file '" + label + "'";
  for (const auto& [k, v] : given) hw.sources[k] = v;
  finalize_hardware(hw);
  validate_hardware(hw);
  return hw;
}

std::string hardware_to_json(const Hardware& hw_in) {
  Hardware hw = hw_in;
  nlohmann::ordered_json j;
  j["name"] = hw.name;
  j["gpu"]["name"] = hw.gpu.name;
  j["node"]["gpus_per_node"] = hw.node.gpus_per_node;
  j["node"]["intra"]["name"] = hw.node.intra.name;
  j["node"]["intra"]["topology"] = topology_name(hw.node.topology);
  j["node"]["intra"]["nvls"] = hw.node.nvls;
  j["node"]["inter"]["name"] = hw.node.inter.name;
  auto at = [&](const char* section) -> nlohmann::ordered_json& {
    const std::string s = section;
    if (s == "gpu") return j["gpu"];
    if (s == "gpu.compute") return j["gpu"]["compute"];
    if (s == "node") return j["node"];
    if (s == "node.intra") return j["node"]["intra"];
    return j["node"]["inter"];
  };
  for (const auto& f : num_fields()) at(f.section)[f.key] = to_unit(f.ref(hw), f.scale);
  for (const auto& f : int_fields()) at(f.section)[f.key] = f.ref(hw);
  auto& src = j["sources"];
  src = nlohmann::ordered_json::object();
  for (const auto& [k, v] : hw.sources) src[k] = v;
  return j.dump(2) + "\n";
}

Hardware resolve_hardware(const std::string& name_or_path, int gpus_per_node_override) {
  Hardware hw = looks_like_path(name_or_path)
                    ? parse_hardware_json(read_file_text(name_or_path, "hardware file", kConfigFileLimit), name_or_path)
                    : hardware_preset(name_or_path);
  if (gpus_per_node_override < 0)
    throw InputError("--gpus-per-node must be a positive integer, got " + std::to_string(gpus_per_node_override));
  if (gpus_per_node_override > 0 && gpus_per_node_override != hw.node.gpus_per_node) {
    auto& n = hw.node;
    const int g_old = n.gpus_per_node, g_new = gpus_per_node_override;
    // Keep each GPU's share of NIC bandwidth: the node's NICs scale with its size. When the NIC count does not scale
    // to an integer (e.g. 4 NICs for 8 GPUs → 1 GPU), the node gets one NIC per GPU at the per-GPU share instead.
    const long long scaled = static_cast<long long>(n.nics_per_node) * g_new;
    if (scaled % g_old == 0) {
      n.nics_per_node = static_cast<int>(scaled / g_old);
    } else {
      n.nic_bits_per_s = n.nic_bits_per_s * n.nics_per_node / g_old;
      n.nics_per_node = g_new;
      hw.sources["node.inter.nic_gbits_per_s"] = "per-GPU share of the preset's NIC bandwidth (--gpus-per-node " +
                                                 std::to_string(g_new) + "); " + hw.sources["node.inter.nic_gbits_per_s"];
    }
    hw.sources["node.inter.nics_per_node"] = "scaled with --gpus-per-node " + std::to_string(g_new) +
                                             " to keep each GPU's NIC share; " + hw.sources["node.inter.nics_per_node"];
    hw.sources["node.gpus_per_node"] = "--gpus-per-node " + std::to_string(g_new) + " (preset: " + std::to_string(g_old) + ")";
    n.gpus_per_node = g_new;
  }
  finalize_hardware(hw);
  validate_hardware(hw);
  return hw;
}

}  // namespace parsim
