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
  std::uint32_t intern_cost(std::uint64_t key, const PassCost& c);
  // The id interned under `key`, or kNoCost.
  static constexpr std::uint32_t kNoCost = ~std::uint32_t{0};
  std::uint32_t find_cost(std::uint64_t key) const;
  std::uint32_t add_cost(const PassCost& c) {  // a composition that does not repeat (F&B pairs)
    out_.costs.push_back(c);
    return static_cast<std::uint32_t>(out_.costs.size() - 1);
  }
  std::uint32_t add_info(const TaskInfo& ti) {
    out_.info.push_back(ti);
    return static_cast<std::uint32_t>(out_.info.size() - 1);
  }
  double total_task_s_ = 0;  // sum of the durations added so far (the clock bound above)
  // A NaN duration, or a step beyond the clock bound, is an InputError (duration_error names it).
  void check_duration(double seconds, const TaskInfo& ti) {
    total_task_s_ += std::max(0.0, seconds);  // (NaN: max gives 0 and the test below catches it)
    if (std::isnan(seconds) || !(total_task_s_ <= kMaxStepTaskSeconds)) duration_error(seconds, ti);
  }
  [[noreturn]] void duration_error(double seconds, const TaskInfo& ti) const;
  TaskId add(engine::StreamId s, double seconds, const TaskInfo& ti) {
    check_duration(seconds, ti);
    return g_.add_task(s, to_ns(seconds), add_info(ti));
  }
  // Registers a GPU task on its stage's host program: `host_s` of issue for `kernels` operations at `key`.
  // With sync_after_s ≥ 0 the host synchronizes the device right after issuing it (and spends that long).
  void issue(TaskId t, double host_s, double kernels, std::uint64_t key, double sync_after_s = -1) {
    g_.issue(t, to_ns(host_s), static_cast<std::uint32_t>(std::max(1.0, round_nonneg(kernels))), key,
             sync_after_s >= 0 ? to_ns(sync_after_s) : -1);
  }
  // Host work of a stage (drain: waits for everything the host issued before it).
  TaskId host_task(int stage, double seconds, HostPart part, std::uint64_t key, bool drain, int mb = -1) {
    TaskInfo ti{TaskKind::HostWork, Axis::dp, Collective::AllReduce, static_cast<std::int16_t>(stage), 0, mb, 0, 0,
                0.0f, kNoTask, kNoTask};
    ti.host = part;
    return g_.add_host_task(out_.device[stage], to_ns(seconds), add_info(ti), key, drain);
  }
  // Host cost of `calls` data-parallel collective calls.
  double dp_host_s(double calls) const { return calls * (k_.host.coll_s + k_.host.dp_call_extra_s); }
  double dp_kernels(double calls) const { return calls * (1 + k_.host.dp_call_extra_kernels); }
  std::uint64_t end_key() const { return op_key(max_ops_ + 1); }
  // A collective's time and the part of it this rank's NIC share is busy (CollectiveCost::nic_busy_s; 0 inside a node).
  struct CommCost {
    double time = 0, nic = 0;
  };
  CommCost comm(Collective c, double bytes, const GroupShape& gs) const;
  CommCost bucketed(Collective c, double bytes, const GroupShape& gs) const;
  // A communication task on `s`: its duration is the collective's time, and when the collective crosses nodes its
  // NIC part is declared to the engine (TaskGraph::set_nic), so that the concurrent cross-node collectives of one rank
  // (DP buckets, parameter gathers, pipeline transfers) share the rank's NIC share instead of each seeing all of it.
  // The NIC share itself is already divided among the GPUs of the node that talk at once
  // (GroupShape::concurrent_per_node, priced in the collective's time): the engine only divides it further in time.
  TaskId add_comm(engine::StreamId s, const CommCost& cc, const TaskInfo& ti) {
    const TaskId t = add(s, cc.time, ti);
    if (cc.nic > 0) g_.set_nic(t, to_ns(cc.nic));
    return t;
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
  TaskInfo dp_info(TaskKind kind, Collective c, int stage, int chunk, int mb, const Segment& sg, double bytes) const;
  void dp_bucketed_once(int stage, std::vector<TaskId>& grad_tasks);               // zero0, zero1
  void dp_reduce_scatter_each_microbatch(int stage, std::vector<TaskId>& grad_tasks);  // zero2
  void dp_sharded_parameters(int stage, std::vector<TaskId>& grad_tasks);          // zero3, fsdp, hsdp
  void add_optimizer_step(int stage, const std::vector<TaskId>& grad_tasks);
  // The expert part of a segment's data-parallel collective: the same collective over the expert-DP group for the
  // segment's expert parameters, on the same stream after the dense part (Megatron-Core keeps expert gradients in
  // their own buffers). kNoTask when the segment has none or the group is one rank.
  TaskId expert_dp_task(TaskKind kind, Collective c, int stage, int chunk, int mb, const Segment& sg,
                        double bytes_per_param, bool bucketed);
};

// lower_step (sim/step/lowered.hpp) with the builder's working memory kept in `scratch`.
void lower_step(const Scenario& sc, const StepCosts& costs, Lowered& out, const ScheduleOrder* schedule,
                Scratch& scratch);

}  // namespace parsim::lowering
