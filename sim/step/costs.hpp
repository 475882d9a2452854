// parsim sim/step — per-pass costs of one training step, by concern:
//   costs/layer.cpp   one transformer layer's compute (GEMMs, attention, elementwise, fp8 casts, recompute), with the
//                     backward split into its input-gradient (dgrad) and weight-gradient (wgrad) halves;
//   costs/comm.cpp    the communication issued inside a pass (TP all-reduces / all-gathers / reduce-scatters, the CP
//                     ring) and the pipeline's point-to-point transfer;
//   costs/edges.cpp   the embedding and the LM head + loss, and WHERE they sit (edge_work: the one placement rule);
//   costs/host.cpp    the host: what issuing each pass, collective, sync and the per-step fixed work costs the CPU thread
//                     of a rank for the software stack (docs/host-model.md), and the kernel counts it issues;
//   costs/step.cpp    compute_step_costs(): the composition, parameters per rank, data-parallel groups.
#pragma once
#include "hardware/collective_memo.hpp"
#include "plans/scenario.hpp"
#include "sim/step/report.hpp"

#include <cstdint>
#include <vector>

namespace parsim {

// Cost of one pass (forward, backward, or a backward half) of some layers on one rank. TP and CP communication is
// issued inside the layer (Megatron runs it synchronously between GEMMs), so its exposed part lengthens the pass on
// the compute stream.
// The host side: issuing the pass costs the rank's CPU thread host_s for `kernels` GPU operations (kernels, memsets,
// NCCL calls), which the engine plays against the GPU time (sim/engine: a task cannot start before its first kernel
// is launched nor end before its last one is).
struct PassCost {
  double compute_s = 0;
  double tp_s = 0, tp_exposed_s = 0;
  double cp_s = 0, cp_exposed_s = 0;
  double ep_s = 0, ep_exposed_s = 0;  // expert-parallel all-to-all inside MoE layers (0 until they are simulated)
  double host_s = 0;                  // host issue time (s) of the pass on this rank
  double kernels = 0;                 // GPU operations the host issues for it
  // GPU time lost to a device→host sync inside the pass (the MoE dispatchers' token counts, costs/host.cpp): the
  // queue drains, the GPU idles through the sync and, where the host issues the rest of the layer slower than the
  // GPU runs it, through that difference too (the host can no longer run ahead of the GPU across the sync).
  double host_wait_s = 0;
  // The part of ep_s that --moe-a2a-overlap hides behind another micro-batch's pass (included in ep_s, not in
  // ep_exposed_s; its SM share is in compute_s): a pass the schedule runs alone — MCore's combined 1F1B runs the first
  // forward and the last backward of a stage without a partner — exposes it (lower/pipeline.cpp).
  double ep_overlap_s = 0;
  // GPU time the pass waits for activation offloading (--cpu-offloading-num-layers, costs/offload.cpp): a forward
  // layer for a free activation slot (an earlier layer's copy to the host), a backward layer for its reload.
  double offload_wait_s = 0;
  double duration_s() const {
    return compute_s + tp_exposed_s + cp_exposed_s + ep_exposed_s + host_wait_s + offload_wait_s;
  }
  double exposed_comm_s() const { return tp_exposed_s + cp_exposed_s + ep_exposed_s; }  // TP + CP + EP not hidden
  PassCost& operator+=(const PassCost& o);
  PassCost operator-(const PassCost& o) const;
  PassCost scaled(double k) const;
};

// The kinds of pass a schedule places (plans/plan.hpp PipeOp): forward, the combined backward, and the backward's two
// halves for schedules that split it (zero-bubble: B = input gradient, W = weight gradient).
enum class PassKind : std::uint8_t { Forward = 0, Backward = 1, BackwardInput = 2, BackwardWeight = 3 };
constexpr int kPassKinds = 4;

// The four costs of one piece of the model (a layer, the embedding, the head) by pass kind.
struct PassCosts {
  PassCost fwd, bwd, bwd_input, bwd_weight;
  PassCosts& operator+=(const PassCosts& o) {
    fwd += o.fwd, bwd += o.bwd, bwd_input += o.bwd_input, bwd_weight += o.bwd_weight;
    return *this;
  }
  const PassCost& operator[](PassKind k) const {
    switch (k) {
      case PassKind::Forward: return fwd;
      case PassKind::Backward: return bwd;
      case PassKind::BackwardInput: return bwd_input;
      case PassKind::BackwardWeight: return bwd_weight;
    }
    return fwd;
  }
};

// Where the embedding and the LM head + loss sit in a pass (the one placement rule, costs/edges.cpp): the embedding on
// the first virtual stage, before its first layer in the forward and after its last layer in the backward; the head on
// the last virtual stage, after its last layer forward and before its first layer backward. A pass split into
// segments carries them on the segment that touches that end.
struct EdgeWork {
  bool embedding = false, head = false;
};
// `vstage` of `vstages` virtual stages; `first_segment`/`last_segment`: whether this segment is the first/last one
// the pass runs (a backward runs its layers last to first). Inline: the lowering and the memory pre-check call it per
// pass.
inline EdgeWork edge_work(int vstage, int vstages, bool forward, bool first_segment, bool last_segment) {
  // Forward: embedding before the first layer, LM head after the last. Backward: the reverse (head first).
  EdgeWork e;
  e.embedding = vstage == 0 && (forward ? first_segment : last_segment);
  e.head = vstage == vstages - 1 && (forward ? last_segment : first_segment);
  return e;
}

// One kind of layer (models/ LayerKind): its pass costs for one micro-batch and the parameters one rank holds of it.
struct LayerKindCosts {
  LayerKind kind;
  PassCosts pass;
  RankParams params;  // dense (reduced over DP×CP) and expert (reduced over the expert-DP group) parameters per rank
  // What pass.fwd.compute_s and pass.bwd.compute_s are made of (layer_costs): reported by predict, not simulated.
  PassParts fwd_parts, bwd_parts;
};

// An F&B pair (DualPipe, DeepSeek-V3 report §3.2.1: "overlap the computation and communication within a pair of
// individual forward and backward chunks"): the in-pass communication of each pass (TP, CP, EP — what PassCost
// counts as exposed) runs while the other pass computes, so it is hidden up to the other's compute time; while it
// runs, the communication kernels take SMs from that compute (the device's comm_compute_slowdown, as the engine
// charges for communication streams). How one pass of the pair changes, applied to each of its segments:
struct PairOverlap {
  double keep_exposed = 1;   // factor on its exposed communication (what the partner's compute does not hide)
  double compute_scale = 1;  // factor on its compute (SM contention from the partner's hidden communication)
  PassCost apply(const PassCost& c) const;
};
// The two passes' whole costs → how each changes (first for `a`, second for `b`).
std::pair<PairOverlap, PairOverlap> overlap_pair(const PassCost& a, const PassCost& b, double comm_compute_slowdown);

// The host of one rank (docs/host-model.md §6): the stack's issue costs on this node's CPU, and what the framework does
// around the passes. Times are seconds of real host time (the stack's unit costs on the reference host × `factor`).
// How the stack issues work (docs/host-model.md §4): Megatron-Core with Transformer Engine's fused modules, Megatron-Core
// with its local spec (--transformer-impl local: torch matmul linears, apex/Megatron fused kernels, torch.compile
// fusions; Megatron-Core's training loop), legacy Megatron-LM's local implementation (unfused ops, TorchScript
// fusions), PyTorch eager (Hugging Face, torchtitan, llm-foundry with FSDP).
enum class HostStack : std::uint8_t { MegatronCoreTE, MegatronCoreLocal, MegatronLocal, PyTorchEager };
// Megatron-Core's training loop (loss and gradient NaN checks with their syncs, the post-step reductions).
inline bool megatron_core(HostStack s) { return s == HostStack::MegatronCoreTE || s == HostStack::MegatronCoreLocal; }
const char* host_stack_name(HostStack s);
// Which fitted host constant of hardware/calibration.json scales a run's host (sim/step/costs/host.cpp host_model), one
// per software stack: PyTorch-native processes host_pytorch, Megatron-Core (TE or local spec) host_megatron, the legacy
// Megatron-LM / Megatron-DeepSpeed program (--stack megatron-legacy) host_legacy.
enum class HostConstant : std::uint8_t { Pytorch, Megatron, Legacy };
HostConstant host_constant(HostStack s);
HostConstant host_constant(const TrainingConfig& t);
// The calibration field that holds a host constant — the one mapping from constant to field, read by host_model and
// by the cross-validation's row_depends (tests/validation/cross_validation.hpp).
double FittedConstants::*host_constant_field(HostConstant c);
struct HostModel {
  HostStack stack = HostStack::MegatronCoreTE;
  bool megatron() const { return stack != HostStack::PyTorchEager; }
  bool cuda_graphs = false;   // layer passes replayed as CUDA graphs (one launch each)
  double factor = 1;          // calibrated host factor of the stack × the node's host_time_factor
  int launch_queue = 1024;    // kernels that may wait for the GPU before a launch blocks
  double op_s = 0;            // one eager ATen op with its launch
  double coll_s = 0;          // issuing one NCCL collective through torch.distributed (× host_time_factor only)
  double sync_s = 0;          // a device→host sync round trip once the GPU is drained
  // The GPU's idle time at such a sync beyond the host's catch-up: the round trip and the relaunch of the next kernel.
  double resync_s() const { return sync_s + op_s; }
  double p2p_s = 0;           // a batched pipeline send/recv (batch_isend_irecv)
  // Per micro-batch
  double data_s = 0;          // get_batch on the first and last pipeline stages
  bool data_sync = false;     // … with a blocking size broadcast over TP (legacy broadcast_data)
  int loss_syncs = 0;         // device→host syncs after the loss (Megatron's NaN/Inf checks of the loss)
  bool p2p_sync = false;      // torch.cuda.synchronize() after every batched p2p (Megatron without interleaving)
  int timer_syncs_fwd = 0;    // torch.cuda.synchronize() calls of Megatron's per-pass timers (--timing-log-level 2),
  int timer_syncs_bwd = 0;    // around each forward / backward pass (one after it, the rest before)
  // Data-parallel collectives: host per call beyond coll_s (FSDP's per-unit pre/post hooks) and extra copy kernels
  double dp_call_extra_s = 0;
  int dp_call_extra_kernels = 0;
  // Per step (stage-level: the optimizer of the stage's parameters and the fixed work of the framework)
  double step_begin_s = 0;    // zero_grad and the step's Python before the first micro-batch
  double grad_check_s = 0;    // NaN check of the gradient buckets (syncs)
  int grad_check_syncs = 0;
  double pre_step_s = 0;      // fp16 found-inf and grad-norm (syncs) before the update
  int pre_step_syncs = 0;
  double optimizer_s = 0;     // issuing the optimizer's multi-tensor kernels and its Python over the parameters
  double optimizer_kernels = 0;
  double post_step_s = 0;     // reductions of update_successful / grad norm after the step, and logging (syncs)
  int post_step_syncs = 0;
};

// Everything the lowering needs, computed once per scenario from the cost models.
struct StepCosts {
  // The model's distinct layer kinds (in order of first appearance), each costed once; a range of layers costs
  // Σ count(kind) · cost(kind). Uniform models have one kind and cost n · cost (exactly the pre-issue-10 arithmetic).
  std::vector<LayerKindCosts> kinds;
  std::vector<int> kind_prefix;       // kinds.size() × (layers + 1): layers of kind j among layers [0, i) at j·(L+1)+i
                                      // (empty for uniform models)
  bool has_expert_params = false;     // some layer holds routed experts (reduced over the expert-DP group)
  PassCosts layer;                    // kinds[0].pass: every layer's costs when the model is uniform
  PassCosts embed;                    // first virtual stage (embedding lookup; its gradient is a weight gradient)
  PassCosts head;                     // last virtual stage: final norm, LM head, loss
  double p2p_s = 0;                   // one activation (or gradient) transfer between adjacent pipeline stages
  double p2p_bytes = 0;
  double p2p_nic_s = 0;               // … the part of p2p_s the rank's NIC share is busy (0 when the stages share a node)
  // In-pass communication that crosses nodes (a TP, CP or EP group spanning nodes): the share of its time the rank's
  // NIC share is busy (CollectiveCost::nic_busy_s / time_s of the axis's collective at the layer's message size; 0
  // when the group stays inside a node). The lowering declares a pass's NIC part, Σ share · PassCost::{tp,cp,ep}_s,
  // to the engine, which shares the rank's NICs between it and the concurrent DP / pipeline transfers.
  PerAxis<double> nic_share{};
  std::vector<int> layers_per_chunk;  // pp·vpp pieces, index = virtual stage (PipelinePlacement::vstage)
  PipelinePlacement placement;        // where the virtual stages sit (the schedule's)
  // Parameters held per rank (after TP / EP / ETP split), for gradient/parameter traffic and the optimizer.
  double layer_params = 0;            // kinds[0].params.total(): every layer's when the model is uniform
  double embed_params = 0, head_params = 0;
  // The MTP modules' parameters per rank (on the head's stage, Megatron places them with the loss): each module's
  // blocks (layer_params_per_rank of mtp_module_kinds), eh_proj 2h·h/t and three norms; once with mtp_repeated.
  RankParams mtp_params{};
  // What the head's stage holds beyond its layers: the LM head (+ final norm) and the MTP modules.
  RankParams head_stage_params() const { return {head_params + mtp_params.dense, mtp_params.expert}; }
  // Data-parallel group (DP×CP: gradients reduce over both, Megatron-Core) and HSDP sub-groups. A schedule with two
  // parameter copies (DualPipe) reduces each copy's gradients together with its mirror stage's: the group doubles.
  GroupShape dp_group, shard_group, replica_group;
  int shard_degree = 1;               // ZeRO/FSDP sharding degree of optimizer state
  // Expert parameters (MoE layers): reduced and sharded over the expert-data-parallel group (Megatron-Core's
  // expert_data_parallel_group: the ranks of a stage holding the same expert shard, edp = tp·cp·dp / (etp·ep)).
  GroupShape edp_group;
  int expert_shard_degree = 1;
  double optimizer_bytes_per_param = 0;  // HBM bytes the optimizer step moves per owned parameter
  HostModel host;                        // the rank's host (costs/host.cpp)
  // --cpu-offloading-num-layers (costs/offload.cpp): one micro-batch's offloaded bytes (each way) and the waits its
  // forward and backward take for the copies, which the lowering adds to the pass (values.cpp compose).
  struct Offload {
    int layers = 0;
    double bytes = 0;
    double fwd_wait_s = 0, bwd_wait_s = 0;
  } offload;
  std::vector<double> stage_host_optimizer_s, stage_host_optimizer_kernels;  // per stage (its own parameters)

  bool uniform() const { return kinds.size() <= 1; }
  // Layers of kinds[j] among layers [first, last).
  int count(std::size_t j, int first, int last) const {
    if (uniform()) return last - first;
    const std::size_t row = j * (kind_prefix.size() / kinds.size());
    return kind_prefix[row + static_cast<std::size_t>(last)] - kind_prefix[row + static_cast<std::size_t>(first)];
  }
  // The kind entry of layer i.
  const LayerKindCosts& kind_of(int i) const {
    if (uniform()) return kinds.front();
    for (std::size_t j = 0; j < kinds.size(); ++j)
      if (count(j, i, i + 1) > 0) return kinds[j];
    return kinds.front();
  }
  // Σ over the kinds of layers [first, last) of count · f(kind entry) — the one way a range is costed.
  template <class T, class F>
  T sum_range(int first, int last, F per_kind) const {
    if (uniform()) return per_kind(kinds.front(), last - first);
    T acc{};
    for (std::size_t j = 0; j < kinds.size(); ++j) {
      const int n = count(j, first, last);
      if (n > 0) acc += per_kind(kinds[j], n);
    }
    return acc;
  }
  // One pass over layers [first, last).
  PassCost range_cost(PassKind pk, int first, int last) const {
    return sum_range<PassCost>(first, last, [pk](const LayerKindCosts& k, int n) { return k.pass[pk].scaled(n); });
  }
  // Parameters one rank holds of layers [first, last).
  RankParams range_params(int first, int last) const {
    return sum_range<RankParams>(first, last, [](const LayerKindCosts& k, int n) { return k.params.scaled(n); });
  }
};
// megatron_hw: megatron_compute(sc.hw) when the caller already holds it (the sweep derives it once for all its plans
// instead of copying the hardware per plan); null: derived here when the stack is Megatron.
// memos: memos of collective_time (hardware/collective_memo.hpp) the caller keeps across plans — `plain` serving
// sc.hw, `megatron` serving *megatron_hw — or null (every collective computed). Exact: the same costs either way.
struct CollectiveMemos {
  CollectiveMemo* plain = nullptr;
  CollectiveMemo* megatron = nullptr;
};
StepCosts compute_step_costs(const Scenario& sc, const Hardware* megatron_hw = nullptr,
                             const CollectiveMemos* memos = nullptr);

// ---- the pieces (internal to compute_step_costs; exposed for the derived-number tests) ----
// The layer kinds' forward and combined backward as predict reports them (StepReport::layer_kinds): their PassParts,
// exposed in-pass communication, host wait and issue, with the count of each kind in the model.
std::vector<LayerKindReport> layer_kind_reports(const Scenario& sc, const StepCosts& k);
// Activation offloading for one micro-batch (costs/offload.cpp): `layer_bytes[i]` what layer i keeps for its backward.
StepCosts::Offload offload_schedule(const Scenario& sc, const StepCosts& k, const std::vector<double>& layer_bytes);

struct CostContext {
  const Scenario& sc;
  const Hardware& hw;             // the stack's kernels (megatron_compute for Megatron-Core)
  GroupShape tp_group, cp_group;
  bool tp_overlap;
  CollectiveMemo* collectives = nullptr;  // a memo serving `hw` (compute_step_costs' memos), or null
};
// collective_time(c.hw, k, bytes, g), through c.collectives when there is one (the same cost).
CollectiveCost context_collective(const CostContext& c, Collective k, double bytes, const GroupShape& g);
// A collective on a group; 0 for a group of one.
double group_collective_s(const CostContext& c, Collective k, double bytes, const GroupShape& g);
// Adds `total` TP communication to a pass; with TE userbuffer overlap it hides behind `overlappable_s` of GEMM time
// except for the first chunk (≈ 1/tp, at least 1/2).
// `pass`: the forward (or a recompute of it) or a backward pass (PyTorch's async TP hides only the forward's).
enum class TpPass { Forward, Backward };
void add_tp_comm(const CostContext& c, PassCost& p, double total, double overlappable_s,
                 TpPass pass = TpPass::Forward);
// One activation tensor of a micro-batch on one rank: b·(s/cp)·h elements (domain-notes §6).
double activation_bytes(const Scenario& sc);
// Megatron's scale-mask-softmax on its unfused attention path (the legacy program, Megatron-Core's local spec):
// FusedScaleMaskSoftmax runs its fused kernel only where is_kernel_available admits the shape and otherwise eager
// PyTorch ops in fp32 (layer.cpp megatron_softmax). What the eager path costs beyond the fused kernel, per score
// (one element of the b·np·sq·sk tensor).
struct SoftmaxPath {
  bool fallback = false;                              // the eager path ran
  int extra_kernels_fwd = 0, extra_kernels_bwd = 0;   // beyond the fused kernel's one each way
  double extra_bytes_fwd = 0, extra_bytes_bwd = 0;    // HBM traffic beyond the fused kernel's
  double extra_saved_bytes = 0;                       // kept for the backward beyond the fused path's
};
SoftmaxPath megatron_softmax(const Scenario& sc);
// One layer of kind `kind` (models/ LayerKind: dense or MoE FFN × full, sliding-window or latent attention, or a hybrid
// model's single block — a Mamba-2 mixer, attention, MLP or MoE alone): compute, TP/CP/EP communication, recompute.
// Without a kind: the model's representative kind (uniform models).
PassCosts layer_costs(const CostContext& c, LayerKind kind);
// … and what the forward's and the combined backward's compute_s are made of (PassParts), when fwd / bwd are given.
PassCosts layer_costs(const CostContext& c, LayerKind kind, PassParts* fwd, PassParts* bwd);
// The TP collectives' share of each half of a layer, in units of one half's all-gather + reduce-scatter (SP) or
// all-reduce: the token mixer (attention, MLA or a Mamba mixer: column-parallel in, row-parallel out) one, a dense
// FFN one, an MoE block one without SP (its output reduced over the TP group) and with SP only when it has shared
// experts (a TP-split MLP; the routed tokens take the dispatcher's own exchange, Megatron-Core moe_layer.py). The one
// rule layer_costs, selective recompute and the host inventory (host.cpp) count TP collectives by.
struct TpHalves {
  double mixer = 0, ffn = 0;
  double total() const { return mixer + ffn; }
};
TpHalves tp_halves(const Scenario& sc, LayerKind kind);
PassCosts layer_costs(const CostContext& c);
// A Mamba-2 mixer's memory-bound kernels (conv1d, the chunked scan, the grouped gated RMSNorm) on one rank for one
// micro-batch, as Megatron-Core's memory-efficient path runs them (costs/layer.cpp mamba_work documents the count):
// HBM bytes and launches each direction, and the scan's matmul FLOPs. All zero for a layer without a Mamba mixer.
// ssd_*_bytes: the part of the bytes that the chunked scan's Triton kernels move (the cumsum, chunk-state,
// state-passing, C·Bᵀ and chunk-scan kernels and their backward), which run at kSsdBandwidthShare of the GPU's
// achievable bandwidth (layer.cpp); the rest (conv1d, gated norm, copies, PyTorch glue) streams at the full rate.
struct MambaWork {
  double fwd_bytes = 0, bwd_bytes = 0;
  double ssd_fwd_bytes = 0, ssd_bwd_bytes = 0;  // (included in fwd_bytes / bwd_bytes)
  double fwd_flops = 0, bwd_flops = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
};
MambaWork mamba_work(const Scenario& sc, const LayerWork& lw);
// The share of the GPU's achievable HBM bandwidth (hbm_bandwidth × hbm_efficiency) at which the Mamba-2 chunked
// scan's Triton kernels move the bytes mamba_work counts for them (measured on H100: costs/layer.cpp).
constexpr double kSsdBandwidthShare = 0.42;
// The expert split an MoE layer runs with: ep and etp of the plan, the busiest rank's load over the mean
// (--moe-imbalance; 1 with a single EP rank, capped by --moe-capacity-factor when tokens are dropped).
ExpertSplit expert_split(const Scenario& sc);
// The expert-parallel communication of one MoE layer, one micro-batch, one rank (costs/comm.cpp): the token
// dispatcher's collectives forward and backward, and the part of them the shared experts can run beside
// (--moe-shared-expert-overlap: the token all-to-alls).
struct MoeComm {
  double fwd_s = 0, bwd_s = 0;
  double a2a_fwd_s = 0, a2a_bwd_s = 0;
};
MoeComm moe_comm(const CostContext& c, const LayerWork& lw, const ExpertSplit& x);
// What selective recompute re-runs before one layer's input gradient, by Megatron-Core module (tr.recompute_modules;
// layer.cpp documents each): attn_f the attention core's forward, tp_f the layer's forward TP collectives, ep its
// MoE dispatch/combine.
PassCost selective_recompute(const CostContext& c, LayerKind kind, const LayerWork& lw, double attn_f, double tp_f,
                             const MoeComm& ep);
// Adds `total` EP communication to a pass: synchronous on the compute stream (Megatron-Core's dispatchers block the
// layer), except what the shared experts hide when they overlap the dispatch (min(hideable, shared_s)) or, with
// --moe-a2a-overlap, what the other direction's compute of another micro-batch covers (min(hideable, other_pass_s)).
void add_ep_comm(const CostContext& c, PassCost& p, double total, double hideable, double shared_s,
                 double other_pass_s = 0);
// Embedding and LM head + loss.
void edge_costs(const CostContext& c, PassCosts& embed, PassCosts& head);
// The multi-token-prediction modules (DeepSeek-V3 §2.2, Megatron-Core --mtp-num-layers) on the last virtual stage:
// per module the shifted-token embedding, eh_proj, one more transformer layer of the last layer's kind (`last_layer`,
// host issue included) and the shared LM head + loss again (`head` before the call). Added to `head`.
void add_mtp_costs(const CostContext& c, const PassCosts& embed, const PassCosts& last_layer, PassCosts& head);
// One pipeline transfer: its time (s), its bytes, and the time the rank's NIC share is busy with it (s; 0 when the
// adjacent stages share a node).
struct P2PCost {
  double time_s = 0, bytes = 0, nic_s = 0;
};
P2PCost p2p_cost(const CostContext& c);
// The host (costs/host.cpp): the stack's model for this scenario; the issue cost and kernels of one layer's passes
// (recompute included) and of the embedding and head; the per-step optimizer work of one stage.
HostModel host_model(const Scenario& sc);
// The layer's issue cost for its kind: an MoE layer issues the router, the dispatcher and a grouped GEMM per local
// expert instead of the dense MLP, and waits on the dispatcher's device→host sync once per forward (host_wait_s).
void add_layer_host(const CostContext& c, const HostModel& h, PassCosts& layer, LayerKind kind);
void add_edge_host(const CostContext& c, const HostModel& h, PassCosts& embed, PassCosts& head);
void add_step_host(const Scenario& sc, StepCosts& k);
// Kernels one multi_tensor_apply launches over `tensors` tensors of `elements` elements in all (PyTorch's
// MultiTensorApply.cuh rule: a launch per 320 blocks of 65,536 elements or per depth_to_max_tensors tensors).
double multi_tensor_launches(double tensors, double elements, int depth);

}  // namespace parsim
