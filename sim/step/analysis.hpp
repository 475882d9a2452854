// parsim sim/step — analysis of an executed step: metrics (analysis/metrics.cpp), memory (analysis/memory.cpp), the
// periodic steady state (analysis/steady_state.cpp) and the run-level estimate (time-to-train, cost).
#pragma once
#include "sim/step/lowered.hpp"
#include "sim/step/report.hpp"

#include <cstdint>
#include <vector>

namespace parsim {

// ---- memory ----
struct StaticMemory {
  double weights = 0, grads = 0, optimizer = 0;  // bytes on one rank of the stage
};
// Parameters one rank of the stage holds (after TP): its chunks' layers, the embedding on the first, the head on the last.
double stage_param_count(const StepCosts& costs, const Plan& plan, int stage);
// The same split into dense parameters (reduced and sharded over DP×CP; embedding and head included) and routed-expert
// parameters (over the expert-DP group).
RankParams stage_params(const StepCosts& costs, const Plan& plan, int stage);
StaticMemory static_memory(const Scenario& sc, const StepCosts& costs, int stage);
double overhead_bytes(const Scenario& sc, double allocated_bytes);  // CUDA context, NCCL, allocator fragmentation
// Memory per stage from allocation events along the executed timeline; fills the report's memory section and the
// per-stage peaks. `counter` (optional) receives (stage, time_ns, bytes) samples for the trace's counter track.
struct MemorySample {
  int stage;
  std::int64_t time_ns;
  double bytes;
};
void timeline_memory(const Scenario& sc, const StepCosts& costs, const ExecutedStep& ex, StepReport& rep,
                     std::vector<MemorySample>* counter);
MemoryReport estimate_memory_from_costs(const Scenario& sc, const StepCosts& costs);

// ---- metrics ----
void compute_metrics(const Scenario& sc, const StepCosts& costs, const ExecutedStep& ex, StepReport& rep);
// MFU, HFU, TFLOP/s and tokens/s from rep.step_time_s (FLOPs from the scenario's global batch).
void finish_throughput(const Scenario& sc, StepReport& rep);

// ---- the periodic steady state ----
// Whether the step may be simulated for 2p and 3p micro-batches and extended (ScheduleTraits::periodic, enough
// micro-batches, no timeline kept), and the extension itself: every time-like quantity linear in M.
bool steady_state_extendable(const Scenario& sc, bool keep_timeline, std::int64_t microbatches);
constexpr std::int64_t kSteadyGroupsShort = 2, kSteadyGroupsLong = 3;
StepReport extend_steady_state(const Scenario& sc, const StepReport& a, const StepReport& b, std::int64_t m1,
                               std::int64_t m2, std::int64_t m);

}  // namespace parsim
