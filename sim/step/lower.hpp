// parsim sim/step — internal: per-pass costs, the task graph of one step, and what each task means.
#pragma once
#include "sim/engine/engine.hpp"
#include "sim/step/report.hpp"

#include <cstdint>
#include <vector>

namespace parsim {

// Cost of one forward or backward pass of some layers on one rank. TP and CP communication is issued inside the
// layer (Megatron runs it synchronously between GEMMs), so its exposed part lengthens the pass on the compute stream.
struct PassCost {
  double compute_s = 0;
  double tp_s = 0, tp_exposed_s = 0;
  double cp_s = 0, cp_exposed_s = 0;
  double duration_s() const { return compute_s + tp_exposed_s + cp_exposed_s; }
  PassCost& operator+=(const PassCost& o);
  PassCost scaled(double k) const;
};

// Everything the lowering needs, computed once per scenario from the cost models.
struct StepCosts {
  PassCost layer_fwd, layer_bwd;      // one transformer layer, one micro-batch (bwd includes recompute)
  PassCost embed_fwd, embed_bwd;      // first virtual stage
  PassCost head_fwd, head_bwd;        // last virtual stage: final norm, LM head, loss
  double p2p_s = 0;                   // one activation (or gradient) transfer between adjacent pipeline stages
  double p2p_bytes = 0;
  std::vector<int> layers_per_chunk;  // pp·vpp chunks, index = chunk·pp + stage
  // Parameters held per rank (after TP split), for gradient/parameter traffic and the optimizer.
  double layer_params = 0, embed_params = 0, head_params = 0;
  // Data-parallel group (DP×CP: gradients reduce over both, Megatron-Core) and HSDP sub-groups.
  GroupShape dp_group, shard_group, replica_group;
  int shard_degree = 1;               // ZeRO/FSDP sharding degree of optimizer state
  double optimizer_bytes_per_param = 0;  // HBM bytes the optimizer step moves per owned parameter
};
StepCosts compute_step_costs(const Scenario& sc);

// What a task is: tag → TaskInfo (the engine never looks inside).
enum class TaskKind : std::uint8_t { Forward, Backward, PipeRecv, GradReduce, ParamGather, Optimizer };
struct TaskInfo {
  TaskKind kind;
  Axis comm;            // for communication tasks: the parallel axis whose group runs it
  Collective coll;      // for communication tasks
  std::int16_t stage;
  std::int16_t chunk;
  std::int32_t microbatch;
  std::int16_t layer_begin, layer_end;  // layer range inside the chunk (global layer indices), [begin, end)
  float bytes;          // communication payload
  std::uint32_t cost_id;  // compute tasks: index into Lowered::costs (the composition of the duration)
  std::uint32_t gather;   // compute segments under ZeRO-3/FSDP: the task that all-gathers their parameters
};
constexpr std::uint32_t kNoTask = 0xffffffffu;

struct Lowered {
  engine::TaskGraph graph;
  std::vector<TaskInfo> info;         // indexed by tag
  std::vector<PassCost> costs;        // the few distinct pass compositions, shared by tasks
  const PassCost& cost(const TaskInfo& ti) const { return costs[ti.cost_id]; }
  std::vector<engine::StreamId> compute_stream, pp_stream, dp_stream;  // per stage
  int microbatches = 0;
};
// Builds the step's task graph for one representative rank per pipeline stage.
void lower_step(const Scenario& sc, const StepCosts& costs, Lowered& out);

// Scratch buffers of the analysis, kept between evaluations so that a sweep thread does not allocate per plan.
struct MemEvent {
  std::int64_t t;
  double delta;
  int kind;  // 0 activations, 1 buffers
};
using Interval = std::pair<std::int64_t, std::int64_t>;
struct Scratch {
  std::vector<std::vector<MemEvent>> events, gathers;
  std::vector<MemEvent> merged;
  std::vector<std::vector<Interval>> comp, pass, dp, pp;
  std::vector<Interval> tmp1, tmp2, tmp3, tmp4, tmp5, tmp6;
};

struct ExecutedStep {
  Lowered lowered;
  engine::Timeline timeline;
  mutable Scratch scratch;
};

// Memory (memory.cpp).
struct StaticMemory {
  double weights = 0, grads = 0, optimizer = 0;  // bytes on one rank of the stage
};
// Parameters one rank of the stage holds (after TP): its chunks' layers, the embedding on the first, the head on the last.
double stage_param_count(const StepCosts& costs, const Plan& plan, int stage);
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

// Metrics (metrics.cpp).
void compute_metrics(const Scenario& sc, const StepCosts& costs, const ExecutedStep& ex, StepReport& rep);
// MFU, HFU, TFLOP/s and tokens/s from rep.step_time_s (FLOPs from the scenario's global batch).
void finish_throughput(const Scenario& sc, StepReport& rep);

}  // namespace parsim
