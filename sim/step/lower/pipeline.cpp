// Lowering one training step to a task graph: one representative rank per pipeline stage (TP, CP and DP peers are
// symmetric), each with a compute stream, a pipeline-receive stream and a data-parallel stream. The schedule (plans/)
// fixes the order of the passes on each compute stream — forward, backward, or the backward's halves B and W —;
// pipeline receives are tasks of their own whose dependencies follow the data; data-parallel collectives come from
// data_parallel.cpp.
#include "sim/step/lower/builder.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

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
    case HostPart::TimerSync: return "timer synchronize (--timing-log-level 2)";
  }
  return "host";
}

namespace lowering {

std::uint32_t Builder::find_cost(std::uint64_t key) const {
  for (const auto& [k, id] : cost_keys_)
    if (k == key) return id;
  return kNoCost;
}

std::uint32_t Builder::intern_cost(std::uint64_t key, const PassCost& c, const CostRecipe& r) {
  if (const std::uint32_t id = find_cost(key); id != kNoCost) return id;
  const std::uint32_t id = add_cost(c, r);
  cost_keys_.emplace_back(key, id);
  return id;
}

Builder::CommCost Builder::comm(Collective c, double bytes, const GroupShape& gs) const {
  if (gs.size <= 1) return {};
  // Per-layer collectives repeat with the same size every micro-batch: memoise the last few.
  for (const CommMemo& m : memo_)
    if (m.group == &gs && m.coll == c && m.bytes == bytes) return {m.time, m.nic};
  const CollectiveCost cc = scratch_.collectives ? scratch_.collectives->get(sc_.hw, c, bytes, gs)
                                                 : collective_time(sc_.hw, c, bytes, gs);
  // Only a group that leaves the node puts bytes on the NICs (nic_busy_s is 0 otherwise).
  const double nic = gs.nodes > 1 ? cc.nic_busy_s : 0.0;
  memo_[memo_next_] = CommMemo{&gs, c, bytes, cc.time_s, nic};
  memo_next_ = (memo_next_ + 1) % memo_.size();
  return {cc.time_s, nic};
}

void Builder::duration_error(double seconds, const TaskInfo& ti) const {
  static constexpr const char* kNames[] = {"forward pass", "backward pass", "backward-input pass", "backward-weight pass",
                                           "pipeline receive", "gradient reduction", "parameter gather", "optimizer step"};
  const char* what = kNames[static_cast<int>(ti.kind)];
  if (std::isnan(seconds))
    throw InputError(std::string("a simulated ") + what + " takes NaN seconds: the inputs give no finite cost (check "
                     "the hardware file's rates and efficiencies)");
  throw InputError(std::string("the simulated step is beyond parsim's clock: a ") + what + " takes " +
                     fmt_num(seconds) + " s and the step's tasks add up to " + fmt_num(total_task_s_) +
                     " s (at most 1e8 s, int64 nanoseconds); check --seq, --gbs, --bucket-mb and the hardware file's "
                     "rates and efficiencies");
}

// Bucketed collectives: a segment's gradients go out in ⌈bytes / bucket⌉ buckets, each paying the latency.
Builder::CommCost Builder::bucketed(Collective c, double bytes, const GroupShape& gs) const {
  const double nb = std::max(1.0, std::floor(bytes / bucket_bytes_));
  const CommCost one = comm(c, bytes / nb, gs);
  return {nb * one.time, nb * one.nic};
}

// Which passes are split into per-layer(-group) tasks so that data-parallel collectives can start or wait at layer
// granularity (ShardingTraits): per-layer parameter gathers split every pass; gradients that sync every micro-batch
// split every weight-gradient pass; gradients that sync once split the pass that completes the chunk's gradients (when
// the reduction overlaps the backward); a gather overlapped with the next forward splits the chunk's first forward.
bool Builder::split_pass(int stage, const PipeOp& op) const {
  if (!has_dp()) return false;
  const TrainingConfig& t = sc_.train;
  if (sh_.param_gather == ParamGather::PerLayer) return true;
  if (makes_weight_grads(op.kind)) {
    if (sh_.grad_sync == GradSync::EveryMicrobatch) return true;
    if (op.microbatch == last_wgrad_mb(stage, op.chunk) && t.overlap_grad_reduce) return true;
  }
  return op.kind == PipeOp::Forward && op.microbatch == first_forward_mb(stage, op.chunk) &&
         sh_.gather_overlaps_next_forward && t.overlap_param_gather;
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
    // Mixed layer kinds: the chunk's mean layer fills the buckets.
    const double per_layer_params = k_.uniform() ? k_.layer_params : k_.range_params(first, first + n).total() / n;
    const double layer_bytes = per_layer_params * grad_wire_bytes();
    // Clamped before the cast: --bucket-mb 1e300 made the quotient beyond int (undefined behaviour, issue 12).
    group = static_cast<int>(std::clamp(std::ceil(bucket_bytes_ / std::max(1.0, layer_bytes)), 1.0, double(n)));
  }
  for (int l = first; l < first + n; l += group) out.emplace_back(l, std::min(first + n, l + group));
}

// The whole pass's cost (all its layers and edge work), what an F&B pair overlaps.
PassCost Builder::whole_pass_cost(int stage, const PipeOp& op) const {
  const int vs = vstage(stage, op.chunk);
  const PassKind kind = static_cast<PassKind>(op.kind);
  PassCost c = k_.layer[kind].scaled(k_.layers_per_chunk[vs]);
  const EdgeWork e = edge_work(vs, place_.virtual_stages(), op.kind == PipeOp::Forward, true, true);
  if (e.embedding) c += k_.embed[kind];
  if (e.head) c += k_.head[kind];
  return c;
}

void Builder::add_pass(int stage, const PipeOp& op, std::size_t j, const PairOverlap* pair, bool alone) {
  const int vs = vstage(stage, op.chunk);
  const std::uint64_t base = op_key(j);
  const HostModel& h = k_.host;
  // get_batch on the first virtual stage (and, for Megatron, on the last, which reads the labels), before the forward.
  if (op.kind == PipeOp::Forward && (vs == 0 || (h.megatron() && vs == place_.virtual_stages() - 1)) && h.data_s > 0)
    host_task(stage, HostPart::Data, base + kKeyData, h.data_sync, op.microbatch);
  const int n = k_.layers_per_chunk[vs];
  const int first = chunk_first_layer_[vs];
  const bool fwd = op.kind == PipeOp::Forward;
  // --timing-log-level 2: the forward-compute / backward-compute timers (and batch-generator inside the forward) start
  // with a torch.cuda.synchronize() before the pass and stop with one after it (HostModel::timer_syncs_*).
  const int timer_syncs = fwd ? h.timer_syncs_fwd : h.timer_syncs_bwd;
  if (timer_syncs > 0 && op.kind != PipeOp::BackwardWeight)
    host_task(stage, HostPart::TimerSync, base + kKeyData - 0x10, true, op.microbatch,
              static_cast<std::uint8_t>(kTimerBefore | (fwd ? kTimerForward : 0)));
  const PassKind kind = static_cast<PassKind>(op.kind);
  std::vector<std::pair<int, int>>& ranges = ranges_;
  segment_layers(first, n, split_pass(stage, op), sh_.param_gather == ParamGather::PerLayer, ranges);
  if (!fwd) std::reverse(ranges.begin(), ranges.end());  // backward walks the layers last to first

  PassRef ref{static_cast<std::uint32_t>(segs_.size()), static_cast<std::uint32_t>(ranges.size())};
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto [lb, le] = ranges[i];
    const int layers = le - lb;
    // Uniform models (every dense model): one kind, n · cost — the sweep's hot path skips the per-kind sums.
    const bool one_kind = k_.uniform();
    const EdgeWork e = edge_work(vs, place_.virtual_stages(), fwd, i == 0, i + 1 == ranges.size());
    const auto edges = static_cast<std::uint8_t>((e.embedding ? kEdgeEmbedding : 0) | (e.head ? kEdgeHead : 0));
    // Mixed layer kinds: two ranges of one length may differ, so the key names the range.
    const std::uint64_t range = one_kind ? static_cast<std::uint64_t>(layers)
                                         : static_cast<std::uint64_t>(lb) | (static_cast<std::uint64_t>(le) << 16);
    const std::uint64_t cost_key = (fwd ? 1u : 0u) | (range << 1) | (e.embedding ? 1ull << 40 : 0) |
                                   (e.head ? 1ull << 41 : 0) | (static_cast<std::uint64_t>(op.kind) << 44) |
                                   (alone ? 1ull << 47 : 0);
    const CostRecipe cr{CostRecipe::Kind::Segment, kind, edges, static_cast<std::int16_t>(lb),
                        static_cast<std::int16_t>(le), static_cast<std::int16_t>(stage), alone};
    std::uint32_t cost_id;
    if (pair) {
      CostRecipe half = cr;
      half.kind = CostRecipe::Kind::Pair;
      cost_id = add_cost(pair->apply(compose(cr)), half);
    } else {
      // An unpaired segment whose cost was composed before (same key: same inputs) takes it as it is.
      cost_id = find_cost(cost_key);
      if (cost_id == kNoCost) cost_id = intern_cost(cost_key, compose(cr), cr);
    }
    const RankParams rp = segment_params(lb, le, edges);
    TaskInfo ti{static_cast<TaskKind>(kind), Axis::tp, Collective::AllReduce, static_cast<std::int16_t>(stage),
                static_cast<std::int16_t>(op.chunk), op.microbatch, static_cast<std::int16_t>(lb),
                static_cast<std::int16_t>(le), 0.0f, cost_id, kNoTask,
                static_cast<std::uint8_t>(edges | (pair ? kPaired : 0))};
    Recipe r;
    r.kind = RecipeKind::Pass;
    r.id = cost_id;
    Values v;
    const TaskId id = add(out_.compute_stream[stage], r, ti, v);
    const std::uint64_t key = base + kKeySegments + kKeySegmentStride * i;
    issue(id, v, key);
    segs_.push_back(Segment{id, lb, le, rp.dense, rp.expert, key, edges});
  }
  ref.key = base;
  passes_[pass_index(stage, op.chunk, op.microbatch, op.kind)] = ref;
  // The loss on the last virtual stage: Megatron-Core checks it for NaN/Inf (a device→host sync each) before the
  // backward is issued.
  if (fwd && vs == place_.virtual_stages() - 1 && h.loss_syncs > 0) {
    TaskId sync = host_task(stage, HostPart::LossSync, base + kKeyLoss, false, op.microbatch);
    g_.add_dep(segs_[ref.first + ref.count - 1].task, sync);
  }
  if (timer_syncs > 0 && op.kind != PipeOp::BackwardWeight)
    host_task(stage, HostPart::TimerSync, base + kKeyLoss + 0x100, true, op.microbatch);
  // W needs its own B first (the output gradient it multiplies); the in-order stream keeps that unless a schedule
  // places W earlier, which is an error the engine would not see.
  if (op.kind == PipeOp::BackwardWeight) {
    const PassRef& b = passes_[pass_index(stage, op.chunk, op.microbatch, PipeOp::BackwardInput)];
    if (b.count > 0) g_.add_dep(segs_[b.first + b.count - 1].task, segs_[ref.first].task);
  }
}

// Each stage receives its forward activations from the previous virtual stage and its backward gradients from the
// next (on the micro-batch's path: PipelinePlacement::locate), in the order its own schedule consumes them (MCore
// batches p2p ops in schedule order). The receive occupies the receiver's pipeline stream for the transfer time; the
// consuming pass waits for it. The gradient comes from the next stage's input-gradient pass: its combined Backward,
// or its B (a schedule may use either per micro-batch); W sends nothing. An F&B pair starts when both its inputs are
// there (DualPipe waits for all the pair's receives before computing).
void Builder::add_pipe_recvs(int stage) {
  const int nvs = place_.virtual_stages();
  if (nvs == 1) return;
  const auto& order = sched()[stage];
  // F&B-pair schedules (DualPipe) wait on their transfers only: no device-wide synchronize after a receive.
  const bool pairs = schedule_traits(sc_.train.schedule).overlaps_forward_backward;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const PipeOp& op = order[i];
    if (op.kind == PipeOp::BackwardWeight) continue;
    const int vs = vstage(stage, op.chunk);
    const bool fwd = op.kind == PipeOp::Forward;
    const int from_vs = fwd ? vs - 1 : vs + 1;
    if (from_vs < 0 || from_vs >= nvs) continue;
    const StageChunk from = place_.locate(from_vs, place_.direction(op.chunk));
    const PassRef* prod = &passes_[pass_index(from.stage, from.chunk, op.microbatch, op.kind)];
    if (!fwd && prod->count == 0)  // the producer ran the other form of the backward
      prod = &passes_[pass_index(from.stage, from.chunk, op.microbatch,
                                 op.kind == PipeOp::Backward ? PipeOp::BackwardInput : PipeOp::Backward)];
    const PassRef& cons = passes_[pass_index(stage, op.chunk, op.microbatch, op.kind)];
    TaskInfo ti{TaskKind::PipeRecv, Axis::pp, Collective::SendRecv, static_cast<std::int16_t>(stage),
                static_cast<std::int16_t>(op.chunk), op.microbatch, 0, 0, 0.0f, kNoTask, kNoTask};
    // The host issues the receive (batched with the matching send) before the pass that consumes it; without
    // interleaving Megatron then synchronizes the device — except under F&B pairs: DualPipe's own p2p waits on its
    // transfers only (no device-wide synchronize, which would wait for the pair's first op and, through it, for this
    // very receive).
    Recipe recipe;
    recipe.kind = RecipeKind::Recv;
    recipe.flags = k_.host.p2p_sync && !pairs ? kRecipeSync : 0;
    Values v;
    const TaskId r = add(out_.pp_stream[stage], recipe, ti, v);
    g_.add_dep(segs_[prod->first + prod->count - 1].task, r);
    g_.add_dep(r, segs_[cons.first].task);
    std::uint64_t key = cons.key + kKeyRecv;
    // The second op of an F&B pair: its input also gates the pair's first op, so the host issues it with the pair's
    // first op.
    if (i > 0 && order[i - 1].overlapped_with_next) {
      const PipeOp& f = order[i - 1];
      const PassRef& first = passes_[pass_index(stage, f.chunk, f.microbatch, f.kind)];
      g_.add_dep(r, segs_[first.first].task);
      key = first.key + kKeyRecv + 1;  // after the first op's own receive
    }
    issue(r, v, key);
  }
}

const ScheduleOrder& Builder::schedule_for(const ScheduleOrder* explicit_order) {
  if (explicit_order) return *explicit_order;
  const Schedule s = sc_.train.schedule;
  const int vpp = sc_.plan.vpp;  // the plan's (V_ is the placement's chunks per stage: 2 under DualPipe at vpp 1)
  return scratch_.schedules.get(s, P_, vpp, M_);
}

void Builder::build(const ScheduleOrder* schedule) {
  const Plan& pl = sc_.plan;
  P_ = pl.pp;
  place_ = pipeline_placement(sc_.train.schedule, pl.pp, pl.vpp);
  V_ = place_.chunks;
  bucket_bytes_ = sc_.train.bucket_bytes;
  M_ = static_cast<int>(sc_.train.micro_batches(pl));
  any_pass_nic_ = k_.nic_share[Axis::tp] > 0 || k_.nic_share[Axis::cp] > 0 || k_.nic_share[Axis::ep] > 0;
  total_task_s_ = 0;

  // The shape cache: the slot lent to `out` last time takes its graph back; a plan of a kept shape re-fills it.
  ShapeCache& cache = scratch_.shapes;
  if (cache.lent >= 0) {
    ShapeSlot& lent = cache.slots[static_cast<std::size_t>(cache.lent)];
    if (cache.lent_to == &out_) std::swap(out_, lent.graph);
    else lent.valid = false;  // (lent to another Lowered: its graph is not here to take back)
    cache.lent = -1;
  }
  const bool cacheable = cache.enabled && shape_key(schedule, cache.key);
  if (cacheable) {
    for (std::size_t i = 0; i < cache.slots.size(); ++i) {
      ShapeSlot& slot = cache.slots[i];
      if (!slot.valid || slot.key != cache.key) continue;
      std::swap(out_, slot.graph);
      cache.lent = static_cast<int>(i);
      cache.lent_to = &out_;
      slot.last_use = ++cache.clock;
      ++cache.refills;
      refill(slot);
      return;
    }
  }
  ++cache.builds;
  scratch_.recipes.clear();
  scratch_.cost_recipes.clear();
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

  const int nvs = place_.virtual_stages();
  chunk_first_layer_.assign(static_cast<std::size_t>(nvs), 0);
  for (int vs = 1; vs < nvs; ++vs) chunk_first_layer_[vs] = chunk_first_layer_[vs - 1] + k_.layers_per_chunk[vs - 1];
  first_fwd_mb_.assign(static_cast<std::size_t>(P_) * V_, -1);
  last_wgrad_mb_.assign(static_cast<std::size_t>(P_) * V_, -1);
  out_.splits_backward = false;
  for (int s = 0; s < P_; ++s)
    for (const PipeOp& op : sched()[s]) {
      const auto i = static_cast<std::size_t>(s * V_ + op.chunk);
      if (op.kind == PipeOp::Forward && first_fwd_mb_[i] < 0) first_fwd_mb_[i] = op.microbatch;
      if (makes_weight_grads(op.kind)) last_wgrad_mb_[i] = op.microbatch;
      out_.splits_backward = out_.splits_backward || op.kind == PipeOp::BackwardInput;
    }

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
    if (k_.host.step_begin_s > 0) host_task(s, HostPart::StepBegin, 0, false);
    const auto& order = sched()[s];
    // --moe-a2a-overlap (Megatron-Core combined 1F1B, pipeline_parallel/combined_1f1b.py): a forward runs merged with
    // the backward of another micro-batch that precedes or follows it directly in the stage's order — with one stage
    // F0 alone, then (B0, F1), …, (B(m−2), F(m−1)), then B(m−1) alone; with pipelining the warm-up forwards and the
    // cool-down backwards alone. Paired greedily in order: neighbours of opposite direction and different
    // micro-batches.
    alone_.assign(order.size(), 0);
    if (sc_.train.moe_a2a_overlap && sc_.model.is_moe()) {
      auto is_fwd = [](const PipeOp& o) { return o.kind == PipeOp::Forward; };
      auto is_bwd = [](const PipeOp& o) { return o.kind == PipeOp::Backward || o.kind == PipeOp::BackwardInput; };
      std::fill(alone_.begin(), alone_.end(), 1);
      for (std::size_t i = 0; i + 1 < order.size(); ++i) {
        if (!alone_[i]) continue;
        std::size_t k = i + 1;
        while (k < order.size() && order[k].kind == PipeOp::BackwardWeight) ++k;
        if (k >= order.size() || order[i].microbatch == order[k].microbatch) continue;
        if ((is_fwd(order[i]) && is_bwd(order[k])) || (is_bwd(order[i]) && is_fwd(order[k]))) alone_[i] = alone_[k] = 0;
      }
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i].overlapped_with_next && i + 1 < order.size()) {
        // An F&B pair: each pass's communication hides behind the other's compute (costs/comm.cpp overlap_pair).
        const auto [a, b] = overlap_pair(whole_pass_cost(s, order[i]), whole_pass_cost(s, order[i + 1]), slowdown);
        add_pass(s, order[i], i, &a);
        add_pass(s, order[i + 1], i + 1, &b);
        ++i;
      } else {
        add_pass(s, order[i], i, nullptr, alone_[i] != 0);
      }
    }
  }
  for (int s = 0; s < P_; ++s) add_pipe_recvs(s);
  for (int s = 0; s < P_; ++s) add_data_parallel(s);
  if (!cacheable) return;
  // Kept in the least recently used slot, lent to `out` until the next lowering.
  std::size_t victim = 0;
  for (std::size_t i = 1; i < cache.slots.size(); ++i) {
    const ShapeSlot& a = cache.slots[i];
    const ShapeSlot& b = cache.slots[victim];
    if ((!a.valid && b.valid) || (a.valid == b.valid && a.last_use < b.last_use)) victim = i;
  }
  ShapeSlot& slot = cache.slots[victim];
  keep(slot);
  slot.valid = true;
  slot.last_use = ++cache.clock;
  cache.lent = static_cast<int>(victim);
  cache.lent_to = &out_;
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
