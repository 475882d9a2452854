// parsim plans/ — the plan grammar, training settings, validation against model and cluster, rank layout and
// process groups, pipeline schedules as data, and the plan space for the sweep.
#pragma once
#include "hardware/hardware.hpp"
#include "models/model.hpp"
#include "plans/schedule.hpp"
#include "plans/sharding.hpp"
#include "plans/training.hpp"
#include "sim/core/axis.hpp"
#include "sim/core/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parsim {


struct Plan {
  int tp = 1, pp = 1, dp = 1, cp = 1, vpp = 1;
  // Expert parallelism (MoE layers), Megatron-Core "parallel folding" (Liu et al. 2025, arXiv 2504.14960;
  // megatron/core/parallel_state.py, expert RankGenerator): attention layers use tp×cp×dp×pp, expert layers
  // etp×ep×edp×pp over the same GPUs, with edp = tp·cp·dp / (etp·ep). ep does not multiply the world size.
  int ep = 1;
  int etp = 0;  // expert tensor parallel; 0 = the same as tp (expert_tp())
  Sharding sharding = Sharding::None;
  int hsdp_group = 0;  // HSDP: shard group size (DP ranks); 0 otherwise
  int world() const { return tp * pp * dp * cp; }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  // Expert data parallel: the ranks of one pipeline stage that hold the same expert shard.
  int expert_dp() const { return tp * cp * dp / (expert_tp() * ep); }
  // The degree of an axis (ep: expert-parallel degree of the MoE layers).
  int degree(Axis a) const {
    switch (a) {
      case Axis::tp: return tp;
      case Axis::cp: return cp;
      case Axis::ep: return ep;
      case Axis::dp: return dp;
      case Axis::pp: return pp;
    }
    return 1;
  }
  // Canonical string, parseable by parse_plan: tp{}pp{}dp{}[cp{}][ep{}][etp{}][vpp{}][zero1|zero2|zero3|fsdp|hsdp{}],
  // degree-1 cp/ep/vpp omitted, etp only where it differs from tp, tp/pp/dp always written (e.g. "tp8pp2dp4",
  // "tp1pp1dp64fsdp", "tp2pp1dp32ep8").
  std::string to_string() const;
  friend bool operator==(const Plan&, const Plan&) = default;
};
inline std::int64_t TrainingConfig::micro_batches(const Plan& p) const { return gbs / (p.dp * mbs); }
// Grammar of docs/cli.md: terms in any order, case-insensitive, no separators; a missing degree is 1 (etp: tp).
// Errors (InputError): unknown term, repeated term, zero degree, two sharding terms, hsdp N not dividing dp.
// Also: a term without its number (`tp`), a number after `fsdp`, degrees above 2^20 or a world above 2^24 GPUs.
// `hsdp<N>` with N == dp (one shard group = fsdp) and N == 1 (nothing sharded) are accepted as written and reported
// by plan_warnings(); to_string() keeps them as hsdp<N>, so the string round-trips.
Plan parse_plan(const std::string& text);

// The contract's default global batch: ⌈4,194,304 / seq⌉ rounded up to a multiple of dp × mbs.
std::int64_t default_gbs(std::int64_t seq, int dp, std::int64_t mbs);

// The most micro-batches one step may hold per DP replica (gbs / (dp·mbs)); validation refuses more (issue 12: a
// step plays each out, and --gbs 2^40 on dp8 asked for 1.4·10^11). 2^20 ≥ the 10^6 a test simulates exactly.
inline constexpr std::int64_t kMaxMicroBatches = std::int64_t{1} << 20;

// Validation of a plan against model, hardware and settings. Throws InputError naming the value and what would be
// valid: heads and kv_heads vs tp (KV heads replicated when tp > kv_heads and tp % kv_heads == 0 — say so),
// pp·vpp ≤ layers, gbs % (dp·mbs) == 0, seq % (2·cp) == 0 when cp > 1, fp8 only where the GPU has it, interleaved
// needs vpp > 1 (and vpp > 1 needs m % pp == 0, Megatron), world % gpus_per_node when tp spans nodes, tp | ffn_hidden
// (etp | expert_ffn_hidden), at most kMaxMicroBatches micro-batches, …
void validate_plan(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t);
// The same checks without throwing: the message validate_plan would throw, or nullopt when the plan is valid
// (the sweep filters with it: no exceptions in the hot path).
std::optional<std::string> plan_error(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t);
// --recompute op (torchtitan's per-op checkpointing) against the stack, the attention kernel and the layers: the
// message plan_error gives, or nullopt where the settings admit it (also whenever t.recompute is not Op).
std::optional<std::string> recompute_op_error(const ModelSpec& m, const TrainingConfig& t);
// --no-rope-fusion on the Megatron stack: an error when the model has no rotary embedding or uses multi-latent
// attention (costs/layer.cpp prices rope_utils.py's unfused path of standard attention); nullopt otherwise. A model-
// and training-level check: plan_error asks it, and the sweep once per stack before enumerating it.
std::optional<std::string> rope_fusion_error(const ModelSpec& m, const TrainingConfig& t);
// A hybrid (single-block, Mamba-2) model's stack: Megatron-Core's MambaModel with Transformer Engine, no
// --moe-a2a-overlap; LatentMoE refuses --moe-shared-expert-overlap. The message plan_error gives, or nullopt. Model-
// and training-level: the sweep asks it once per stack before enumerating it.
std::optional<std::string> hybrid_stack_error(const ModelSpec& m, const TrainingConfig& t);
// --cpu-offloading-num-layers against the stack and the hardware: Transformer Engine modules on the Megatron stack and
// a stated CPU–GPU link (node.host_link_gbytes_per_s). The message plan_error gives, or nullopt. Training- and
// hardware-level: the sweep asks it once per stack before enumerating it.
std::optional<std::string> cpu_offload_stack_error(const Hardware& hw, const TrainingConfig& t);
// Non-fatal remarks worth reporting (e.g. "tp8 spans 2 nodes", "kv heads replicated 2x").
std::vector<std::string> plan_warnings(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t);

// Layers per model chunk, Megatron-Core style: pp·vpp chunks; chunk index = v·pp + stage (virtual stage v on
// pipeline rank `stage`). Layers that do not divide evenly are spread as evenly as possible with the remainder
// going to the middle chunks first so that the first and last stages (embedding, LM head) are lighter.
// Rule (plan.cpp): q = ⌊L/C⌋, r = L mod C over C = pp·vpp chunks; the C − r chunks that get q layers are taken
// from the two ends inwards, alternately (chunk 0, chunk C−1, chunk 1, chunk C−2, …), the rest get q + 1. This is
// Megatron-Core's --account-for-embedding/loss-in-pipeline-split outcome (the embedding and the loss each take a
// layer's slot in the first and last chunk): Llama-3.1-405B 126 layers on pp8×vpp8 → chunks 0 and 63 get 1, the other
// 62 get 2; BLOOM-176B 70 layers on pp12 → 5,6×10,5. Throws InputError when C > L or a value is not positive.
std::vector<int> layers_per_chunk(int layers, int pp, int vpp);
// With Megatron-Core's explicit options (PipelineSplit, plans/training.hpp), exactly as get_num_layers_to_build
// (megatron/core/transformer/transformer_block.py @d98e8a64):
//  - first/last stage layer counts F, Lst: the other stages split L − F − Lst evenly; every stage's count divides by
//    vpp (its chunks are equal). Not combined with the account-for options (Megatron asserts so); needs pp > 1.
//  - account for embedding / loss: the split is over L + e + l "layers" (e, l ∈ {0, 1}), evenly over pp stages and
//    their vpp chunks, and the first (last) virtual stage builds e (l) layers fewer — possibly none (Llama-3.1-405B's
//    126 layers on pp16 × vpp8: 128 slots, chunks 0 and 127 hold only the embedding and only the loss).
//  - a pipeline layout (--pipeline-model-parallel-layout): the decoder layers ('t') of each virtual stage as the
//    layout spells them (parse_pipeline_layout); not combined with the other options (Megatron-Core asserts so).
// With no option set, the three-argument rule above. Throws InputError naming the numbers when they do not divide.
std::vector<int> layers_per_chunk(int layers, int pp, int vpp, const PipelineSplit& split);
// Megatron-Core's pipeline layout string (megatron/core/transformer/pipeline_parallel_layer_layout.py
// PipelineParallelLayerLayout.parse_str_to_list): virtual stages separated by '|', in the order virtual stage v of
// pipeline rank p at index v·pp + p (parsim's chunk index); per stage 'E' embedding, 't' a decoder layer, 'm' an MTP
// layer, 'L' the LM head and loss; "(…)*n" repeats a group and "x*n" a character, groups first; commas are ignored.
// "Et*4|(t*4|)*14tmL" → 16 stages: Etttt, 14 × tttt, tmL. Returns one string of layer characters per virtual stage;
// throws InputError naming the layout on an unknown character or a malformed repeat.
std::vector<std::string> parse_pipeline_layout(const std::string& layout);
// The one stored copy of a layout string (PipelineSplit::layout): the same pointer for equal strings, nullptr for
// an empty one; thread-safe, kept for the life of the process.
const std::string* intern_pipeline_layout(const std::string& layout);
// parse_pipeline_layout of an interned layout, parsed once and kept with the interned string, so that the plan check,
// the layer split and the rendering of every plan of a sweep share one parse. `interned` must come from
// intern_pipeline_layout; throws parse_pipeline_layout's InputError (each call, the bad parse is not kept).
const std::vector<std::string>& pipeline_layout_stages(const std::string* interned);
// layers_per_chunk's branch for split.layout (plans/pipeline_layout.cpp): the decoder layers of each virtual stage.
std::vector<int> layout_layers_per_chunk(int layers, int pp, int vpp, const PipelineSplit& split);
// Layers held by each pipeline stage (sum over its vpp chunks).
std::vector<int> layers_per_stage(int layers, int pp, int vpp);

// ---- rank layout (layout.cpp) ----
// Megatron order tp-cp-dp-pp: rank = tp_i + tp·(cp_i + cp·(dp_i + dp·pp_i)); consecutive ranks fill a node.
struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};
RankCoord coord_of(const Plan& p, int rank);
int rank_of(const Plan& p, const RankCoord& c);
// Expert layers: the same rank as seen by Megatron-Core's expert generator (etp fastest, then ep, edp, pp).
struct ExpertCoord {
  int etp = 0, ep = 0, edp = 0, pp = 0;
};
ExpertCoord expert_coord_of(const Plan& p, int rank);
// ETP, EP, EDP: the expert layers' tensor-, expert- and data-parallel groups (parallel folding, layout.cpp).
// EPxETP: the ep·etp consecutive ranks of one EP group and their ETP peers (Megatron-Core's tp_ep group: the MoE
// all-gather dispatcher's group and the token-count exchange).
enum class GroupKind { TP, CP, DP, PP, DPxCP, HSDPShard, HSDPReplica, ETP, EP, EDP, EPxETP };
// Ranks of the process group of `kind` that contains `rank`.
std::vector<int> group_ranks(const Plan& p, GroupKind kind, int rank);
// Placement of that group on nodes of gpus_per_node GPUs, and how many GPUs per node run the same kind of
// collective at once (for NIC sharing) — the input of collective_time().
// Groups of one kind are translates of each other; when they sit the same way on every node (always for power-of-two
// degrees and whole nodes) the shape is exact with size = per_node × nodes. Otherwise (e.g. dp3 groups straddling
// 8-GPU nodes) the worst group is reported: its node count, per_node = ⌈size / nodes⌉. concurrent_per_node counts the
// GPUs of the busiest node whose group of this kind leaves the node (they share its NICs); it is 1, never 0, for
// groups that stay inside one node (no NIC traffic, the value does not matter there).
// HSDP groups use hsdp_group (0 = the whole DP group shards: HSDPShard = DP, HSDPReplica = a group of one).
GroupShape group_shape(const Plan& p, GroupKind kind, int gpus_per_node);
std::string to_string(GroupKind k);

// ---- plan space (space.cpp) — enumeration for the sweep ----
struct SpaceFilter {
  std::vector<int> tp, pp, dp, cp, vpp, mbs;  // empty = any
  std::vector<int> ep, etp;                   // MoE models only; empty = the defaults of space.cpp
  std::vector<Sharding> sharding;             // empty = any
  std::vector<Recompute> recompute;           // empty = any
  std::vector<int> sp;                        // {0,1}; empty = any
  int max_tp_per_node = 0;                    // 0 = gpus_per_node (no limit when `tp` lists values)
  std::vector<Schedule> schedule;             // empty = 1F1B (+ interleaved where vpp > 1); GPipe only when listed
};
struct Candidate {
  Plan plan;
  TrainingConfig train;
};
// Every structurally valid (plan, settings) for `gpus` GPUs: tp·pp·dp·cp = gpus, vpp with ≥ 1 layer per chunk,
// mbs dividing gbs/dp, sharding, recompute, sp (only when tp > 1), schedule. Deterministic order. Every candidate
// passes validate_plan. The space and its defaults are documented in space.cpp. base.seq = 0 → the model's seq_len;
// base.gbs = 0 → sweep_default_gbs(seq) for every candidate.
std::vector<Candidate> enumerate_space(const ModelSpec& m, const Hardware& hw, int gpus, const TrainingConfig& base,
                                       const SpaceFilter& f);
// A sweep compares plans at one global batch: ⌈4,194,304 / seq⌉ sequences (the contract's ~4M tokens), not rounded
// per plan; plans whose dp × mbs does not divide it are not in the space.
std::int64_t sweep_default_gbs(std::int64_t seq);

}  // namespace parsim
