// parsim sim/step — analysis of an executed step: metrics (analysis/metrics.cpp), memory (analysis/memory.cpp), the
// periodic steady state (analysis/steady_state.cpp) and the run-level estimate (time-to-train, cost).
#pragma once
#include "sim/step/lowered.hpp"
#include "sim/step/report.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace parsim {

// ---- memory ----
struct StaticMemory {
  double weights = 0, grads = 0, optimizer = 0;  // bytes on one rank of the stage
  double fp8_cache = 0;   // Transformer Engine's fp8 weight + transpose copies kept across the step's micro-batches
  double workspace = 0;   // library workspaces allocated through PyTorch (Transformer Engine's cuBLAS workspace)
  double total() const { return weights + grads + optimizer + fp8_cache + workspace; }
};
// Parameters one rank of the stage holds (after TP / EP / ETP): its chunks' layers (PipelinePlacement: both copies
// under DualPipe), the embedding with the first virtual stage, the head with the last — split into dense parameters
// (reduced and sharded over DP×CP; embedding and head included) and routed-expert parameters (over expert-DP).
RankParams stage_params(const StepCosts& costs, int stage);
double stage_param_count(const StepCosts& costs, int stage);  // stage_params(...).total()
// Bytes per layer and micro-batch that a split backward keeps from B to W (Qi et al. 2024 Table 1: W needs the inputs
// X of the layer's weight GEMMs and their output gradients dY), for layers of `kind`, and the same for the embedding
// and the LM head.
struct WeightGradRetained {
  double per_layer = 0, embed = 0, head = 0;
};
WeightGradRetained weight_grad_retained_bytes(const Scenario& sc, LayerKind kind);
WeightGradRetained weight_grad_retained_bytes(const Scenario& sc);  // representative layer kind
StaticMemory static_memory(const Scenario& sc, const StepCosts& costs, int stage);
// Bytes one layer of `kind` keeps for its backward per micro-batch on one rank (models/activations.cpp with the
// scenario's options) — what activation offloading moves to the host (costs/offload.cpp).
double layer_activation_bytes(const Scenario& sc, LayerKind kind);
// CUDA context + NCCL buffers: held outside the allocator whatever the run allocates (memory.cpp).
double runtime_reserve_bytes(const Scenario& sc);
// Everything a process holds beyond its live tensors in steady state: runtime_reserve_bytes + the allocator's cache.
double overhead_bytes(const Scenario& sc, double allocated_bytes);
// Memory per stage from allocation events along the executed timeline; fills the report's memory section and the
// per-stage peaks. `counter` (optional) receives (stage, time_ns, bytes) samples for the trace's counter track.
struct MemorySample {
  int stage;
  std::int64_t time_ns;
  double bytes;
};
void timeline_memory(const Scenario& sc, const StepCosts& costs, const ExecutedStep& ex, StepReport& rep,
                     std::vector<MemorySample>* counter);
// The pre-check's walk of the pipeline order (the in-flight activations of every stage), memoised across plans by the
// sweep's evaluator: the walk's result depends only on the order — (schedule, pp, vpp, micro-batches) — and on the
// per-virtual-stage byte counts it adds up, so plans that differ in what the walk does not read (the sharding
// strategy, the optimizer, the data-parallel layout at equal micro-batch count) get the same per-stage peaks. Keyed on
// all of those inputs, the byte counts by bit pattern: a hit returns the numbers the walk would compute, bit for bit.
// Per evaluator (one per sweep thread): no sharing, no locking.
struct PrecheckMemo {
  struct KeyHash {
    std::size_t operator()(const std::vector<std::uint64_t>& k) const;
  };
  std::unordered_map<std::vector<std::uint64_t>, std::vector<double>, KeyHash> peaks;  // key → per-stage walk peaks
  std::vector<std::uint64_t> key;  // (the key being looked up: kept to avoid an allocation per plan)
  std::uint64_t hits = 0, misses = 0;
  static constexpr std::size_t kMaxEntries = 1 << 14;  // then it starts over (results are exact either way)
};
// schedules: a cache of generated pipeline orders shared with the lowering (the sweep's evaluator), or null; memo: the
// walk's memo (above), or null.
MemoryReport estimate_memory_from_costs(const Scenario& sc, const StepCosts& costs, ScheduleCache* schedules = nullptr,
                                        PrecheckMemo* memo = nullptr);

// ---- metrics ----
void compute_metrics(const Scenario& sc, const StepCosts& costs, const ExecutedStep& ex, StepReport& rep);
// MFU, HFU, TFLOP/s and tokens/s from rep.step_time_s (FLOPs from the scenario's global batch).
void finish_throughput(const Scenario& sc, StepReport& rep);

// ---- the periodic steady state ----
// The two micro-batch counts the extension plays out: g·pp and (g+1)·pp, g = ScheduleTraits::steady_groups.
std::pair<std::int64_t, std::int64_t> steady_state_runs(const Scenario& sc);
// Whether the step may be simulated for those two counts and extended (a periodic schedule, more micro-batches than
// (g+2)·pp, both runs valid shapes of the schedule, no timeline kept), and the extension itself: every time-like
// quantity linear in M.
bool steady_state_extendable(const Scenario& sc, bool keep_timeline, std::int64_t microbatches);
StepReport extend_steady_state(const Scenario& sc, const StepReport& a, const StepReport& b, std::int64_t m1,
                               std::int64_t m2, std::int64_t m);

}  // namespace parsim
