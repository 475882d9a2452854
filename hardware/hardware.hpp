// parsim hardware/ — GPU, node network and collective-library descriptors, and the cost models that turn work into
// time. The hardware is data: the presets are JSON files in hardware/presets/ (compiled into the binary), a user's
// `--gpu FILE` has the same schema (hardware_io.cpp documents it), units live in the key names and every number
// carries its source in the file's "sources" object.
#pragma once
#include "sim/core/types.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace parsim {

// The GPU generation: selects NCCL's (RCCL's) tuning constants and per-link NVLink speed in the collective model.
enum class GpuArch { Ampere, Hopper, Blackwell, CDNA3, CDNA4 };
enum class CpuVendor { Intel, AMD, Arm };  // NCCL's low-latency bandwidth caps across nodes depend on it (tuning.cc)
enum class IntraTopology { Switch, FullMesh };  // NVSwitch (any pair at full per-GPU bandwidth) | xGMI point-to-point
enum class TierKind { ScaleUp, ScaleOut };     // NVLink/NVSwitch or xGMI domain | NICs (IB, RoCE, EFA, TCPXO)

// What one software stack's kernels achieve on this GPU ("the hardware as the stack sees it"). Selected by the
// stack name (hardware_for_stack). Today two stacks: "pytorch" (PyTorch-native: FSDP/DDP, FlashAttention-2 class
// SDPA, unfused fp8 casts) and "megatron" (Megatron-Core + Transformer Engine: cuDNN/FA3-class fused attention, fp8
// casts fused into the producing kernel). The profile holds measured kernel curves only: the fraction of the
// microbenchmark speed a training step sustains is ONE fitted value per stack, shared by every GPU
// (FittedConstants::sustained_megatron / sustained_pytorch, hardware/calibration.json). A user's hardware file may
// still pin it for its own cluster (`sustained_override`, JSON key "sustained_efficiency"); no preset does.
struct KernelProfile {
  double sustained_override = 0;      // 0 = the calibration's value for the stack; else a hardware file's own fit
  double attn_fwd_efficiency = 0.6;   // flash-attention forward at long sequences, fraction of dense peak
  double attn_fwd_seq_half = 512;     // sequence length at which the forward reaches half of that
  double attn_bwd_efficiency = 0.45;  // backward (2.5× the forward's FLOPs)
  double attn_bwd_seq_half = 512;
  double attn_head_dim_half = 0;      // this stack's attention kernels' head-dim roll-off (0: gpu.compute's)
  double fp8_cast_bytes_per_element = 3.0;  // HBM bytes per element to quantise a GEMM operand to fp8
  double collective_call_overhead_s = 0;    // host time of one collective call through the framework (Python →
                                            // c10d → NCCL launch); hidden when the host runs ahead of the GPU
};

// Compute-efficiency constants of one GPU, each with its provenance in the preset. The fields marked (stack) are
// the active kernel profile's values: hardware_for_stack() copies them in (the presets load "pytorch").
struct ComputeModel {
  double gemm_ceiling = 0.8;          // best large-GEMM fraction of dense peak (bf16/fp16): measured MAMF / datasheet
  double gemm_ceiling_fp8 = 0.7;      // same for fp8 GEMMs: measured fp8 MAMF / datasheet fp8 peak (a training step
                                      // runs fp8 GEMMs at FittedConstants::fp8_training_fraction of it)
  double gemm_ceiling_fp32 = 0.9;     // fp32 (SIMT or TF32-off) GEMMs
  double fp8_fast_accum_gain = 1.0;   // fp8 GEMMs with fast accumulation (the forward GEMM of Transformer Engine and
                                      // torchao float8) over the measured fp8 MAMF, which runs torch._scaled_mm's
                                      // default split accumulation: > 1 only where the tensor cores promote partial
                                      // sums to fp32 in software (Hopper); 1 where they accumulate in fp32 (Blackwell)
  int num_sms = 132;                  // streaming multiprocessors (CUs on AMD): wave quantisation
  double gemm_k_half = 64;            // k at which a GEMM's main loop reaches half its asymptotic efficiency share
  double attn_head_dim_half = 40;     // head-dim roll-off: d/(d+this), normalised to d = 128, capped at 1
  double hbm_efficiency = 0.8;        // achievable fraction of HBM bandwidth for streaming kernels
  double kernel_overhead_s = 4e-6;    // fixed cost per kernel (launch + tail)
  double layer_overhead_s = 0;        // framework/host overhead per layer per pass not hidden by async launch
  double comm_compute_slowdown = 0.0; // fractional compute slowdown while a communication kernel shares the SMs
  double attn_causal_override = 0;    // 0 = FittedConstants::attn_causal_efficiency; else a hardware file's own value
  double attn_block_overhead_tiles = 0;  // an attention kernel's fixed work per query-block CTA (loading Q, the
                                      // pipeline fill, writing O and the softmax statistics), in key-tile iterations
                                      // of 128 × 128: what a sliding window's short key loop pays on top of its tiles
  // (stack) the active kernel profile:
  bool megatron_kernels = false;      // the active profile is "megatron" (selects the calibration's sustained value)
  double sustained_override = 0;      // the profile's override (0 = the calibration's value for the stack)
  double attn_fwd_efficiency = 0.6;
  double attn_seq_half = 512;
  double attn_bwd_efficiency = 0.45;
  double attn_bwd_seq_half = 512;
  double attn_profile_head_dim_half = 0;  // the profile's head-dim roll-off (0: attn_head_dim_half above)
  double fp8_cast_bytes_per_element = 3.0;
};

struct GpuSpec {
  std::string name;
  GpuArch arch = GpuArch::Hopper;
  // Dense peak FLOP/s (no sparsity). fp8 = 0 when the chip has no fp8 tensor cores.
  double peak_fp32 = 0, peak_tf32 = 0, peak_bf16 = 0, peak_fp16 = 0, peak_fp8 = 0;
  double hbm_capacity_bytes = 0;  // what a framework can use (CUDA-visible), reported in GiB
  double hbm_bandwidth_Bps = 0;   // HBM bandwidth, bytes/s
  ComputeModel compute;
  std::map<std::string, KernelProfile> kernels;  // by stack name ("pytorch", "megatron")
  double peak_flops(Precision p) const;  // throws InputError for fp8 on a GPU without fp8
  bool has_fp8() const { return peak_fp8 > 0; }
};

// One tier of a node's network. Scale-up (NVLink through NVSwitch, or an xGMI mesh): bandwidth per GPU per direction.
// Scale-out (NICs): nics_per_node × nic_bits_per_s, shared by the node's GPUs; bw_Bps_unidir is the derived per-GPU
// share (finalize_hardware). Latencies are what a hop over the tier costs beyond NCCL's own per-step model (its
// hwLat tables were measured on NVLink and InfiniBand): ~0 for NVLink/IB, the fabric's one-way latency for EFA/TCPXO.
struct LinkTier {
  std::string name;                // "nvlink4", "xgmi", "ib-ndr", "efa", …
  TierKind kind = TierKind::ScaleUp;
  double bw_Bps_unidir = 0;        // per GPU, per direction, nominal (datasheet) — NVLink is quoted bidirectional!
  double efficiency = 0.8;         // achievable / nominal (ring busbw inside a node; NIC goodput across nodes)
  double latency_s = 0;            // extra one-way latency per hop over this tier
  // scale-up only
  IntraTopology topology = IntraTopology::Switch;
  int links_per_gpu = 0;           // NVLinks (xGMI links) per GPU; a full mesh needs one per peer
  bool nvls = false;               // NVLink SHARP: multicast/reduction in the NVSwitch (H100/H200/B200 NVSwitch)
  double nvls_efficiency = 0.9;    // achieved NVLS all-reduce algbw / (B·n/(n+1))
  int nvls_min_gpus = 5;           // NCCL enables NVLS from this many GPUs per node (5 H100/H200, 6 B200)
  // scale-out only
  int nics_per_node = 0;
  double nic_bits_per_s = 0;       // per NIC, Gb/s ×1e9 (InfiniBand/RoCE/EFA are quoted in bits per second)
  bool sharp = false;              // in-network reduction (SHARP, NCCL CollNet) on this fabric
};

struct NodeSpec {
  int gpus_per_node = 8;
  CpuVendor cpu = CpuVendor::Intel;
  // The host CPU that launches each GPU's kernels (one Python thread per rank): its name and the time one host
  // operation takes on it relative to the reference host of the issue-cost model (Xeon Platinum 8480C of a DGX H100,
  // docs/host-model.md §6.2): single-thread speed from the datasheet clocks and the core generation (preset sources).
  std::string host_cpu = "reference x86 server (Xeon Platinum 8480C class)";
  double host_time_factor = 1.0;
  // The CPU–GPU link of one GPU, GB/s (1e9 B/s) in EACH direction: what activation offloading to host memory moves
  // over (PCIe Gen4/Gen5 x16, NVLink-C2C on Grace superchips). 0: not stated (offloading is refused).
  double host_link_gbytes_per_s = 0;
  // The host (CPU) memory one GPU's share of the node has, GB (1e9 B): the node's DRAM divided by its GPUs — where
  // activation offloading puts what it moves. 0: not stated (offloading is not checked against it).
  double host_memory_gbytes_per_gpu = 0;
  std::vector<LinkTier> tiers;     // one scale-up tier first, then at most one scale-out tier (more kinds later:
                                   // NVL72-class NVLink domains, rail-optimised or multi-level fabrics)
  const LinkTier& scale_up() const;
  LinkTier& scale_up();
  const LinkTier* scale_out() const;  // null for a node without NICs (single-node systems)
  LinkTier* scale_out();
  // Shorthands the cost models use: intra = scale_up(), inter = scale_out() (throws when the node has no NICs).
  const LinkTier& intra() const { return scale_up(); }
  LinkTier& intra() { return scale_up(); }
  const LinkTier& inter() const;
  LinkTier& inter();
};

// How the cluster's collective library (NCCL, or RCCL on AMD) is configured: what it may choose from, its buffer and
// chunk sizes, and the latency its network plugin declares to NCCL's tuner. Defaults are NCCL's own
// (src/graph/tuning.cc, src/init.cc, src/transport/nvls.cc); cloud images change some of them (sources in the files).
enum : unsigned { kProtoLL = 1, kProtoLL128 = 2, kProtoSimple = 4 };
enum : unsigned { kAlgoTree = 1, kAlgoRing = 2, kAlgoCollNet = 4, kAlgoNVLS = 8, kAlgoNVLSTree = 16, kAlgoPAT = 32 };
struct CollectiveLibrary {
  std::string name = "nccl";         // "nccl" | "rccl"
  unsigned protocols = kProtoLL | kProtoLL128 | kProtoSimple;   // NCCL_PROTO
  unsigned algorithms = kAlgoTree | kAlgoRing | kAlgoCollNet | kAlgoNVLS | kAlgoNVLSTree | kAlgoPAT;  // NCCL_ALGO
  double buffsize_bytes = 4194304;   // NCCL_BUFFSIZE (Simple): 8 steps of buffsize/8 per channel
  double nvls_chunk_bytes = 131072;  // NCCL_NVLS_CHUNKSIZE
  double nvls_tree_chunk_bytes = 131072;  // NCCL_NVLSTREE_MAX_CHUNKSIZE (capped by the NVLS chunk)
  int min_channels = 0;              // NCCL_MIN_NCHANNELS (0 = NCCL's choice)
  int max_channels = 64;             // NCCL_MAX_NCHANNELS (MAXCHANNELS = 64)
  double net_latency_s = 0;          // network latency the net plugin declares to NCCL's tuner (choice only)
  bool gdr_flush = false;            // a GPUDirect flush read after each network receive (pre-Hopper GPUs)
  bool model_latency = true;         // false only in with_free_network(): no fixed latencies at all (not in JSON)
};

// The fitted constants of the model (hardware/calibration.json, compiled in): what the physics leaves unexplained, at
// most one value per software stack (or per precision), shared by every GPU. `parsim_accuracy --cv` refits them leaving
// one validation source out at a time. Loaded into every Hardware and read by the cost models at cost time (so a refit
// only replaces Hardware::calib); a user's hardware file may still set a stack's gpu.kernels.<stack>.sustained_efficiency
// or gpu.compute.attn_causal_efficiency for its own cluster (an explicit override, reported in its sources) — no
// preset does (tests/hardware/test_presets_io.cpp).
struct FittedConstants {
  double sustained_megatron = 0.84;      // fraction of microbenchmark speed GEMMs/attention sustain in a Megatron-Core step
  double sustained_pytorch = 0.74;       // … in a PyTorch-native (FSDP/DDP) step
  double fp8_training_fraction = 0.926;  // fp8 GEMMs in training relative to the best-shape fp8 MAMF
  double attn_causal_efficiency = 0.8;   // causal flash-attention kernels relative to the non-causal curves
  double host_megatron = 1.0;            // real host time per op of a Megatron-Core process / the micro-benchmark unit costs
  double host_legacy = 1.0;              // … of a legacy Megatron-LM / Megatron-DeepSpeed process (--stack megatron-legacy)
  double host_pytorch = 1.0;             // … of a PyTorch-native process
  double gpu_speed_spread_pct = 0.0;     // σ of chip-to-chip GPU speed (%): a synchronous step runs at the slowest
};
// The calibration compiled in from hardware/calibration.json, and that file's text (for the fitting tool).
const FittedConstants& default_fitted_constants();
const char* calibration_json_text();
// hardware/accuracy.json (compiled in): the measured error of parsim by regime (sim/step/accuracy.hpp reads it).
const char* accuracy_json_text();

struct Hardware {
  std::string name;                // preset name or file path
  GpuSpec gpu;
  NodeSpec node;
  CollectiveLibrary comm;
  FittedConstants calib = default_fitted_constants();
  std::map<std::string, std::string> sources;  // field path → provenance
};

// ---- presets and files (presets.cpp, hardware_io.cpp) ----
// A preset name (case-insensitive; `a100` = `a100-80gb`) or a JSON file (may start from a preset with
// {"base": "h100", ...} and override fields; unknown keys rejected). gpus_per_node > 0 overrides the node size, and the
// node's NIC count scales with it so each GPU keeps its share of NIC bandwidth.
Hardware resolve_hardware(const std::string& name_or_path, int gpus_per_node_override = 0);
std::vector<std::string> hardware_preset_names();
// The hardware as JSON in the file schema (what `--gpu FILE` accepts); used by `calibrate --out` and the JSON echo.
std::string hardware_to_json(const Hardware& hw);
// Whether `name` is a built-in preset's name or alias (case-insensitive).
bool is_hardware_preset(const std::string& name);
// A preset by name (case-insensitive, aliases accepted); throws InputError listing the valid names.
Hardware hardware_preset(const std::string& name);
// The JSON text of a preset as compiled in from hardware/presets/<name>.json (empty when there is none).
std::string hardware_preset_text(const std::string& canonical_name);
// Parses hardware JSON text (the file schema); `origin` names it in errors and in the provenance of overridden fields.
Hardware parse_hardware_json(const std::string& text, const std::string& origin);
// Applies a JSON document of the same schema on top of `hw` (every key optional, unknown keys rejected): how a
// calibration file overrides fitted constants such as gpu.kernels.<stack>.sustained_efficiency.
Hardware apply_hardware_overrides(const Hardware& hw, const std::string& text, const std::string& origin);
// Checks every field (peaks > 0, compute fractions in (0,1], link efficiencies > 0, a full mesh has a link per peer,
// one scale-up tier first, kernel profiles "pytorch" and "megatron" present); throws InputError naming the field.
void validate_hardware(const Hardware& hw);
// Recomputes derived fields (scale-out bw_Bps_unidir = nics × NIC bytes/s / gpus_per_node; the active kernel profile
// "pytorch" copied into gpu.compute). Called by the loaders.
void finalize_hardware(Hardware& hw);

// The hardware as the given software stack sees it: its kernel profile copied into gpu.compute. Stack names are the
// keys of gpu.kernels ("pytorch", "megatron"); an unknown name is an InputError listing them.
Hardware hardware_for_stack(const Hardware& hw, const std::string& stack);
// hardware_for_stack(hw, "megatron"): Megatron-Core + Transformer Engine kernels.
Hardware megatron_compute(const Hardware& hw);
// The legacy Megatron-LM / Megatron-DeepSpeed program's kernels (--stack megatron-legacy): the "pytorch" profile's
// curves (no Transformer Engine: apex and TorchScript fusions, cuBLAS GEMMs through torch) at the Megatron stack's
// sustained fraction — calibration.json's sustained_megatron, or the hardware file's own
// gpu.kernels.megatron.sustained_efficiency. The fraction is the training process's, and this one is Megatron's:
// the same ParallelTransformer model code, training loop and DDP that Megatron-Core's local spec (transformer_impl
// local, already at sustained_megatron) descends from; S54's legacy and local-spec CI runs of one GPT cost the same
// per step (docs/host-model.md §7.10(a)).
Hardware legacy_compute(const Hardware& hw);
// The same hardware with free communication (no latency, unbounded bandwidth): for analysis and contract tests.
Hardware with_free_network(Hardware hw);

// ---- network sharing (the scale-out tier as a shared resource; collectives.cpp) ----
// Nominal NIC bandwidth one GPU gets (bytes/s, before efficiency) when `concurrent` GPUs of its node use the node's
// NICs at once: nics·nic/concurrent, at most its own NICs (nics·nic/gpus_per_node) or one NIC, the larger. 0 when the
// node has no scale-out tier.
double nic_share_Bps(const NodeSpec& node, int concurrent);

// ---- compute cost (compute_cost.cpp) ----
// The fraction of microbenchmark speed the active stack's GEMMs and attention sustain in a training step: the hardware
// file's override, else hw.calib.sustained_megatron / sustained_pytorch by the active kernel profile.
double sustained_fraction(const Hardware& hw);
// Causal flash-attention kernels relative to the non-causal curves: the override, else hw.calib.attn_causal_efficiency.
double attn_causal_fraction(const Hardware& hw);
// Expected maximum of n independent standard normal draws (0 for n = 1): Blom's plotting position
// Φ⁻¹((n − 0.375)/(n + 0.25)) (Blom 1958) with Φ⁻¹ by Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4): within 0.8 % of
// the exact ∫ x·n·φ(x)·Φ(x)^(n−1) dx for n = 8…16,384 (1.4236 at 8, 2.5946 at 128, 3.6261 at 4,096), +4.4 % at n = 2.
double expected_max_std_normal(std::int64_t n);
// Compute-time factor of the slowest of `gpus` GPUs that synchronise every step: 1 + σ · E[max of n standard normals],
// σ = hw.calib.gpu_speed_spread_pct / 100 (chip-to-chip speed spread under power management, Sinha et al. SC'22).
double slowest_gpu_factor(const Hardware& hw, std::int64_t gpus);
// time = max(FLOPs / (peak · efficiency(shape, precision)), bytes / (HBM bw · hbm_efficiency)) + kernel overhead
// fast_accum: an fp8 GEMM run with fast accumulation (the forward GEMMs of Transformer Engine and torchao float8:
// TE _2X_ACC_FPROP = False, torchao Float8LinearConfig.gemm_config_output use_fast_accum=True; their dgrad and wgrad
// GEMMs split the accumulator) runs at ComputeModel::fp8_fast_accum_gain × the fp8 ceiling; no effect on other precisions.
double gemm_time_s(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k, Precision p,
                   bool fast_accum = false);
double gemm_efficiency(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k, Precision p,
                       bool fast_accum = false);
// `groups` GEMMs of one shape run as one grouped GEMM (the local experts of an MoE layer: Transformer Engine's
// GroupedLinear, CUTLASS grouped kernels): each group has its own weights and its own edge tiles, and all groups'
// tiles share the waves over the SMs; one kernel's fixed overhead. groups = 1 is gemm_time_s exactly.
double grouped_gemm_time_s(const Hardware& hw, int groups, std::int64_t m, std::int64_t n, std::int64_t k,
                           Precision p, bool fast_accum = false);
// Flash-attention kernels: forward / backward time for `flops_fwd` forward FLOPs at sequence length seq_kv.
// `causal`: a causally masked kernel (FLOPs already halved by the caller) at attn_causal_efficiency of the curve.
// `curve`: run another kernel profile's attention curves (efficiency and sequence ramp) instead of the active
// profile's, at the active stack's sustained fraction — a stack whose preferred attention backend is unavailable for
// the run (attention_fallback_profile); nullptr = the active profile.
double attention_fwd_time_s(const Hardware& hw, double flops_fwd, std::int64_t seq_kv, std::int64_t head_dim, Precision p,
                            bool causal = false, const KernelProfile* curve = nullptr);
double attention_bwd_time_s(const Hardware& hw, double flops_fwd, std::int64_t seq_kv, std::int64_t head_dim, Precision p,
                            bool causal = false, const KernelProfile* curve = nullptr);
// The kernel profile whose attention curves a Megatron-Core / Transformer Engine step runs instead of cuDNN's fused
// attention when TE cannot use it, or nullptr when it can (or when the hardware has no such profile). On Blackwell
// (compute capability ≥ 10.0) TE's cuDNN F16 arbitrary-seqlen backend refuses a deterministic training backward
// with attention dropout (NVIDIA/TransformerEngine transformer_engine/common/fused_attn/fused_attn.cpp
// nvte_get_fused_attn_backend, "determinism on Blackwell": deterministic bprop needs cuDNN ≥ 9.18.1, dropout 0 and
// no bias, since 27fc168e2 (2026-01, #2584); before it dot_product_attention/utils.py disabled FusedAttention for
// every deterministic training run on sm100), FlashAttention-3 and -4 refuse dropout (utils.py "Disabling
// FlashAttention 3/4 for dropout"), so TE runs flash-attn 2 (≥ 2.7.3 on Blackwell, FlashAttentionUtils
// version_required_blackwell): the preset's "pytorch" profile, FlashAttention-2 class on every preset.
const KernelProfile* attention_fallback_profile(const Hardware& hw, bool deterministic, bool attention_dropout);
// Memory-bound kernels (norms, activations, optimizer): bytes over achievable HBM bandwidth.
double memory_bound_time_s(const Hardware& hw, double bytes, int kernels = 1);

// ---- collectives (collectives.cpp, nccl_model.cpp) ----
enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast };
// Algorithms as NCCL names them (Tree, Ring, CollNet, NVLS, NVLSTree, PAT), plus Hierarchical (an explicit two-level
// intra RS → inter AR → intra AG schedule, not an NCCL algorithm: only when forced) and Direct (point-to-point: the
// p2p path of AllToAll/SendRecv, and RCCL's all-link schedule on an xGMI mesh).
enum class CollAlgo { Auto, Ring, Tree, Hierarchical, NVLS, Direct, NVLSTree, CollNet, PAT };
enum class CollProtocol { LL, LL128, Simple };
std::string to_string(Collective c);
std::string to_string(CollAlgo a);
std::string to_string(CollProtocol p);

// Where a communicator's ranks sit: `size` ranks, `per_node` of them in each node (size = per_node × nodes).
// `concurrent_per_node` = how many GPUs of a node use the NICs at the same time for collectives of this kind (all of
// a node's GPUs in symmetric plans): they share the node's NICs. `nic_fraction` = the fraction of this GPU's NIC share
// this collective gets while other collectives of the same rank use the NICs too (the engine sets it when it splits
// the NICs between concurrent dp/pp/cp/tp traffic; 1 = alone).
struct GroupShape {
  int size = 1;
  int per_node = 1;
  int nodes = 1;
  int concurrent_per_node = 1;
  double nic_fraction = 1.0;
};

struct CollectiveCost {
  double time_s = 0;
  CollAlgo algo = CollAlgo::Ring;
  CollProtocol protocol = CollProtocol::Simple;
  int channels = 0;             // NCCL channels (one CTA each) the call runs on
  double latency_s = 0;         // the fixed part of time_s (what the call costs at zero bytes)
  double nic_bytes = 0;         // bytes this rank sends over the scale-out tier (receives as many)
  double nic_busy_s = 0;        // time this rank's NIC share is busy moving them (≤ time_s)
};
// S = bytes of the full buffer: all-reduce buffer, all-gather output, reduce-scatter input, all-to-all send buffer
// (S/size to each peer), send/recv message, broadcast buffer.
// Contract (tests/hardware): time never decreases with bytes; a group of one costs nothing; zero bytes cost latency.
// Auto chooses algorithm, protocol and channel count the way NCCL's tuner does (nccl_model.cpp); a forced algorithm a
// collective lacks falls back to Auto, and CollectiveCost says what ran.
CollectiveCost collective_time(const Hardware& hw, Collective c, double bytes, const GroupShape& g,
                               CollAlgo algo = CollAlgo::Auto);
// Bus-bandwidth factor of nccl-tests (doc/PERFORMANCE.md): AR 2(n−1)/n, AG/RS/AllToAll (n−1)/n, others 1.
double bus_factor(Collective c, int n);
// Bytes one rank puts on the scale-out tier for this collective (0 when the group stays inside a node), by the
// algorithm Auto picks: what an engine that shares a rank's NICs between concurrent collectives splits bandwidth by.
double collective_nic_bytes(const Hardware& hw, Collective c, double bytes, const GroupShape& g);

}  // namespace parsim
