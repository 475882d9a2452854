// Lowering one training step to a task graph: one representative rank per pipeline stage (TP, CP and DP peers are
// symmetric), each with a compute stream, a pipeline-receive stream and a data-parallel stream. The schedule (plans/)
// fixes the order of forward/backward chunk passes on each compute stream; pipeline receives and data-parallel
// collectives are tasks of their own whose dependencies encode the framework's semantics (domain-notes §6).
#include "sim/step/lower.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace parsim {

namespace {

using engine::TaskId;
using engine::TimeNs;

TimeNs to_ns(double s) { return static_cast<TimeNs>(std::llround(std::max(0.0, s) * 1e9)); }

struct Segment {
  TaskId task;
  int layer_begin, layer_end;  // global layer indices [begin, end); embedding/head ride on the first/last segment
  double params;               // parameters whose gradients / gathers belong to this segment (per rank)
};

struct PassRef {
  std::uint32_t first = 0, count = 0;  // into segments
};

class Builder {
public:
  Builder(const Scenario& sc, const StepCosts& k, Lowered& out) : sc_(sc), k_(k), out_(out), g_(out.graph) {}

  void build();

private:
  const Scenario& sc_;
  const StepCosts& k_;
  Lowered& out_;
  engine::TaskGraph& g_;
  int P_ = 1, V_ = 1, M_ = 1;
  double bucket_bytes_ = 25e6;
  std::vector<int> chunk_first_layer_;  // by virtual stage
  std::vector<Segment> segs_;
  std::vector<PassRef> passes_;
  std::vector<std::vector<PipeOp>> sched_;
  struct CommMemo {
    const GroupShape* group = nullptr;
    Collective coll = Collective::AllReduce;
    double bytes = -1;
    double time = 0;
  };
  mutable std::array<CommMemo, 8> memo_{};
  mutable std::size_t memo_next_ = 0;

  int vstage(int stage, int chunk) const { return chunk * P_ + stage; }
  std::size_t pass_index(int stage, int chunk, int mb, int kind) const {
    return ((static_cast<std::size_t>(stage) * V_ + chunk) * M_ + mb) * 2 + kind;
  }
  bool sharded_params() const {
    return sc_.plan.sharding == Sharding::Zero3 || sc_.plan.sharding == Sharding::FSDP ||
           sc_.plan.sharding == Sharding::HSDP;
  }
  bool has_dp() const { return k_.dp_group.size > 1; }
  double grad_wire_bytes() const { return parsim::grad_wire_bytes(sc_.plan, sc_.train); }
  double param_wire_bytes() const { return parsim::param_wire_bytes(sc_.train); }

  std::vector<std::pair<std::uint64_t, std::uint32_t>> cost_keys_;
  // Pass compositions repeat (same kind and layer count): intern them instead of storing one per task.
  std::uint32_t intern_cost(std::uint64_t key, const PassCost& c) {
    for (const auto& [k, id] : cost_keys_)
      if (k == key) return id;
    out_.costs.push_back(c);
    const auto id = static_cast<std::uint32_t>(out_.costs.size() - 1);
    cost_keys_.emplace_back(key, id);
    return id;
  }
  std::uint32_t add_info(const TaskInfo& ti) {
    out_.info.push_back(ti);
    return static_cast<std::uint32_t>(out_.info.size() - 1);
  }
  TaskId add(engine::StreamId s, double seconds, const TaskInfo& ti) { return g_.add_task(s, to_ns(seconds), add_info(ti)); }

  std::vector<std::pair<int, int>> segment_layers(int first, int n, bool split, bool per_layer) const;
  void add_pass(int stage, const PipeOp& op);
  void add_pipe_recvs(int stage);
  void add_data_parallel(int stage);
  double comm(Collective c, double bytes, const GroupShape& gs) const;
  double bucketed(Collective c, double bytes, const GroupShape& gs) const;
  bool split_pass(int mb, PipeOp::Kind kind) const;
};

double Builder::comm(Collective c, double bytes, const GroupShape& gs) const {
  if (gs.size <= 1) return 0.0;
  // Per-layer collectives repeat with the same size every micro-batch: memoise the last few.
  for (const CommMemo& m : memo_)
    if (m.group == &gs && m.coll == c && m.bytes == bytes) return m.time;
  const double t = collective_time(sc_.hw, c, bytes, gs).time_s;
  memo_[memo_next_] = CommMemo{&gs, c, bytes, t};
  memo_next_ = (memo_next_ + 1) % memo_.size();
  return t;
}

// Bucketed collectives: a segment's gradients go out in ⌈bytes / bucket⌉ buckets, each paying the latency.
double Builder::bucketed(Collective c, double bytes, const GroupShape& gs) const {
  const double nb = std::max(1.0, std::floor(bytes / bucket_bytes_));
  return nb * comm(c, bytes / nb, gs);
}

// Which passes are split into per-layer(-group) tasks so that collectives can start or wait at layer granularity.
bool Builder::split_pass(int mb, PipeOp::Kind kind) const {
  if (!has_dp()) return false;
  const TrainingConfig& t = sc_.train;
  switch (sc_.plan.sharding) {
    case Sharding::None: return kind == PipeOp::Backward && mb == M_ - 1 && t.overlap_grad_reduce;
    case Sharding::Zero1:
      return (kind == PipeOp::Backward && mb == M_ - 1 && t.overlap_grad_reduce) ||
             (kind == PipeOp::Forward && mb == 0 && t.overlap_param_gather);
    case Sharding::Zero2: return kind == PipeOp::Backward;
    default: return true;  // ZeRO-3 / FSDP / HSDP: every pass gathers parameters layer by layer
  }
}

// Layer ranges of a pass's segments: one per layer for parameter sharding, else groups of layers whose gradients
// fill at least one bucket.
std::vector<std::pair<int, int>> Builder::segment_layers(int first, int n, bool split, bool per_layer) const {
  std::vector<std::pair<int, int>> out;
  if (!split || n <= 1) {
    out.emplace_back(first, first + n);
    return out;
  }
  int group = 1;
  if (!per_layer) {
    const double layer_bytes = k_.layer_params * grad_wire_bytes();
    group = std::max(1, static_cast<int>(std::ceil(bucket_bytes_ / std::max(1.0, layer_bytes))));
  }
  for (int l = first; l < first + n; l += group) out.emplace_back(l, std::min(first + n, l + group));
  return out;
}

void Builder::add_pass(int stage, const PipeOp& op) {
  const int vs = vstage(stage, op.chunk);
  const int n = k_.layers_per_chunk[vs];
  const int first = chunk_first_layer_[vs];
  const bool is_first = vs == 0, is_last = vs == P_ * V_ - 1;
  const bool fwd = op.kind == PipeOp::Forward;
  auto ranges = segment_layers(first, n, split_pass(op.microbatch, op.kind), sharded_params());
  if (!fwd) std::reverse(ranges.begin(), ranges.end());  // backward walks the layers last to first

  PassRef ref{static_cast<std::uint32_t>(segs_.size()), static_cast<std::uint32_t>(ranges.size())};
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto [lb, le] = ranges[i];
    const int layers = le - lb;
    PassCost cost = (fwd ? k_.layer_fwd : k_.layer_bwd).scaled(layers);
    double params = k_.layer_params * layers;
    const bool first_seg = i == 0, last_seg = i + 1 == ranges.size();
    // Forward: embedding before the first layer, LM head after the last. Backward: the reverse.
    if (is_first && ((fwd && first_seg) || (!fwd && last_seg))) {
      cost += fwd ? k_.embed_fwd : k_.embed_bwd;
      params += k_.embed_params;
    }
    if (is_last && ((fwd && last_seg) || (!fwd && first_seg))) {
      cost += fwd ? k_.head_fwd : k_.head_bwd;
      params += k_.head_params;
    }
    bool with_embed = false, with_head = false;
    if (is_first && ((fwd && first_seg) || (!fwd && last_seg))) with_embed = true;
    if (is_last && ((fwd && last_seg) || (!fwd && first_seg))) with_head = true;
    const std::uint64_t key = (fwd ? 1u : 0u) | (static_cast<std::uint64_t>(layers) << 1) |
                              (with_embed ? 1ull << 40 : 0) | (with_head ? 1ull << 41 : 0);
    TaskInfo ti{fwd ? TaskKind::Forward : TaskKind::Backward, Axis::tp, Collective::AllReduce,
                static_cast<std::int16_t>(stage), static_cast<std::int16_t>(op.chunk), op.microbatch,
                static_cast<std::int16_t>(lb), static_cast<std::int16_t>(le), 0.0f, intern_cost(key, cost), kNoTask};
    TaskId id = add(out_.compute_stream[stage], cost.duration_s(), ti);
    segs_.push_back(Segment{id, lb, le, params});
  }
  passes_[pass_index(stage, op.chunk, op.microbatch, op.kind)] = ref;
}

// Each stage receives its forward activations from the previous virtual stage and its backward gradients from the
// next, in the order its own schedule consumes them (MCore batches p2p ops in schedule order). The receive occupies
// the receiver's pipeline stream for the transfer time; the consuming pass waits for it.
void Builder::add_pipe_recvs(int stage) {
  if (P_ * V_ == 1) return;
  for (const PipeOp& op : sched_[stage]) {
    const int vs = vstage(stage, op.chunk);
    const bool fwd = op.kind == PipeOp::Forward;
    const int from_vs = fwd ? vs - 1 : vs + 1;
    if (from_vs < 0 || from_vs >= P_ * V_) continue;
    const int from_stage = from_vs % P_, from_chunk = from_vs / P_;
    const PassRef& prod = passes_[pass_index(from_stage, from_chunk, op.microbatch, op.kind)];
    const PassRef& cons = passes_[pass_index(stage, op.chunk, op.microbatch, op.kind)];
    TaskInfo ti{TaskKind::PipeRecv, Axis::pp, Collective::SendRecv, static_cast<std::int16_t>(stage),
                static_cast<std::int16_t>(op.chunk), op.microbatch, 0, 0, static_cast<float>(k_.p2p_bytes), kNoTask,
                kNoTask};
    TaskId r = add(out_.pp_stream[stage], k_.p2p_s, ti);
    g_.add_dep(segs_[prod.first + prod.count - 1].task, r);
    g_.add_dep(r, segs_[cons.first].task);
  }
}

// Data parallelism with each framework's semantics under gradient accumulation (domain-notes §6, the simulator issue):
//   zero0 — DDP: bucketed all-reduce of fp32 grads launched as the LAST micro-batch's backward produces them;
//   zero1 — Megatron distributed optimizer: reduce-scatter once per step (overlapped like DDP), all-gather of the
//           updated 16-bit params overlapped with the next step's first forward (--overlap-param-gather);
//   zero2 — DeepSpeed: reduce-scatter every micro-batch during backward; all-gather after the optimizer step;
//   zero3/fsdp — per-layer all-gather of params before each forward and again before each backward of every
//           micro-batch (one layer of prefetch), reduce-scatter of grads after each layer's backward (every
//           micro-batch unless no_sync); hsdp — the same inside the shard group, then an all-reduce of the grad shard
//           across replicas.
void Builder::add_data_parallel(int stage) {
  const auto dps = out_.dp_stream[stage];
  const auto comp = out_.compute_stream[stage];
  const Sharding sh = sc_.plan.sharding;
  const double gwb = grad_wire_bytes(), pwb = param_wire_bytes();
  const GroupShape& dpg = k_.dp_group;
  std::vector<TaskId> grad_tasks;  // every gradient-reduction task of this stage
  auto info = [&](TaskKind kind, Collective c, int chunk, int mb, const Segment& sg, double bytes) {
    return TaskInfo{kind, Axis::dp, c, static_cast<std::int16_t>(stage), static_cast<std::int16_t>(chunk), mb,
                    static_cast<std::int16_t>(sg.layer_begin), static_cast<std::int16_t>(sg.layer_end),
                    static_cast<float>(bytes), kNoTask, kNoTask};
  };
  const double stage_params = stage_param_count(k_, sc_.plan, stage);

  if (has_dp()) {
    if (sh == Sharding::None || sh == Sharding::Zero1) {
      const Collective red = sh == Sharding::None ? Collective::AllReduce : Collective::ReduceScatter;
      // ZeRO-1 with overlapped parameter gather: the previous step's all-gathers run first, ahead of each forward.
      if (sh == Sharding::Zero1 && sc_.train.overlap_param_gather) {
        for (const PipeOp& op : sched_[stage]) {
          if (op.kind != PipeOp::Forward || op.microbatch != 0) continue;
          const PassRef& r = passes_[pass_index(stage, op.chunk, 0, PipeOp::Forward)];
          for (std::uint32_t i = 0; i < r.count; ++i) {
            const Segment& sg = segs_[r.first + i];
            TaskId ag = add(dps, bucketed(Collective::AllGather, sg.params * pwb, dpg),
                            info(TaskKind::ParamGather, Collective::AllGather, op.chunk, 0, sg, sg.params * pwb));
            g_.add_dep(ag, sg.task);
          }
        }
      }
      // Without --overlap-grad-reduce every bucket waits for the stage's last backward pass (all chunks done).
      TaskId last_backward = 0;
      if (!sc_.train.overlap_grad_reduce) {
        for (const PipeOp& op : sched_[stage]) {
          if (op.kind != PipeOp::Backward) continue;
          const PassRef& r = passes_[pass_index(stage, op.chunk, op.microbatch, PipeOp::Backward)];
          last_backward = segs_[r.first + r.count - 1].task;
        }
      }
      for (const PipeOp& op : sched_[stage]) {
        if (op.kind != PipeOp::Backward || op.microbatch != M_ - 1) continue;
        const PassRef& r = passes_[pass_index(stage, op.chunk, M_ - 1, PipeOp::Backward)];
        for (std::uint32_t i = 0; i < r.count; ++i) {
          const Segment& sg = segs_[r.first + i];
          TaskId t = add(dps, bucketed(red, sg.params * gwb, dpg),
                         info(TaskKind::GradReduce, red, op.chunk, M_ - 1, sg, sg.params * gwb));
          g_.add_dep(sc_.train.overlap_grad_reduce ? sg.task : last_backward, t);
          grad_tasks.push_back(t);
        }
      }
    } else if (sh == Sharding::Zero2) {
      for (const PipeOp& op : sched_[stage]) {
        if (op.kind != PipeOp::Backward) continue;
        const PassRef& r = passes_[pass_index(stage, op.chunk, op.microbatch, PipeOp::Backward)];
        for (std::uint32_t i = 0; i < r.count; ++i) {
          const Segment& sg = segs_[r.first + i];
          TaskId t = add(dps, bucketed(Collective::ReduceScatter, sg.params * gwb, dpg),
                         info(TaskKind::GradReduce, Collective::ReduceScatter, op.chunk, op.microbatch, sg,
                              sg.params * gwb));
          g_.add_dep(sg.task, t);
          grad_tasks.push_back(t);
        }
      }
    } else {  // ZeRO-3 / FSDP / HSDP
      const GroupShape& shard = k_.shard_group;
      const bool hsdp = sh == Sharding::HSDP && k_.replica_group.size > 1;
      // Reduce-scatter a segment's gradients in the shard group; HSDP then all-reduces the 1/N shard across replicas.
      auto reduce_segment = [&](const Segment& sg, const PipeOp& op) {
        const double bytes = sg.params * gwb;
        TaskId rs = add(dps, comm(Collective::ReduceScatter, bytes, shard),
                        info(TaskKind::GradReduce, Collective::ReduceScatter, op.chunk, op.microbatch, sg, bytes));
        g_.add_dep(sg.task, rs);
        grad_tasks.push_back(rs);
        if (hsdp) {
          const double shard_bytes = bytes / shard.size;
          grad_tasks.push_back(add(dps, comm(Collective::AllReduce, shard_bytes, k_.replica_group),
                                   info(TaskKind::GradReduce, Collective::AllReduce, op.chunk, op.microbatch, sg,
                                        shard_bytes)));
        }
      };
      for (const PipeOp& op : sched_[stage]) {
        const bool fwd = op.kind == PipeOp::Forward;
        const PassRef& r = passes_[pass_index(stage, op.chunk, op.microbatch, op.kind)];
        const bool reduce = !fwd && (!sc_.train.fsdp_no_sync || op.microbatch == M_ - 1);
        for (std::uint32_t i = 0; i < r.count; ++i) {
          const Segment& sg = segs_[r.first + i];
          // All-gather of this segment's parameters; with one segment of prefetch it is issued when the previous
          // segment starts, i.e. once the one before that has finished.
          TaskId ag = add(dps, comm(Collective::AllGather, sg.params * pwb, shard),
                          info(TaskKind::ParamGather, Collective::AllGather, op.chunk, op.microbatch, sg,
                               sg.params * pwb));
          if (i >= 2) g_.add_dep(segs_[r.first + i - 2].task, ag);
          g_.add_dep(ag, sg.task);
          out_.info[g_.tag(sg.task)].gather = ag;
          // The reduce-scatter of the previous segment's gradients follows this segment's prefetch on the stream.
          if (reduce && i >= 1) reduce_segment(segs_[r.first + i - 1], op);
        }
        if (reduce && r.count > 0) reduce_segment(segs_[r.first + r.count - 1], op);
      }
    }
  }

  // Optimizer step on this rank's share of the parameters, after its gradients are reduced; memory-bound.
  const double owned = stage_params / std::max(1, sh == Sharding::None ? 1 : k_.shard_degree);
  Segment whole{0, chunk_first_layer_[vstage(stage, 0)], chunk_first_layer_[vstage(stage, 0)], stage_params};
  PassCost oc;
  oc.compute_s = memory_bound_time_s(sc_.hw, owned * k_.optimizer_bytes_per_param, 4);
  TaskInfo oi{TaskKind::Optimizer, Axis::dp, Collective::AllReduce, static_cast<std::int16_t>(stage), 0, -1, 0, 0,
              0.0f, intern_cost((static_cast<std::uint64_t>(stage) << 42) | (1ull << 63), oc), kNoTask};
  TaskId opt = add(comp, oc.compute_s, oi);
  for (TaskId t : grad_tasks) g_.add_dep(t, opt);
  // Parameter all-gather after the step when it is not overlapped with the next forward (DeepSpeed ZeRO-2;
  // Megatron without --overlap-param-gather).
  if (has_dp() && (sh == Sharding::Zero2 || (sh == Sharding::Zero1 && !sc_.train.overlap_param_gather))) {
    TaskId ag = add(dps, bucketed(Collective::AllGather, stage_params * pwb, dpg),
                    info(TaskKind::ParamGather, Collective::AllGather, 0, -1, whole, stage_params * pwb));
    g_.add_dep(opt, ag);
  }
}

void Builder::build() {
  const Plan& pl = sc_.plan;
  P_ = pl.pp;
  V_ = pl.vpp;
  bucket_bytes_ = sc_.train.bucket_bytes;
  M_ = static_cast<int>(sc_.train.micro_batches(pl));
  out_.microbatches = M_;
  g_.clear();
  out_.info.clear();
  out_.costs.clear();
  cost_keys_.clear();
  out_.compute_stream.clear();
  out_.pp_stream.clear();
  out_.dp_stream.clear();
  segs_.clear();
  passes_.assign(static_cast<std::size_t>(P_) * V_ * M_ * 2, PassRef{});
  sched_ = pipeline_schedule(sc_.train.schedule, P_, V_, M_);

  chunk_first_layer_.assign(static_cast<std::size_t>(P_) * V_, 0);
  for (int vs = 1; vs < P_ * V_; ++vs) chunk_first_layer_[vs] = chunk_first_layer_[vs - 1] + k_.layers_per_chunk[vs - 1];

  const double slowdown = sc_.hw.gpu.compute.comm_compute_slowdown;
  for (int s = 0; s < P_; ++s) {
    int dev = g_.add_device(slowdown);
    out_.compute_stream.push_back(g_.add_stream(dev, engine::StreamClass::Compute));
    out_.pp_stream.push_back(g_.add_stream(dev, engine::StreamClass::Comm));
    out_.dp_stream.push_back(g_.add_stream(dev, engine::StreamClass::Comm));
  }
  std::size_t estimate = static_cast<std::size_t>(P_) * V_ * M_ * 4;
  g_.reserve(estimate, estimate * 2);
  for (int s = 0; s < P_; ++s)
    for (const PipeOp& op : sched_[s]) add_pass(s, op);
  for (int s = 0; s < P_; ++s) add_pipe_recvs(s);
  for (int s = 0; s < P_; ++s) add_data_parallel(s);
}

}  // namespace

void lower_step(const Scenario& sc, const StepCosts& costs, Lowered& out) {
  Builder b(sc, costs, out);
  b.build();
}

}  // namespace parsim
