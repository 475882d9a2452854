// parsim plans/ — the plan grammar, training settings, validation against model and cluster, rank layout and
// process groups, pipeline schedules as data, and the plan space for the sweep.
#pragma once
#include "hardware/hardware.hpp"
#include "models/model.hpp"
#include "sim/core/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

enum class Sharding { None, Zero1, Zero2, Zero3, FSDP, HSDP };  // None = plain DDP (`zero0`)
std::string to_string(Sharding s);

struct Plan {
  int tp = 1, pp = 1, dp = 1, cp = 1, vpp = 1;
  Sharding sharding = Sharding::None;
  int hsdp_group = 0;  // HSDP: shard group size (DP ranks); 0 otherwise
  int world() const { return tp * pp * dp * cp; }
  // Canonical string, parseable by parse_plan: tp{}pp{}dp{}[cp{}][vpp{}][zero1|zero2|zero3|fsdp|hsdp{}],
  // degree-1 cp/vpp omitted, tp/pp/dp always written (e.g. "tp8pp2dp4", "tp1pp1dp64fsdp").
  std::string to_string() const;
};
// Grammar of ../shared/docs/cli.md: terms in any order, case-insensitive, no separators; a missing degree is 1.
// Errors (InputError): unknown term, repeated term, zero degree, two sharding terms, hsdp N not dividing dp.
Plan parse_plan(const std::string& text);

enum class Schedule { GPipe, OneFOneB, Interleaved };
std::string to_string(Schedule s);
Schedule parse_schedule(const std::string& s);

struct TrainingConfig {
  std::int64_t seq = 0;    // tokens per sequence
  std::int64_t gbs = 0;    // global batch, sequences per optimizer step
  std::int64_t mbs = 1;    // micro-batch, sequences
  Recompute recompute = Recompute::None;
  bool sp = false;
  Precision precision = Precision::BF16;
  Schedule schedule = Schedule::OneFOneB;  // Interleaved is implied by vpp > 1
  // Data-parallel and overlap options (Megatron-Core / PyTorch defaults, documented in the README).
  double bucket_bytes = 25e6;         // DDP gradient bucket (PyTorch DDP bucket_cap_mb = 25)
  bool overlap_grad_reduce = true;    // Megatron --overlap-grad-reduce; DDP overlaps buckets with backward
  bool overlap_param_gather = true;   // Megatron --overlap-param-gather (ZeRO-1 AG overlapped with next forward)
  bool tp_comm_overlap = false;       // Megatron --tp-comm-overlap (TE userbuffers): TP comm hidden behind GEMMs
  bool overlap_p2p = true;            // Megatron overlap of PP send/recv with compute
  bool fsdp_no_sync = false;          // FSDP/ZeRO-3 gradient sync only at the last micro-batch (unsharded grads)
  std::int64_t micro_batches(const Plan& p) const { return gbs / (p.dp * mbs); }
};
// The contract's default global batch: ⌈4,194,304 / seq⌉ rounded up to a multiple of dp × mbs.
std::int64_t default_gbs(std::int64_t seq, int dp, std::int64_t mbs);

// Validation of a plan against model, hardware and settings. Throws InputError naming the value and what would be
// valid: heads and kv_heads vs tp (KV heads replicated when tp > kv_heads and tp % kv_heads == 0 — say so),
// pp·vpp ≤ layers, gbs % (dp·mbs) == 0, seq % (2·cp) == 0 when cp > 1, fp8 only where the GPU has it, interleaved
// needs vpp > 1 (and vpp > 1 needs m % pp == 0, Megatron), world % gpus_per_node when tp spans nodes, …
void validate_plan(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t);
// Non-fatal remarks worth reporting (e.g. "tp8 spans 2 nodes", "kv heads replicated 2x").
std::vector<std::string> plan_warnings(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t);

// Layers per model chunk, Megatron-Core style: pp·vpp chunks; chunk index = v·pp + stage (virtual stage v on
// pipeline rank `stage`). Layers that do not divide evenly are spread as evenly as possible with the remainder
// going to the middle chunks first so that the first and last stages (embedding, LM head) are lighter.
std::vector<int> layers_per_chunk(int layers, int pp, int vpp);

// ---- rank layout (layout.cpp) ----
// Megatron order tp-cp-dp-pp: rank = tp_i + tp·(cp_i + cp·(dp_i + dp·pp_i)); consecutive ranks fill a node.
struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};
RankCoord coord_of(const Plan& p, int rank);
int rank_of(const Plan& p, const RankCoord& c);
enum class GroupKind { TP, CP, DP, PP, DPxCP, HSDPShard, HSDPReplica };
// Ranks of the process group of `kind` that contains `rank`.
std::vector<int> group_ranks(const Plan& p, GroupKind kind, int rank);
// Placement of that group on nodes of gpus_per_node GPUs, and how many GPUs per node run the same kind of
// collective at once (for NIC sharing) — the input of collective_time().
GroupShape group_shape(const Plan& p, GroupKind kind, int gpus_per_node);

// ---- pipeline schedules (schedule.cpp) — each schedule is data: the order of passes on each stage ----
struct PipeOp {
  enum Kind : std::uint8_t { Forward, Backward } kind;
  int microbatch;
  int chunk;  // model chunk on this stage, 0..vpp-1 (virtual stage = chunk·pp + stage)
};
// ops[stage] = the compute order on that stage. Contract (tests/plans): every (microbatch, chunk) appears once as
// Forward and once as Backward on every stage, forward before backward; GPipe: all forwards then all backwards;
// 1F1B: warm-up p−i−1 forwards then alternate; interleaved: Megatron-Core's order (groups of p micro-batches).
std::vector<std::vector<PipeOp>> pipeline_schedule(Schedule s, int pp, int vpp, int microbatches);

// ---- plan space (space.cpp) — enumeration for the sweep ----
struct SpaceFilter {
  std::vector<int> tp, pp, dp, cp, vpp, mbs;  // empty = any
  std::vector<Sharding> sharding;             // empty = any
  std::vector<Recompute> recompute;           // empty = any
  std::vector<int> sp;                        // {0,1}; empty = any
  int max_tp_per_node = 0;                    // 0 = gpus_per_node
};
struct Candidate {
  Plan plan;
  TrainingConfig train;
};
// Every structurally valid (plan, settings) for `gpus` GPUs: tp·pp·dp·cp = gpus, vpp with ≥ 1 layer per chunk,
// mbs dividing gbs/dp, sharding, recompute, sp (only when tp > 1), schedule. Deterministic order.
std::vector<Candidate> enumerate_space(const ModelSpec& m, const Hardware& hw, int gpus, const TrainingConfig& base,
                                       const SpaceFilter& f);

}  // namespace parsim
