// Lowering one training step to a task graph: one representative rank per pipeline stage (TP, CP and DP peers are
// symmetric), each with a compute stream, a pipeline-receive stream and a data-parallel stream. The schedule (plans/)
// fixes the order of the passes on each compute stream — forward, backward, or the backward's halves B and W —;
// pipeline receives are tasks of their own whose dependencies follow the data; data-parallel collectives come from
// data_parallel.cpp.
#include "sim/step/lower/builder.hpp"

#include <algorithm>

namespace parsim {

const char* host_part_name(HostPart p) {
  switch (p) {
    case HostPart::None: return "host";
    case HostPart::StepBegin: return "zero_grad";
    case HostPart::Data: return "get_batch";
    case HostPart::LossSync: return "loss NaN/Inf check (sync)";
    case HostPart::P2PSync: return "p2p synchronize";
    case HostPart::GradCheck: return "grad NaN check";
    case HostPart::PreStep: return "grad checks / found-inf / grad norm (sync)";
    case HostPart::PostStep: return "post-step reductions and logging";
  }
  return "host";
}

namespace lowering {

std::uint32_t Builder::intern_cost(std::uint64_t key, const PassCost& c) {
  for (const auto& [k, id] : cost_keys_)
    if (k == key) return id;
  out_.costs.push_back(c);
  const auto id = static_cast<std::uint32_t>(out_.costs.size() - 1);
  cost_keys_.emplace_back(key, id);
  return id;
}

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

// Which passes are split into per-layer(-group) tasks so that data-parallel collectives can start or wait at layer
// granularity (ShardingTraits): per-layer parameter gathers split every pass; gradients that sync every micro-batch
// split every weight-gradient pass; gradients that sync once split the last micro-batch's (when the reduction
// overlaps the backward); a gather overlapped with the next forward splits the first micro-batch's forward.
bool Builder::split_pass(int mb, PipeOp::Kind kind) const {
  if (!has_dp()) return false;
  const TrainingConfig& t = sc_.train;
  if (sh_.param_gather == ParamGather::PerLayer) return true;
  if (makes_weight_grads(kind)) {
    if (sh_.grad_sync == GradSync::EveryMicrobatch) return true;
    if (mb == M_ - 1 && t.overlap_grad_reduce) return true;
  }
  return kind == PipeOp::Forward && mb == 0 && sh_.gather_overlaps_next_forward && t.overlap_param_gather;
}

// Layer ranges of a pass's segments: one per layer for parameter sharding, else groups of layers whose gradients
// fill at least one bucket.
void Builder::segment_layers(int first, int n, bool split, bool per_layer, std::vector<std::pair<int, int>>& out) const {
  out.clear();
  if (!split || n <= 1) {
    out.emplace_back(first, first + n);
    return;
  }
  int group = 1;
  if (!per_layer) {
    const double layer_bytes = k_.layer_params * grad_wire_bytes();
    group = std::max(1, static_cast<int>(std::ceil(bucket_bytes_ / std::max(1.0, layer_bytes))));
  }
  for (int l = first; l < first + n; l += group) out.emplace_back(l, std::min(first + n, l + group));
}

void Builder::add_pass(int stage, const PipeOp& op, std::size_t j) {
  const int vs = vstage(stage, op.chunk);
  const std::uint64_t base = op_key(j);
  const HostModel& h = k_.host;
  // get_batch on the first virtual stage (and, for Megatron, on the last, which reads the labels), before the forward.
  if (op.kind == PipeOp::Forward && (vs == 0 || (h.megatron() && vs == P_ * V_ - 1)) && h.data_s > 0)
    host_task(stage, h.data_s + (h.data_sync ? h.sync_s : 0), HostPart::Data, base + kKeyData, h.data_sync,
              op.microbatch);
  const int n = k_.layers_per_chunk[vs];
  const int first = chunk_first_layer_[vs];
  const bool fwd = op.kind == PipeOp::Forward;
  const PassKind kind = static_cast<PassKind>(op.kind);
  std::vector<std::pair<int, int>>& ranges = ranges_;
  segment_layers(first, n, split_pass(op.microbatch, op.kind), sh_.param_gather == ParamGather::PerLayer, ranges);
  if (!fwd) std::reverse(ranges.begin(), ranges.end());  // backward walks the layers last to first

  PassRef ref{static_cast<std::uint32_t>(segs_.size()), static_cast<std::uint32_t>(ranges.size())};
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto [lb, le] = ranges[i];
    const int layers = le - lb;
    PassCost cost = k_.layer[kind].scaled(layers);
    double params = k_.layer_params * layers;
    const EdgeWork e = edge_work(vs, P_ * V_, fwd, i == 0, i + 1 == ranges.size());
    if (e.embedding) {
      cost += k_.embed[kind];
      params += k_.embed_params;
    }
    if (e.head) {
      cost += k_.head[kind];
      params += k_.head_params;
    }
    const std::uint64_t cost_key = (fwd ? 1u : 0u) | (static_cast<std::uint64_t>(layers) << 1) |
                                   (e.embedding ? 1ull << 40 : 0) | (e.head ? 1ull << 41 : 0) |
                                   (static_cast<std::uint64_t>(op.kind) << 44);
    TaskInfo ti{static_cast<TaskKind>(kind), Axis::tp, Collective::AllReduce, static_cast<std::int16_t>(stage),
                static_cast<std::int16_t>(op.chunk), op.microbatch, static_cast<std::int16_t>(lb),
                static_cast<std::int16_t>(le), 0.0f, intern_cost(cost_key, cost), kNoTask,
                static_cast<std::uint8_t>((e.embedding ? kEdgeEmbedding : 0) | (e.head ? kEdgeHead : 0))};
    TaskId id = add(out_.compute_stream[stage], cost.duration_s(), ti);
    const std::uint64_t key = base + kKeySegments + kKeySegmentStride * i;
    issue(id, cost.host_s, cost.kernels, key);
    segs_.push_back(Segment{id, lb, le, params, key});
  }
  ref.key = base;
  passes_[pass_index(stage, op.chunk, op.microbatch, op.kind)] = ref;
  // The loss on the last virtual stage: Megatron-Core checks it for NaN/Inf (a device→host sync each) before the
  // backward is issued.
  if (fwd && vs == P_ * V_ - 1 && h.loss_syncs > 0) {
    TaskId sync = host_task(stage, h.loss_syncs * h.sync_s, HostPart::LossSync, base + kKeyLoss, false, op.microbatch);
    g_.add_dep(segs_[ref.first + ref.count - 1].task, sync);
  }
  // W needs its own B first (the output gradient it multiplies); the in-order stream keeps that unless a schedule
  // places W earlier, which is an error the engine would not see.
  if (op.kind == PipeOp::BackwardWeight) {
    const PassRef& b = passes_[pass_index(stage, op.chunk, op.microbatch, PipeOp::BackwardInput)];
    if (b.count > 0) g_.add_dep(segs_[b.first + b.count - 1].task, segs_[ref.first].task);
  }
}

// Each stage receives its forward activations from the previous virtual stage and its backward gradients from the
// next, in the order its own schedule consumes them (MCore batches p2p ops in schedule order). The receive occupies
// the receiver's pipeline stream for the transfer time; the consuming pass waits for it. The gradient comes from the
// next stage's input-gradient pass: its combined Backward, or its B; W sends nothing.
void Builder::add_pipe_recvs(int stage) {
  if (P_ * V_ == 1) return;
  for (const PipeOp& op : sched()[stage]) {
    if (op.kind == PipeOp::BackwardWeight) continue;
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
    // The host issues the receive (batched with the matching send) before the pass that consumes it; without
    // interleaving Megatron then synchronizes the device.
    issue(r, k_.host.p2p_s, 2, cons.key + kKeyRecv, k_.host.p2p_sync ? k_.host.sync_s : -1.0);
  }
}

const ScheduleOrder& Builder::schedule_for(const ScheduleOrder* explicit_order) {
  if (explicit_order) return *explicit_order;
  const Schedule s = sc_.train.schedule;
  for (const Scratch::CachedSchedule& c : scratch_.schedules)
    if (!c.order.empty() && c.schedule == s && c.pp == P_ && c.vpp == V_ && c.microbatches == M_) return c.order;
  Scratch::CachedSchedule& c = scratch_.schedules[scratch_.schedule_next];
  scratch_.schedule_next = (scratch_.schedule_next + 1) % scratch_.schedules.size();
  c.order.clear();  // (a throwing generator leaves the entry empty, i.e. unused)
  c.order = pipeline_schedule(s, P_, V_, M_);
  c.schedule = s;
  c.pp = P_;
  c.vpp = V_;
  c.microbatches = M_;
  return c.order;
}

void Builder::build(const ScheduleOrder* schedule) {
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
  passes_.assign(static_cast<std::size_t>(P_) * V_ * M_ * kPassKinds, PassRef{});
  sched_ptr_ = &schedule_for(schedule);

  chunk_first_layer_.assign(static_cast<std::size_t>(P_) * V_, 0);
  for (int vs = 1; vs < P_ * V_; ++vs) chunk_first_layer_[vs] = chunk_first_layer_[vs - 1] + k_.layers_per_chunk[vs - 1];

  const double slowdown = sc_.hw.gpu.compute.comm_compute_slowdown;
  out_.device.clear();
  max_ops_ = 0;
  for (int s = 0; s < P_; ++s) max_ops_ = std::max(max_ops_, sched()[s].size());
  for (int s = 0; s < P_; ++s) {
    int dev = g_.add_device(slowdown);
    g_.set_launch_queue(dev, k_.host.launch_queue);
    out_.device.push_back(dev);
    out_.compute_stream.push_back(g_.add_stream(dev, engine::StreamClass::Compute));
    out_.pp_stream.push_back(g_.add_stream(dev, engine::StreamClass::Comm));
    out_.dp_stream.push_back(g_.add_stream(dev, engine::StreamClass::Comm));
  }
  std::size_t estimate = static_cast<std::size_t>(P_) * V_ * M_ * 4;
  g_.reserve(estimate, estimate * 2);
  for (int s = 0; s < P_; ++s) {
    if (k_.host.step_begin_s > 0) host_task(s, k_.host.step_begin_s, HostPart::StepBegin, 0, false);
    for (std::size_t j = 0; j < sched()[s].size(); ++j) add_pass(s, sched()[s][j], j);
  }
  for (int s = 0; s < P_; ++s) add_pipe_recvs(s);
  for (int s = 0; s < P_; ++s) add_data_parallel(s);
}

}  // namespace lowering

void lower_step(const Scenario& sc, const StepCosts& costs, Lowered& out, const ScheduleOrder* schedule) {
  lowering::Scratch scratch;
  lowering::lower_step(sc, costs, out, schedule, scratch);
}

namespace lowering {
void lower_step(const Scenario& sc, const StepCosts& costs, Lowered& out, const ScheduleOrder* schedule,
                Scratch& scratch) {
  Builder b(sc, costs, out, scratch);
  b.build(schedule);
}
}  // namespace lowering

}  // namespace parsim
