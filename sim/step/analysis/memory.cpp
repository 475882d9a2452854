// Memory per GPU: model state (weights, gradients, optimizer state) by sharding scheme, and the dynamic part —
// activations of in-flight micro-batches, gathered ZeRO-3/FSDP parameters, gradient buckets, logits — from allocation
// events along the simulated timeline. Sources: domain-notes §3–4 (Korthikanti et al. 2022 §4; Megatron
// dist_optimizer.md; ZeRO (Rajbhandari et al. 2020) §5; PyTorch FSDP ShardingStrategy).
#include "sim/step/analysis.hpp"

#include <algorithm>
#include <array>

namespace parsim {

RankParams stage_params(const StepCosts& k, const Plan& pl, int stage) {
  RankParams p;
  // The stage's chunks c·pp + stage; their first layers only matter with several layer kinds (a uniform model's range
  // costs n · per layer), so uniform models skip the prefix scan (the sweep's pre-check calls this per stage).
  int first = 0, scanned = 0;
  for (int c = 0; c < pl.vpp; ++c) {
    const int vs = c * pl.pp + stage;
    if (!k.uniform())
      while (scanned < vs) first += k.layers_per_chunk[scanned++];
    const int n = k.layers_per_chunk[vs];
    const RankParams r = k.range_params(first, first + n);
    p.dense += r.dense;
    p.expert += r.expert;
    const EdgeWork e = edge_work(vs, pl.pp * pl.vpp, true, true, true);  // the whole chunk: both its ends
    if (e.embedding) p.dense += k.embed_params;
    if (e.head) p.dense += k.head_params;
  }
  return p;
}

double stage_param_count(const StepCosts& k, const Plan& pl, int stage) { return stage_params(k, pl, stage).total(); }

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

// Activation bytes of one micro-batch by layer kind (the StepCosts kinds, same order), and of the edges.
struct ChunkActs {
  // Per layer of each kind (at most 3 attention × 2 FFN kinds): kept until its backward / alive during it.
  std::array<double, 6> stored{}, working{};
  double embed = 0, logits = 0;
  // Bytes layers [first, last) keep: Σ count · stored(kind).
  double stored_range(const StepCosts& k, int first, int last) const {
    return k.sum_range<double>(first, last, [&](const LayerKindCosts& kc, int n) {
      return n * stored[static_cast<std::size_t>(&kc - k.kinds.data())];
    });
  }
  // The working set of a backward over layers [first, last): the largest of one layer of each kind present.
  double working_range(const StepCosts& k, int first, int last) const {
    if (k.uniform()) return working.front();
    double w = 0;
    for (std::size_t j = 0; j < k.kinds.size(); ++j)
      if (k.count(j, first, last) > 0) w = std::max(w, working[j]);
    return w;
  }
};
ChunkActs chunk_acts(const Scenario& sc, const StepCosts& k) {
  ActivationOptions o = act_options(sc);
  if (sc.model.is_moe()) o.experts = expert_split(sc);
  ChunkActs a;
  for (std::size_t j = 0; j < k.kinds.size() && j < a.stored.size(); ++j) {
    a.stored[j] = activation_bytes_per_layer(sc.model, k.kinds[j].kind, sc.train.mbs, sc.train.seq, o);
    a.working[j] = activation_working_bytes(sc.model, k.kinds[j].kind, sc.train.mbs, sc.train.seq, o);
  }
  a.embed = embedding_activation_bytes(sc.model, sc.train.mbs, sc.train.seq, o);
  a.logits = output_activation_bytes(sc.model, sc.train.mbs, sc.train.seq, o);
  return a;
}

}  // namespace

StaticMemory static_memory(const Scenario& sc, const StepCosts& k, int stage) {
  const RankParams psi = stage_params(k, sc.plan, stage);
  const double n = std::max(1, k.shard_degree);
  // Bytes per parameter by sharding scheme and precision (plans/sharding.cpp, domain-notes §4).
  const ShardingTraits& sh = sharding_traits(sc.plan.sharding);
  const StateBytes b = sh.state_bytes(sc.train.precision, n);
  StaticMemory m{b.weights * psi.dense, b.grads * psi.dense, b.optimizer * psi.dense};
  if (psi.expert > 0) {
    // Routed experts: the rank's experts/ep experts, each ÷ etp (layer_params_per_rank), their state sharded over the
    // expert-DP group (Megatron-Core's distributed optimizer shards expert parameters over expert_data_parallel_group).
    const StateBytes be = sh.state_bytes(sc.train.precision, std::max(1, k.expert_shard_degree));
    m.weights += be.weights * psi.expert;
    m.grads += be.grads * psi.expert;
    m.optimizer += be.optimizer * psi.expert;
  }
  return m;
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
  if (sc.model.is_moe()) {
    // MoE folding builds its own groups (Megatron-Core parallel_state: expert TP, expert DP, TP×EP), each a
    // communicator once used: expert-DP for the expert gradients, expert-TP for the dispatcher's gathers (a group of
    // its own also when etp = tp), TP×EP for the token-count exchange.
    const Plan& p = sc.plan;
    comms += p.expert_dp() > 1 ? 1 : 0;
    comms += p.expert_tp() > 1 ? 1 : 0;
    comms += p.ep > 1 && p.expert_tp() > 1 ? 1 : 0;
  }
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
  const ChunkActs a = chunk_acts(sc, k);
  const int P = pl.pp;
  const Lowered& lw = ex.lowered;
  const auto& tl = ex.timeline;
  Scratch& sc_buf = ex.scratch;
  auto& ev = sc_buf.events;
  ev.resize(P);
  for (auto& v : ev) v.clear();
  const bool gather = sharding_traits(pl.sharding).param_gather == ParamGather::PerLayer && k.dp_group.size > 1;
  const double pwb = param_wire_bytes(sc.train.precision);
  const bool uniform = k.uniform();
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
    const bool has_embed = ti.edges & kEdgeEmbedding, has_head = ti.edges & kEdgeHead;  // placed by the lowering
    // Uniform models (one layer kind): n · per-layer values directly — this loop runs for every task of every plan.
    const int layers = ti.layer_end - ti.layer_begin;
    const double stored = (uniform ? layers * a.stored[0] : a.stored_range(k, ti.layer_begin, ti.layer_end)) +
                          (has_embed ? a.embed : 0.0);
    const double working_set = uniform ? a.working[0] : a.working_range(k, ti.layer_begin, ti.layer_end);
    // Parameters gathered in 16 bit (all of this segment's, the local shard included), held from the all-gather's
    // start to the end of the segment; in backward also the unsharded 16-bit gradients until the reduce-scatter
    // (approximated by the end of the segment).
    const double gathered = gather ? ((uniform ? layers * k.layer_params
                                               : k.range_params(ti.layer_begin, ti.layer_end).total()) +
                                      (has_embed ? k.embed_params : 0) +
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
      if (working) e.push_back({tl.start[id], working_set, 0});        // backward working set
      if (gather && makes_grads) e.push_back({tl.start[id], gathered, 1});  // unsharded gradients
      if (working) e.push_back({tl.end[id], -working_set, 0});
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
  const ChunkActs a = chunk_acts(sc, k);
  const int P = pl.pp, V = pl.vpp;
  // Periodic schedules reach their peak in the warm-up: walk the order evaluate() simulates (steady_state.cpp), not
  // all M micro-batches — the pre-check was O(M) per candidate, minutes for a sweep at 10^6 micro-batches (issue 12).
  const std::int64_t M_all = sc.train.micro_batches(pl);
  const int M = static_cast<int>(steady_state_extendable(sc, false, M_all) ? kSteadyGroupsLong * pl.pp : M_all);
  const auto sched = pipeline_schedule(sc.train.schedule, P, V, M);
  // Activations a chunk pass keeps until its backward, by virtual stage (with the embedding's where it sits).
  std::vector<double> stored_by_vs(static_cast<std::size_t>(P) * V);
  // Backward working set per chunk: only models with several layer kinds need one per chunk (the pre-check runs
  // for every sweep candidate: no allocation for uniform models).
  std::vector<double> working_by_vs(k.uniform() ? 0 : stored_by_vs.size());
  for (int vs = 0, first = 0; vs < P * V; first += k.layers_per_chunk[vs], ++vs) {
    const int last = first + k.layers_per_chunk[vs];
    stored_by_vs[vs] =
        (k.uniform() ? k.layers_per_chunk[vs] * a.stored[0] : a.stored_range(k, first, last)) + (edge_work(vs, P * V, true, true, true).embedding ? a.embed : 0);
    if (!k.uniform()) working_by_vs[vs] = a.working_range(k, first, last);
  }
  std::vector<double> peak(P, 0), act(P, 0), buf(P, 0);
  for (int s = 0; s < P; ++s) {
    double cur = 0, best = 0;
    for (const PipeOp& op : sched[s]) {
      const double stored = stored_by_vs[op.chunk * P + s];
      if (op.kind == PipeOp::Forward) {
        cur += stored;
        best = std::max(best, cur);
      } else {
        if (op.kind != PipeOp::BackwardWeight) {
          const double working = k.uniform() ? a.working.front() : working_by_vs[op.chunk * P + s];
          best = std::max(best, cur + working);
        }
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
