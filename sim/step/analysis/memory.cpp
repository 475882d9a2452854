// Memory per GPU: model state (weights, gradients, optimizer state) by sharding scheme, and the dynamic part —
// activations of in-flight micro-batches, gathered ZeRO-3/FSDP parameters, gradient buckets, logits — from allocation
// events along the simulated timeline. Sources: domain-notes §3–4 (Korthikanti et al. 2022 §4; Megatron
// dist_optimizer.md; ZeRO (Rajbhandari et al. 2020) §5; PyTorch FSDP ShardingStrategy).
#include "sim/step/analysis.hpp"

#include <algorithm>

namespace parsim {

double stage_param_count(const StepCosts& k, const Plan& pl, int stage) {
  double p = 0;
  for (int c = 0; c < pl.vpp; ++c) {
    const int vs = c * pl.pp + stage;
    p += k.layer_params * k.layers_per_chunk[vs];
    const EdgeWork e = edge_work(vs, pl.pp * pl.vpp, true, true, true);  // the whole chunk: both its ends
    if (e.embedding) p += k.embed_params;
    if (e.head) p += k.head_params;
  }
  return p;
}

namespace {

ActivationOptions act_options(const Scenario& sc) {
  ActivationOptions o;
  o.tp = sc.plan.tp;
  o.cp = sc.plan.cp;
  o.sp = sc.train.sp;
  o.recompute = sc.train.recompute;
  o.precision = sc.train.precision;
  o.flash_attention = sc.train.flash_attention;
  return o;
}

struct ChunkActs {
  double per_layer = 0, working = 0, embed = 0, logits = 0;
};
ChunkActs chunk_acts(const Scenario& sc) {
  const ActivationOptions o = act_options(sc);
  ChunkActs a;
  a.per_layer = activation_bytes_per_layer(sc.model, sc.train.mbs, sc.train.seq, o);
  a.working = activation_working_bytes(sc.model, sc.train.mbs, sc.train.seq, o);
  a.embed = embedding_activation_bytes(sc.model, sc.train.mbs, sc.train.seq, o);
  a.logits = output_activation_bytes(sc.model, sc.train.mbs, sc.train.seq, o);
  return a;
}

}  // namespace

StaticMemory static_memory(const Scenario& sc, const StepCosts& k, int stage) {
  const double psi = stage_param_count(k, sc.plan, stage);
  const double n = std::max(1, k.shard_degree);
  // Bytes per parameter by sharding scheme and precision (plans/sharding.cpp, domain-notes §4).
  const StateBytes b = sharding_traits(sc.plan.sharding).state_bytes(sc.train.precision, n);
  return StaticMemory{b.weights * psi, b.grads * psi, b.optimizer * psi};
}

// What a real process holds beyond its live tensors (estimates; documented in the README):
//  - CUDA context and kernels: ~0.5 GiB per GPU with CUDA 12 lazy loading (PyTorch "CUDA semantics" notes that the
//    context takes a few hundred MiB, varying with driver and libraries);
//  - NCCL: NCCL_BUFFSIZE = 4 MiB per channel, per peer and protocol → ~0.25 GiB per communicator in use;
//  - the caching allocator reserves more than is allocated: +5 %. The shared Kineto traces show reserved/allocated of
//    1.26 (Qwen-0.5B, H100) to 1.93 (DDP, V100) for small, fragmented workloads; LLM steps allocate a few large,
//    repeating blocks and sit far lower — published run R0208 (MPT-1B, FSDP, A100-40GB) trained with 35.4 GiB of live
//    tensors predicted on a 39.4 GiB device, which bounds context + NCCL + fragmentation to ≈ 4 GiB there.
double overhead_bytes(const Scenario& sc, double allocated_bytes) {
  int comms = 0;
  for (Axis a : kAxes) comms += sc.plan.degree(a) > 1 ? 1 : 0;  // one communicator per axis in use
  return 0.5 * kGiB + 0.25 * kGiB * comms + 0.05 * allocated_bytes;
}

namespace {

void finish_report(const Scenario& sc, const StepCosts& k, const std::vector<double>& dyn_peak,
                   const std::vector<double>& act_at_peak, const std::vector<double>& buf_at_peak, MemoryReport& m,
                   std::vector<StageMetrics>* stages) {
  m.per_stage_peak_gib.assign(dyn_peak.size(), 0);
  m.capacity_gib = sc.hw.gpu.hbm_capacity_bytes / kGiB;
  double best = -1;
  for (std::size_t s = 0; s < dyn_peak.size(); ++s) {
    const StaticMemory st = static_memory(sc, k, static_cast<int>(s));
    const double alloc = st.weights + st.grads + st.optimizer + dyn_peak[s];
    const double device = alloc + overhead_bytes(sc, alloc);
    m.per_stage_peak_gib[s] = device / kGiB;
    if (stages && s < stages->size()) {
      (*stages)[s].peak_gib = device / kGiB;
      (*stages)[s].allocated_peak_gib = alloc / kGiB;
    }
    if (device > best) {
      best = device;
      m.peak_stage = static_cast<int>(s);
      m.peak_gib = device / kGiB;
      m.allocated_peak_gib = alloc / kGiB;
      m.weights_gib = st.weights / kGiB;
      m.grads_gib = st.grads / kGiB;
      m.optimizer_gib = st.optimizer / kGiB;
      m.activations_gib = act_at_peak[s] / kGiB;
      m.buffers_gib = buf_at_peak[s] / kGiB;
      m.overhead_gib = (device - alloc) / kGiB;
    }
  }
  m.fits = m.peak_gib <= m.capacity_gib;
}

}  // namespace

void timeline_memory(const Scenario& sc, const StepCosts& k, const ExecutedStep& ex, StepReport& rep,
                     std::vector<MemorySample>* counter) {
  const Plan& pl = sc.plan;
  const ChunkActs a = chunk_acts(sc);
  const int P = pl.pp;
  const Lowered& lw = ex.lowered;
  const auto& tl = ex.timeline;
  Scratch& sc_buf = ex.scratch;
  auto& ev = sc_buf.events;
  ev.resize(P);
  for (auto& v : ev) v.clear();
  const bool gather = sharding_traits(pl.sharding).param_gather == ParamGather::PerLayer && k.dp_group.size > 1;
  const double pwb = param_wire_bytes(sc.train.precision);
  // Gathered parameters are held from the start of their all-gather to the end of the segment that uses them.
  // Events are emitted in compute-stream order (start events of a pass, then its end events), which is time order;
  // gathered-parameter allocations happen at their all-gather's start and go to a second list, also in time order
  // (all-gathers run in the order of the passes they feed). The two are merged, not sorted.
  auto& gathers = sc_buf.gathers;
  gathers.resize(P);
  for (auto& v : gathers) v.clear();
  for (std::size_t t = 0; t < lw.graph.num_tasks(); ++t) {
    const auto id = static_cast<engine::TaskId>(t);
    const TaskInfo& ti = lw.info[lw.graph.tag(id)];
    if (!is_pass(ti.kind)) continue;
    const int s = ti.stage;
    const int layers = ti.layer_end - ti.layer_begin;
    const bool has_embed = ti.edges & kEdgeEmbedding, has_head = ti.edges & kEdgeHead;  // placed by the lowering
    const double stored = layers * a.per_layer + (has_embed ? a.embed : 0.0);
    // Parameters gathered in 16 bit (all of this segment's, the local shard included), held from the all-gather's
    // start to the end of the segment; in backward also the unsharded 16-bit gradients until the reduce-scatter
    // (approximated by the end of the segment).
    const double gathered = gather ? (layers * k.layer_params + (has_embed ? k.embed_params : 0) +
                                      (has_head ? k.head_params : 0)) * pwb
                                   : 0.0;
    // A split backward: B (input gradient) holds the working set and the gathered parameters and ends the logits;
    // W (weight gradient) holds the unsharded gradients and frees the stored activations (Qi et al. 2024 §2: the
    // layer inputs stay until W).
    const bool fwd = ti.kind == TaskKind::Forward;
    const bool reads_params = ti.kind != TaskKind::BackwardWeight;
    const bool makes_grads = ends_backward(ti.kind);
    const bool working = ti.kind == TaskKind::Backward || ti.kind == TaskKind::BackwardInput;
    auto& e = ev[s];
    if (gather && reads_params) {
      if (ti.gather != kNoTask) gathers[s].push_back({tl.start[ti.gather], gathered, 1});
      else e.push_back({tl.start[id], gathered, 1});
    }
    if (fwd) {
      e.push_back({tl.start[id], stored, 0});                          // kept until its backward
      if (has_head) e.push_back({tl.start[id], a.logits, 0});          // logits live until the head's backward
    } else {
      if (working) e.push_back({tl.start[id], a.working, 0});          // backward working set
      if (gather && makes_grads) e.push_back({tl.start[id], gathered, 1});  // unsharded gradients
      if (working) e.push_back({tl.end[id], -a.working, 0});
      if (makes_grads) e.push_back({tl.end[id], -stored, 0});
      if (has_head && ti.kind != TaskKind::BackwardWeight) e.push_back({tl.end[id], -a.logits, 0});
      if (gather && makes_grads) e.push_back({tl.end[id], -gathered, 1});
    }
    if (gather && reads_params) e.push_back({tl.end[id], -gathered, 1});
  }
  auto by_time = [](const MemEvent& x, const MemEvent& y) { return x.t < y.t; };  // stable: compute events first
  for (int s = 0; s < P; ++s) {
    if (gathers[s].empty()) continue;
    auto& all = sc_buf.merged;
    all.resize(ev[s].size() + gathers[s].size());
    std::merge(ev[s].begin(), ev[s].end(), gathers[s].begin(), gathers[s].end(), all.begin(), by_time);
    ev[s].swap(all);
  }
  std::vector<double> peak(P, 0), act_at(P, 0), buf_at(P, 0);
  for (int s = 0; s < P; ++s) {
    auto& e = ev[s];
    // Events of an in-order compute stream arrive in time order, frees of one pass before the next pass's
    // allocations; only gathered parameters (allocated at their all-gather's start) need a sort.
    if (!std::is_sorted(e.begin(), e.end(), [](const MemEvent& x, const MemEvent& y) { return x.t < y.t; }))
      std::sort(e.begin(), e.end(), [](const MemEvent& x, const MemEvent& y) {
        return x.t != y.t ? x.t < y.t : x.delta < y.delta;  // frees before allocations at the same instant
      });
    const StaticMemory st = static_memory(sc, k, s);
    const double base = st.weights + st.grads + st.optimizer;
    double cur_act = 0, cur_buf = 0;
    if (counter) counter->push_back({s, 0, base});
    for (const MemEvent& x : e) {
      (x.kind == 0 ? cur_act : cur_buf) += x.delta;
      if (cur_act + cur_buf > peak[s]) {
        peak[s] = cur_act + cur_buf;
        act_at[s] = cur_act;
        buf_at[s] = cur_buf;
      }
      if (counter) counter->push_back({s, x.t, base + cur_act + cur_buf});
    }
  }
  finish_report(sc, k, peak, act_at, buf_at, rep.memory, &rep.stages);
}

MemoryReport estimate_memory_from_costs(const Scenario& sc, const StepCosts& k) {
  // Closed form for the sweep's pre-check: the in-flight activations implied by the schedule order alone (the
  // compute stream is in-order, so the order fixes how many micro-batches are alive), plus one backward working
  // set and the logits. Timeline-dependent extras (gathered parameters) are left out: a lower bound of evaluate().
  const Plan& pl = sc.plan;
  const ChunkActs a = chunk_acts(sc);
  const int P = pl.pp, V = pl.vpp;
  // Periodic schedules reach their peak in the warm-up: walk the order evaluate() simulates (steady_state.cpp), not
  // all M micro-batches — the pre-check was O(M) per candidate, minutes for a sweep at 10^6 micro-batches (issue 12).
  const std::int64_t M_all = sc.train.micro_batches(pl);
  const int M = static_cast<int>(steady_state_extendable(sc, false, M_all) ? kSteadyGroupsLong * pl.pp : M_all);
  const auto sched = pipeline_schedule(sc.train.schedule, P, V, M);
  // Activations a chunk pass keeps until its backward, by virtual stage (with the embedding's where it sits).
  std::vector<double> stored_by_vs(static_cast<std::size_t>(P) * V);
  for (int vs = 0; vs < P * V; ++vs)
    stored_by_vs[vs] =
        k.layers_per_chunk[vs] * a.per_layer + (edge_work(vs, P * V, true, true, true).embedding ? a.embed : 0);
  std::vector<double> peak(P, 0), act(P, 0), buf(P, 0);
  for (int s = 0; s < P; ++s) {
    double cur = 0, best = 0;
    for (const PipeOp& op : sched[s]) {
      const double stored = stored_by_vs[op.chunk * P + s];
      if (op.kind == PipeOp::Forward) {
        cur += stored;
        best = std::max(best, cur);
      } else {
        if (op.kind != PipeOp::BackwardWeight) best = std::max(best, cur + a.working);
        if (op.kind != PipeOp::BackwardInput) cur -= stored;
      }
    }
    if (s == (P * V - 1) % P) best += a.logits;  // the stage of the last virtual stage, which holds the head
    peak[s] = act[s] = best;
  }
  MemoryReport m;
  finish_report(sc, k, peak, act, buf, m, nullptr);
  return m;
}

}  // namespace parsim
