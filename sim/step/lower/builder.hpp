// parsim sim/step/lower — internal: the builder shared by the pipeline lowering (pipeline.cpp: compute passes in
// schedule order, pipeline receives) and the data-parallel lowering (data_parallel.cpp: one function per
// DataParallelLowering strategy, plans/sharding.hpp).
#pragma once
#include "sim/step/lowered.hpp"

#include <array>
#include <cmath>
#include <vector>

namespace parsim::lowering {

using engine::TaskId;

// llround(x) for x ≥ 0 without the libm call: x − trunc(x) is exact for a double, so comparing it with 0.5 rounds
// half away from zero exactly as llround does. Values outside [0, 2^62) (and NaN) take the libm path.
inline std::int64_t llround_nonneg(double x) {
  if (!(x >= 0.0 && x < 4.611686018427387904e18)) return std::llround(x);
  const auto r = static_cast<std::int64_t>(x);
  return r + (x - static_cast<double>(r) >= 0.5 ? 1 : 0);
}
// std::round(x) for x ≥ 0, the same way.
inline double round_nonneg(double x) {
  if (!(x >= 0.0 && x < 4.503599627370496e15)) return std::round(x);
  const auto r = static_cast<double>(static_cast<std::int64_t>(x));
  return x - r >= 0.5 ? r + 1.0 : r;
}
inline engine::TimeNs to_ns(double s) { return static_cast<engine::TimeNs>(llround_nonneg(std::max(0.0, s) * 1e9)); }

// The engine's clock counts int64 nanoseconds (±292 years). A step's makespan is at most the sum of its task durations
// (something always runs) stretched by SM contention, so the lowering refuses a step whose tasks sum beyond 1e8 s
// (3.2 years, 10^17 ns: 92× headroom) or a task that is not a number — both come only from inputs far outside
// training (--seq 10^12, --bucket-mb 1e-300, a hardware efficiency of 1e-300) and were undefined casts (issue 12).
inline constexpr double kMaxStepTaskSeconds = 1e8;

struct Segment {
  TaskId task;
  int layer_begin, layer_end;  // global layer indices [begin, end); embedding/head ride on the first/last segment
  double params;               // parameters whose gradients / gathers belong to this segment (per rank), reduced over
                               // the data-parallel group
  double expert_params = 0;    // MoE routed-expert parameters of the segment, reduced over the expert-DP group
  std::uint64_t key = 0;       // its position in the stage's host program
  std::uint8_t edges = 0;      // kEdgeEmbedding | kEdgeHead: the edge work (and parameters) it carries
};

// Where a task's numbers (duration, NIC part, issue time, kernels, sync, bytes) come from: Builder::values() computes
// them from a Recipe and the plan's StepCosts, and the lowering records one Recipe per task, so that a graph of the
// same shape is re-filled for another plan's costs instead of being built again (ShapeCache below).
enum class RecipeKind : std::uint8_t {
  Pass,       // a compute segment: Lowered::costs[id]
  Optimizer,  // the optimizer step of `stage`: Lowered::costs[id] and the stage's host work
  Recv,       // a pipeline receive (flags: kRecipeSync — the host synchronizes after issuing it)
  Host,       // host work: HostPart `id`
  Dp          // a data-parallel collective (below)
};
enum class DpGroup : std::uint8_t { Dp, ExpertDp, Shard, Replica };
// Dp recipes: the expert parameters (else the dense ones); 16-bit/fp8 parameter bytes (else gradient bytes); divided
// over the shard group (HSDP's replica all-reduce); bucketed; the parameters of the whole stage (else of the segment
// [lb, le) with `edges`); host: not issued, or one collective call (coll_s, 1 kernel), else the DP calls of the buckets.
enum : std::uint8_t {
  kRecipeExpert = 1, kRecipeParamWire = 2, kRecipePerShard = 4, kRecipeBucketed = 8, kRecipeWholeStage = 16,
  kRecipeNoHost = 32, kRecipeHostColl = 64
};
enum : std::uint8_t { kRecipeSync = 1 };  // Recv recipes
// Host recipes of HostPart::TimerSync: the syncs before the pass (else the one after it), of a forward (else backward).
enum : std::uint8_t { kTimerBefore = 1, kTimerForward = 2 };
struct Recipe {
  RecipeKind kind = RecipeKind::Pass;
  Collective coll = Collective::AllReduce;  // Dp
  DpGroup group = DpGroup::Dp;              // Dp
  std::uint8_t flags = 0;
  std::uint8_t edges = 0;                   // Dp over a segment
  std::int16_t stage = 0;                   // Optimizer; Dp over a whole stage
  std::int16_t lb = 0, le = 0;              // Dp over a segment
  std::uint32_t id = 0;                     // Pass, Optimizer: cost id; Host: HostPart (flags: kTimer*)
};
// Where a pass composition (Lowered::costs entry) comes from: a segment's layers [lb, le) of pass kind `pass` with its
// edge work; the optimizer step of `stage`; or half of an F&B pair (not re-composable: such graphs are not cached).
struct CostRecipe {
  enum class Kind : std::uint8_t { Segment, Optimizer, Pair } kind = Kind::Segment;
  PassKind pass = PassKind::Forward;
  std::uint8_t edges = 0;
  std::int16_t lb = 0, le = 0, stage = 0;
  bool alone = false;  // Segment: a pass without an --moe-a2a-overlap partner (its hidden exchanges run exposed)
};
// The numbers of one task (Builder::values).
struct Values {
  double seconds = 0;         // duration
  double nic_s = 0;           // NIC part (TaskGraph::set_nic; 0: none)
  double host_s = 0;          // issue time of a GPU task on its host
  double kernels = 1;         // … and its kernels
  double sync_after_s = -1;   // ≥ 0: the host synchronizes after issuing it, then spends this long
  float bytes = 0;            // TaskInfo::bytes
};

// Graphs already built, by shape. Plans of one shape — the same schedule, stages, chunks, micro-batches, layer split,
// data-parallel strategy and flags, segment split and host program (Builder::shape_key lists what decides the
// structure) — lower to the same tasks, dependencies and host programs with other numbers (86 % of the simulations of
// the llama3-70b / 512-GPU sweep re-fill a kept graph; its steady-state runs alternate two shapes). A hit re-fills
// the kept graph's numbers from its recipes (Builder::refill) instead of building it: the same graph, number for
// number, as a build. The slots' graphs are lent to the caller's Lowered by swapping (no copy): the slot `lent` holds
// the caller's previous buffers until the next lowering gives its graph back. Per evaluator (one per sweep thread): no
// sharing between threads, and what a plan gets does not depend on which plans came before it.
struct ShapeSlot {
  std::vector<double> key;
  Lowered graph;
  std::vector<Recipe> recipes;              // the distinct recipes of its tasks (few: passes share compositions)
  std::vector<std::uint32_t> task_recipe;   // per task (tag): its recipe
  std::vector<CostRecipe> cost_recipes;     // per Lowered::costs entry
  std::uint64_t last_use = 0;
  bool valid = false;
};
struct ShapeCache {
  static constexpr std::size_t kSlots = 6;
  std::array<ShapeSlot, kSlots> slots;
  int lent = -1;                     // the slot whose graph is in `lent_to`
  const Lowered* lent_to = nullptr;
  std::uint64_t clock = 0;
  std::vector<double> key;           // the shape being lowered
  bool enabled = true;               // off: every lowering builds (tests compare both)
  std::uint64_t refills = 0, builds = 0;  // lowerings that re-filled a kept graph / built one
  // Working memory of keep() and refill(): an open-addressing table recipe → distinct index, and the numbers of the
  // distinct recipes.
  std::vector<std::pair<std::array<std::uint64_t, 2>, std::uint32_t>> table;
  struct Filled {
    double seconds;
    engine::TimeNs duration, nic, host, sync_after;
    std::uint32_t kernels;
    float bytes;
    bool host_work;  // host work (not under the clock bound's sum: the build adds only GPU tasks to it)
  };
  std::vector<Filled> filled;
};

struct PassRef {
  std::uint32_t first = 0, count = 0;  // into segments
  std::uint64_t key = 0;               // the pass's base position in the host program (op_key)
};

// Host program order (sim/engine: TaskGraph::issue): per stage, the schedule's op j owns the keys [op_key(j),
// op_key(j + 1)); inside it the pipeline receive, its sync and get_batch come first, then the segments (16 apart, so
// that the data-parallel collectives issued just before or after a segment fit between), then the loss syncs. The
// step's begin is key 0; its end (grad checks, optimizer, post-step work) follows the last op.
constexpr std::uint64_t op_key(std::size_t j) { return (static_cast<std::uint64_t>(j) + 1) << 20; }
constexpr std::uint64_t kKeyRecv = 0x100, kKeyP2PSync = 0x200, kKeyData = 0x300, kKeySegments = 0x1000,
                        kKeySegmentStride = 16, kKeyLoss = 0xF0000;

// The builder's working memory, kept between lowerings (Evaluator) so that a sweep thread does not allocate per plan.
struct Scratch {
  std::vector<int> chunk_first_layer;  // by virtual stage
  std::vector<Segment> segs;
  std::vector<PassRef> passes;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> cost_keys;
  std::vector<std::pair<int, int>> ranges;
  std::vector<TaskId> grad_tasks;
  std::vector<std::uint8_t> alone;  // by position in a stage's order: runs without an a2a-overlap partner
  // The last schedules generated: the sweep asks for the same few again and again (the memory pre-check shares it).
  ScheduleCache schedules;
  ScheduleOrder custom;  // an explicit schedule (EvalOptions::schedule)
  // The recipes of the graph being built (kept by its shape slot when the graph is cached).
  std::vector<Recipe> recipes;
  std::vector<CostRecipe> cost_recipes;
  ShapeCache shapes;
  // A memo of collective_time serving the scenarios' hardware (Evaluator::fix_hardware), or null: the data-parallel
  // and pipeline collectives Builder::comm prices repeat across plans of a sweep.
  CollectiveMemo* collectives = nullptr;
};

class Builder {
public:
  Builder(const Scenario& sc, const StepCosts& k, Lowered& out, Scratch& scratch)
      : sc_(sc), k_(k), out_(out), g_(out.graph), sh_(sharding_traits(sc.plan.sharding)),
        has_expert_dp_(k.has_expert_params && k.edp_group.size > 1), has_dp_(k.dp_group.size > 1 || has_expert_dp_),
        chunk_first_layer_(scratch.chunk_first_layer), segs_(scratch.segs), passes_(scratch.passes),
        cost_keys_(scratch.cost_keys), ranges_(scratch.ranges), grad_tasks_(scratch.grad_tasks), alone_(scratch.alone),
        scratch_(scratch) {}
  void build(const ScheduleOrder* schedule);

private:
  const Scenario& sc_;
  const StepCosts& k_;
  Lowered& out_;
  engine::TaskGraph& g_;
  const ShardingTraits& sh_;
  const bool has_expert_dp_, has_dp_;  // see has_dp(); fixed per scenario, read for every pass
  int P_ = 1, V_ = 1, M_ = 1;  // stages, model chunks per stage (PipelinePlacement::chunks), micro-batches
  PipelinePlacement place_;
  std::size_t max_ops_ = 0;  // the longest stage program (end_key follows it)
  double bucket_bytes_ = 25e6;
  bool any_pass_nic_ = false;  // some in-pass group (TP, CP, EP) crosses nodes: passes get a NIC part
  std::vector<int>& chunk_first_layer_;  // by virtual stage
  // Per (stage, chunk): the micro-batch of its first forward and of its last weight-gradient pass in the stage's
  // order — where a chunk's gradients are complete (M − 1 for the one-direction schedules; the last micro-batch of
  // the chunk's direction under DualPipe).
  std::vector<int> first_fwd_mb_, last_wgrad_mb_;
  std::vector<Segment>& segs_;
  std::vector<PassRef>& passes_;
  const ScheduleOrder* sched_ptr_ = nullptr;
  struct CommMemo {
    const GroupShape* group = nullptr;
    Collective coll = Collective::AllReduce;
    double bytes = -1;
    double time = 0, nic = 0;
  };
  mutable std::array<CommMemo, 8> memo_{};
  mutable std::size_t memo_next_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint32_t>>& cost_keys_;
  std::vector<std::pair<int, int>>& ranges_;
  std::vector<TaskId>& grad_tasks_;
  std::vector<std::uint8_t>& alone_;
  Scratch& scratch_;
  const ScheduleOrder& sched() const { return *sched_ptr_; }

  int vstage(int stage, int chunk) const { return place_.vstage(stage, chunk); }
  int first_forward_mb(int stage, int chunk) const { return first_fwd_mb_[static_cast<std::size_t>(stage * V_ + chunk)]; }
  int last_wgrad_mb(int stage, int chunk) const { return last_wgrad_mb_[static_cast<std::size_t>(stage * V_ + chunk)]; }
  std::size_t pass_index(int stage, int chunk, int mb, int kind) const {
    return ((static_cast<std::size_t>(stage) * V_ + chunk) * M_ + mb) * kPassKinds + kind;
  }
  const PassRef& pass(int stage, const PipeOp& op) const {
    return passes_[pass_index(stage, op.chunk, op.microbatch, op.kind)];
  }
  const ScheduleOrder& schedule_for(const ScheduleOrder* explicit_order);
  // Data-parallel work exists when the DP×CP group has more than one rank, or — MoE — when the expert parameters are
  // replicated over an expert-DP group of more than one rank (tp8 with etp1 holds whole experts on each TP rank).
  bool has_dp() const { return has_dp_; }
  bool has_expert_dp() const { return has_expert_dp_; }
  double grad_wire_bytes() const {
    return parsim::grad_wire_bytes(sc_.plan.sharding, sc_.train.precision, sc_.train.stack,
                                   sc_.train.grad_reduce_in_fp32);
  }
  // --fp8-params on the Megatron stack: the distributed optimizer / Megatron-FSDP all-gather the fp8 weights, 1 B per
  // parameter (Megatron-Core --fp8-param-gather; the embedding and LM head, still 16-bit, are counted at 1 B too).
  double param_wire_bytes() const {
    if (sc_.train.fp8_params && sc_.train.precision == Precision::FP8 && sc_.train.stack == Stack::Megatron) return 1.0;
    return parsim::param_wire_bytes(sc_.train.precision);
  }
  // Passes whose weight gradients are complete at their end (the combined backward, or W), and passes that read the
  // parameters (forward, combined backward, B).
  static bool makes_weight_grads(PipeOp::Kind k) { return k == PipeOp::Backward || k == PipeOp::BackwardWeight; }
  static bool reads_params(PipeOp::Kind k) { return k != PipeOp::BackwardWeight; }

  // Pass compositions repeat (same kind and layer count): intern them instead of storing one per task.
  std::uint32_t intern_cost(std::uint64_t key, const PassCost& c, const CostRecipe& r);
  // The id interned under `key`, or kNoCost.
  static constexpr std::uint32_t kNoCost = ~std::uint32_t{0};
  std::uint32_t find_cost(std::uint64_t key) const;
  std::uint32_t add_cost(const PassCost& c, const CostRecipe& r) {  // a composition that does not repeat (F&B pairs)
    out_.costs.push_back(c);
    scratch_.cost_recipes.push_back(r);
    return static_cast<std::uint32_t>(out_.costs.size() - 1);
  }
  std::uint32_t add_info(const TaskInfo& ti, const Recipe& r) {
    out_.info.push_back(ti);
    scratch_.recipes.push_back(r);
    return static_cast<std::uint32_t>(out_.info.size() - 1);
  }
  // ---- the numbers (values.cpp): the one place each task's duration, NIC part, issue and bytes are computed ----
  Values values(const Recipe& r) const;
  PassCost compose(const CostRecipe& r) const;  // a Segment or Optimizer composition
  double host_part_s(HostPart part, std::uint8_t flags) const;
  RankParams segment_params(int lb, int le, std::uint8_t edges) const;
  const GroupShape& group(DpGroup g) const;
  // The shape cache: the key of the plan's graph structure (false: not cacheable — an explicit schedule, F&B pairs,
  // mixed layer kinds or expert parameters), and the re-fill of a kept graph's numbers.
  bool shape_key(const ScheduleOrder* explicit_order, std::vector<double>& key) const;
  void refill(const ShapeSlot& slot);
  // Keeps the graph just built in `slot`: the shape key and the distinct recipes of its tasks.
  void keep(ShapeSlot& slot);
  double total_task_s_ = 0;  // sum of the durations added so far (the clock bound above)
  // A NaN duration, or a step beyond the clock bound, is an InputError (duration_error names it).
  void check_duration(double seconds, const TaskInfo& ti) {
    total_task_s_ += std::max(0.0, seconds);  // (NaN: max gives 0 and the test below catches it)
    if (std::isnan(seconds) || !(total_task_s_ <= kMaxStepTaskSeconds)) duration_error(seconds, ti);
  }
  [[noreturn]] void duration_error(double seconds, const TaskInfo& ti) const;
  static std::uint32_t kernel_count(double kernels) {
    return static_cast<std::uint32_t>(std::max(1.0, round_nonneg(kernels)));
  }
  // A GPU task on `s` with the numbers of recipe `r` (returned in `v`). A task whose work crosses nodes declares its
  // NIC part to the engine (TaskGraph::set_nic), so that the concurrent cross-node work of one rank (passes, DP
  // buckets, parameter gathers, pipeline transfers) shares the rank's NIC share instead of each seeing all of it.
  TaskId add(engine::StreamId s, const Recipe& r, TaskInfo ti, Values& v) {
    v = values(r);
    ti.bytes = v.bytes;
    check_duration(v.seconds, ti);
    const TaskId t = g_.add_task(s, to_ns(v.seconds), add_info(ti, r));
    if (v.nic_s > 0) g_.set_nic(t, to_ns(v.nic_s));
    return t;
  }
  // Registers a GPU task on its stage's host program with its numbers `v` (issue time, kernels, sync after) at `key`.
  void issue(TaskId t, const Values& v, std::uint64_t key) {
    g_.issue(t, to_ns(v.host_s), kernel_count(v.kernels), key, v.sync_after_s >= 0 ? to_ns(v.sync_after_s) : -1);
  }
  // Host work of a stage (drain: waits for everything the host issued before it).
  TaskId host_task(int stage, HostPart part, std::uint64_t key, bool drain, int mb = -1, std::uint8_t flags = 0) {
    TaskInfo ti{TaskKind::HostWork, Axis::dp, Collective::AllReduce, static_cast<std::int16_t>(stage), 0, mb, 0, 0,
                0.0f, kNoTask, kNoTask};
    ti.host = part;
    Recipe r;
    r.kind = RecipeKind::Host;
    r.id = static_cast<std::uint32_t>(part);
    r.flags = flags;
    return g_.add_host_task(out_.device[stage], to_ns(host_part_s(part, flags)), add_info(ti, r), key, drain);
  }
  // Host cost of `calls` data-parallel collective calls.
  double dp_host_s(double calls) const { return calls * (k_.host.coll_s + k_.host.dp_call_extra_s); }
  double dp_kernels(double calls) const { return calls * (1 + k_.host.dp_call_extra_kernels); }
  std::uint64_t end_key() const { return op_key(max_ops_ + 1); }
  // A collective's time and the part of it this rank's NIC share is busy (CollectiveCost::nic_busy_s; 0 inside a node).
  // The NIC share itself is already divided among the GPUs of the node that talk at once
  // (GroupShape::concurrent_per_node, priced in the collective's time): the engine only divides it further in time.
  struct CommCost {
    double time = 0, nic = 0;
  };
  CommCost comm(Collective c, double bytes, const GroupShape& gs) const;
  CommCost bucketed(Collective c, double bytes, const GroupShape& gs) const;
  // The recipe of a data-parallel collective `c` on group `g` over the parameters of segment `sg` (flags: kRecipe*).
  Recipe dp_recipe(Collective c, DpGroup g, const Segment& sg, std::uint8_t flags) const {
    Recipe r;
    r.kind = RecipeKind::Dp;
    r.coll = c;
    r.group = g;
    r.flags = flags;
    r.edges = sg.edges;
    // A uniform model's segment holds parameters by its layer count alone (segment_params): segments of one length
    // share a recipe.
    const int lb = k_.uniform() ? 0 : sg.layer_begin;
    r.lb = static_cast<std::int16_t>(lb);
    r.le = static_cast<std::int16_t>(lb + sg.layer_end - sg.layer_begin);
    return r;
  }
  double buckets(double bytes) const { return std::max(1.0, std::floor(bytes / bucket_bytes_)); }

  // ---- pipeline.cpp ----
  void segment_layers(int first, int n, bool split, bool per_layer, std::vector<std::pair<int, int>>& out) const;
  bool split_pass(int stage, const PipeOp& op) const;
  // The pass's segments (layer ranges, backward in reverse) and their costs, issued at program position j of the
  // stage's host program; `pair` (optional): how an F&B pair changes this pass (costs/comm.cpp overlap_pair).
  // `alone`: with --moe-a2a-overlap, a pass the schedule runs without a partner of the other direction (its hidden
  // token exchanges are exposed: PassCost::ep_overlap_s).
  void add_pass(int stage, const PipeOp& op, std::size_t j, const PairOverlap* pair, bool alone = false);
  PassCost whole_pass_cost(int stage, const PipeOp& op) const;
  void add_pipe_recvs(int stage);

  // ---- data_parallel.cpp: the scheme's strategy, then the optimizer step ----
  void add_data_parallel(int stage);
  TaskInfo dp_info(TaskKind kind, Collective c, int stage, int chunk, int mb, const Segment& sg) const;
  void dp_bucketed_once(int stage, std::vector<TaskId>& grad_tasks);               // zero0, zero1
  void dp_reduce_scatter_each_microbatch(int stage, std::vector<TaskId>& grad_tasks);  // zero2
  void dp_sharded_parameters(int stage, std::vector<TaskId>& grad_tasks);          // zero3, fsdp, hsdp
  void add_optimizer_step(int stage, const std::vector<TaskId>& grad_tasks);
  // The expert part of a segment's data-parallel collective: the same collective over the expert-DP group for the
  // segment's expert parameters, on the same stream after the dense part (Megatron-Core keeps expert gradients in
  // their own buffers). kNoTask when the segment has none or the group is one rank.
  TaskId expert_dp_task(TaskKind kind, Collective c, int stage, int chunk, int mb, const Segment& sg,
                        const Recipe& dense);
};

// lower_step (sim/step/lowered.hpp) with the builder's working memory kept in `scratch`.
void lower_step(const Scenario& sc, const StepCosts& costs, Lowered& out, const ScheduleOrder* schedule,
                Scratch& scratch);

}  // namespace parsim::lowering
