// parsim sim/step — the task graph of one step and what each task means (built by sim/step/lower/, read by the
// analysis and by the trace).
#pragma once
#include "sim/engine/engine.hpp"
#include "sim/step/costs.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace parsim {

// What a task is: tag → TaskInfo (the engine never looks inside).
enum class TaskKind : std::uint8_t {
  Forward, Backward, BackwardInput, BackwardWeight,  // compute passes (the PassKind values, in that order)
  PipeRecv, GradReduce, ParamGather, Optimizer,
  HostWork  // work of the rank's host alone: a device→host sync, get_batch, the step's fixed Python (HostPart says which)
};
// What a HostWork task stands for (TaskInfo::host).
enum class HostPart : std::uint8_t { None, StepBegin, Data, LossSync, P2PSync, GradCheck, PreStep, PostStep, TimerSync };
const char* host_part_name(HostPart p);
constexpr bool is_pass(TaskKind k) { return static_cast<int>(k) < kPassKinds; }
constexpr PassKind pass_kind(TaskKind k) { return static_cast<PassKind>(k); }
// Passes that end a micro-batch's backward on a chunk and free its activations: the combined backward or W.
constexpr bool ends_backward(TaskKind k) { return k == TaskKind::Backward || k == TaskKind::BackwardWeight; }

// Edge work carried by a compute segment (bits): the embedding, the LM head + loss (edge_work in costs/edges.cpp);
// kPaired: the pass runs as half of an overlapped F&B pair (PipeOp::overlapped_with_next).
enum : std::uint8_t { kEdgeEmbedding = 1, kEdgeHead = 2, kPaired = 4 };

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
  std::uint8_t edges = 0; // compute segments: kEdgeEmbedding | kEdgeHead | kPaired
  HostPart host = HostPart::None;  // HostWork tasks
};
constexpr std::uint32_t kNoTask = 0xffffffffu;

struct Lowered {
  engine::TaskGraph graph;
  std::vector<TaskInfo> info;         // indexed by tag
  std::vector<PassCost> costs;        // the few distinct pass compositions, shared by tasks
  const PassCost& cost(const TaskInfo& ti) const { return costs[ti.cost_id]; }
  std::vector<engine::StreamId> compute_stream, pp_stream, dp_stream;  // per stage
  std::vector<int> device;                                             // per stage: its engine device (host)
  int microbatches = 0;
  bool splits_backward = false;  // some pass is a B/W half (memory then tracks what W keeps)
};

// Builds the step's task graph for one representative rank per pipeline stage, in the order `schedule` gives (empty:
// pipeline_schedule of the scenario's schedule).
void lower_step(const Scenario& sc, const StepCosts& costs, Lowered& out, const ScheduleOrder* schedule = nullptr);

// Scratch buffers of the analysis, kept between evaluations so that a sweep thread does not allocate per plan.
struct MemEvent {
  std::int64_t t;
  double delta;
  int kind;  // 0 activations, 1 buffers
};
using TimeInterval = std::pair<std::int64_t, std::int64_t>;
struct Scratch {
  std::vector<std::vector<MemEvent>> events, gathers;
  std::vector<MemEvent> merged;
  std::vector<std::vector<TimeInterval>> comp, pass, dp, pp;
  std::vector<TimeInterval> tmp1, tmp2, tmp3, tmp4, tmp5, tmp6;
  std::vector<TimeInterval> span, pass_span;  // per stage: all its tasks, its passes
};

struct ExecutedStep {
  Lowered lowered;
  engine::Timeline timeline;
  mutable Scratch scratch;
};

}  // namespace parsim
