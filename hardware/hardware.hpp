// parsim hardware/ — GPU, link and cluster descriptors, and the cost models that turn work into time.
// Every preset number carries its source (datasheet, whitepaper, measurement) in the preset (presets.cpp), and the
// hardware JSON a user passes with --gpu has the same schema, units in the key names.
#pragma once
#include "sim/core/types.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace parsim {

enum class IntraTopology { Switch, FullMesh };  // NVSwitch (any pair at full per-GPU bandwidth) | xGMI point-to-point

// Compute-efficiency constants of one GPU: calibrated, each with its provenance in the preset.
struct ComputeModel {
  double gemm_ceiling = 0.8;          // best large-GEMM fraction of dense peak (bf16/fp16): measured MAMF / datasheet
  double gemm_ceiling_fp8 = 0.7;      // same for fp8 GEMMs (fp8's real speed-up over bf16 is < 2×)
  double gemm_ceiling_fp32 = 0.9;     // fp32 (SIMT or TF32-off) GEMMs
  int num_sms = 132;                  // streaming multiprocessors (CUs on AMD): wave quantisation
  double gemm_k_half = 64;            // k at which a GEMM's main loop reaches half its asymptotic efficiency share
  double attn_fwd_efficiency = 0.6;   // flash-attention forward at long sequences, fraction of dense peak
  double attn_bwd_efficiency = 0.45;  // flash-attention backward (2.5× the forward's FLOPs)
  double attn_seq_half = 512;         // sequence length at which attention reaches half of that efficiency
  double attn_bwd_seq_half = 512;     // (addition) same for the backward kernel, which ramps up more slowly
  double attn_head_dim_half = 40;     // (addition) head-dim roll-off: d/(d+this), normalised to d = 128, capped at 1
  double hbm_efficiency = 0.8;        // achievable fraction of HBM bandwidth for streaming kernels
  double kernel_overhead_s = 4e-6;    // fixed cost per kernel (launch + tail)
  double layer_overhead_s = 0;        // framework/host overhead per layer per pass not hidden by async launch
  double comm_compute_slowdown = 0.0; // fractional compute slowdown while a communication kernel shares the SMs
  double sustained_efficiency = 1.0;  // fraction of the microbenchmark throughput (MAMF, kernel papers) that GEMMs and
                                      // attention sustain inside a full training step: clocks under whole-node power
                                      // load, cache/HBM interference between neighbouring kernels. Fitted to measured
                                      // runs (tests/validation), one value per GPU generation.
  double attn_causal_efficiency = 1.0;  // causal kernels relative to the non-causal curves the efficiencies come from
  double fp8_cast_bytes_per_element = 3.0;  // fp8 recipes (TE) cast each GEMM operand: read 16-bit, write 8-bit
  // The Megatron-Core / Transformer Engine stack's kernels where they differ from the PyTorch-native stack above:
  // fused attention (cuDNN / FlashAttention-3 class on Hopper), fp8 quantisation fused into the preceding norm or
  // activation kernel, and its own in-training sustained fraction. Applied by megatron_compute().
  double te_sustained_efficiency = 1.0;
  double te_attn_fwd_efficiency = 0.6, te_attn_seq_half = 512;
  double te_attn_bwd_efficiency = 0.45, te_attn_bwd_seq_half = 512;
  double te_fp8_cast_bytes_per_element = 1.0;
};

struct GpuSpec {
  std::string name;
  // Dense peak FLOP/s (no sparsity). fp8 = 0 when the chip has no fp8 tensor cores.
  double peak_fp32 = 0, peak_tf32 = 0, peak_bf16 = 0, peak_fp16 = 0, peak_fp8 = 0;
  double hbm_capacity_bytes = 0;  // what a framework can use (CUDA-visible), reported in GiB
  double hbm_bandwidth_Bps = 0;   // HBM bandwidth, bytes/s
  ComputeModel compute;
  double peak_flops(Precision p) const;  // throws InputError for fp8 on a GPU without fp8
  bool has_fp8() const { return peak_fp8 > 0; }
};

// One tier of the network as the collective model sees it.
struct LinkTier {
  std::string name;                // "nvlink4", "xgmi", "ib-ndr", …
  double bw_Bps_unidir = 0;        // per GPU, per direction, nominal (datasheet) — NVLink is quoted bidirectional!
  double efficiency = 0.8;         // achievable bus bandwidth / nominal, calibrated from nccl-tests
  double latency_s = 0;            // α per algorithm step
};

struct NodeSpec {
  int gpus_per_node = 8;
  IntraTopology topology = IntraTopology::Switch;
  LinkTier intra;                  // for FullMesh: bw_Bps_unidir is the per-GPU total over its links
  int links_per_gpu = 0;           // FullMesh: point-to-point links per GPU (one per peer)
  bool nvls = false;               // NVLink SHARP all-reduce in the switch (H100/H200/B200 NVSwitch)
  double nvls_efficiency = 0.9;    // achieved NVLS algbw / (B·n/(n+1))
  double nvls_latency_s = 25e-6;   // NCCL's flat NVLS latency (src/graph/tuning.cc)
  int nvls_min_gpus = 5;           // (addition) NCCL enables NVLS from this many GPUs per node (5 H100/H200, 6 B200)
  int nics_per_node = 8;
  double nic_bits_per_s = 400e9;   // per NIC, Gb/s ×1e9 (InfiniBand/RoCE are quoted in bits per second)
  LinkTier inter;                  // bw_Bps_unidir = per-GPU share of the node's NIC bandwidth (bytes/s)
};

struct Hardware {
  std::string name;                // preset name or file path
  GpuSpec gpu;
  NodeSpec node;
  std::map<std::string, std::string> sources;  // field → provenance
};

// ---- presets and files (presets.cpp, hardware_io.cpp) ----
// A preset name (case-insensitive; `a100` = `a100-80gb`) or a JSON file (may start from a preset with
// {"base": "h100", ...} and override fields; unknown keys rejected). gpus_per_node > 0 overrides the node size, and the
// node's NIC count scales with it so each GPU keeps its share of NIC bandwidth.
Hardware resolve_hardware(const std::string& name_or_path, int gpus_per_node_override = 0);
std::vector<std::string> hardware_preset_names();
// The hardware as JSON in the file schema (what `--gpu FILE` accepts); used by `calibrate --out` and the JSON echo.
std::string hardware_to_json(const Hardware& hw);
// (additions) A preset by name (case-insensitive, aliases accepted); throws InputError listing the valid names.
Hardware hardware_preset(const std::string& name);
// Parses hardware JSON text (the file schema); `origin` names it in errors and in the provenance of overridden fields.
Hardware parse_hardware_json(const std::string& text, const std::string& origin);
// Checks every field (peaks > 0, compute fractions in (0,1], link efficiencies > 0, a full mesh has a link per peer);
// throws InputError naming the field.
void validate_hardware(const Hardware& hw);
// Recomputes derived fields (node.inter.bw_Bps_unidir = nics × NIC bytes/s / gpus_per_node). Called by the loaders.
void finalize_hardware(Hardware& hw);
// Network bandwidth one GPU gets (bytes/s, nominal, before efficiency) when `concurrent` GPUs of its node use the
// node's NICs at once: nics·nic/concurrent, at most its own NICs (nics·nic/gpus_per_node) or one NIC, the larger.
double nic_share_Bps(const NodeSpec& node, int concurrent);

// The same hardware with the Transformer Engine stack's kernel constants in place of the PyTorch-native ones.
Hardware megatron_compute(const Hardware& hw);

// ---- compute cost (compute_cost.cpp) ----
// time = max(FLOPs / (peak · efficiency(shape, precision)), bytes / (HBM bw · hbm_efficiency)) + kernel overhead
double gemm_time_s(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k, Precision p);
double gemm_efficiency(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k, Precision p);
// Flash-attention kernels: forward / backward time for `flops_fwd` forward FLOPs at sequence length seq_kv.
// `causal`: a causally masked kernel (FLOPs already halved by the caller) at attn_causal_efficiency of the curve.
double attention_fwd_time_s(const Hardware& hw, double flops_fwd, std::int64_t seq_kv, std::int64_t head_dim, Precision p,
                            bool causal = false);
double attention_bwd_time_s(const Hardware& hw, double flops_fwd, std::int64_t seq_kv, std::int64_t head_dim, Precision p,
                            bool causal = false);
// Memory-bound kernels (norms, activations, optimizer): bytes over achievable HBM bandwidth.
double memory_bound_time_s(const Hardware& hw, double bytes, int kernels = 1);

// ---- collectives (collectives.cpp) ----
enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast };
enum class CollAlgo { Auto, Ring, Tree, Hierarchical, NVLS, Direct };
std::string to_string(Collective c);
std::string to_string(CollAlgo a);

// Where a communicator's ranks sit: `size` ranks, `per_node` of them in each node (size = per_node × nodes).
// `concurrent_per_node` = how many GPUs of a node use the NICs at the same time for collectives of this kind
// (all of a node's GPUs in symmetric plans): they share the node's NICs.
struct GroupShape {
  int size = 1;
  int per_node = 1;
  int nodes = 1;
  int concurrent_per_node = 1;
};

struct CollectiveCost {
  double time_s = 0;
  CollAlgo algo = CollAlgo::Ring;
};
// S = bytes of the full buffer: all-reduce buffer, all-gather output, reduce-scatter input, send/recv message.
// Contract (tests/hardware): time never decreases with bytes; a group of one costs nothing; zero bytes cost latency.
// SendRecv is one message between neighbours of the group: it crosses the network when the group spans nodes (nodes > 1).
// Algorithms, Auto's choice and the fallback for a forced algorithm a collective lacks: collectives.cpp's header.
CollectiveCost collective_time(const Hardware& hw, Collective c, double bytes, const GroupShape& g,
                               CollAlgo algo = CollAlgo::Auto);
// Bus-bandwidth factor of nccl-tests (doc/PERFORMANCE.md): AR 2(n−1)/n, AG/RS/AllToAll (n−1)/n, others 1.
double bus_factor(Collective c, int n);

}  // namespace parsim
