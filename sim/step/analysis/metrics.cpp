// Metrics computed from the executed timeline after the run (never accumulated during it).
#include "sim/step/analysis.hpp"

#include <algorithm>
#include <limits>

namespace parsim {

namespace {

// Length of `a` not covered by any interval of `cover` (both sorted, each internally disjoint).
std::int64_t uncovered(const std::vector<TimeInterval>& a, const std::vector<TimeInterval>& cover) {
  std::int64_t total = 0;
  std::size_t j = 0;
  for (const auto& [s, e] : a) {
    std::int64_t cur = s;
    while (j < cover.size() && cover[j].second <= cur) ++j;
    std::size_t k = j;
    while (k < cover.size() && cover[k].first < e) {
      if (cover[k].first > cur) total += cover[k].first - cur;
      cur = std::max(cur, cover[k].second);
      ++k;
    }
    if (cur < e) total += e - cur;
  }
  return total;
}

// Union of intervals into `out`. Intervals of one in-order stream arrive sorted by start, so the sort is usually
// skipped.
void merged(std::vector<TimeInterval>& v, std::vector<TimeInterval>& out) {
  if (!std::is_sorted(v.begin(), v.end(), [](const TimeInterval& a, const TimeInterval& b) { return a.first < b.first; }))
    std::sort(v.begin(), v.end());
  out.clear();
  for (const auto& x : v) {
    if (x.second <= x.first) continue;
    if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
    else out.push_back(x);
  }
}

std::int64_t length(const std::vector<TimeInterval>& v) {
  std::int64_t t = 0;
  for (const auto& x : v) t += x.second - x.first;
  return t;
}

}  // namespace

void compute_metrics(const Scenario& sc, const StepCosts& /*costs*/, const ExecutedStep& ex, StepReport& rep) {
  const Plan& pl = sc.plan;
  const int P = pl.pp;
  const Lowered& lw = ex.lowered;
  const auto& tl = ex.timeline;
  const auto& g = lw.graph;
  rep.step_time_s = static_cast<double>(tl.makespan) * 1e-9;
  rep.microbatches = lw.microbatches;
  rep.events = tl.events;
  rep.stages.resize(P);

  Scratch& buf = ex.scratch;
  auto& comp = buf.comp;
  auto& pass = buf.pass;
  auto& dp = buf.dp;
  auto& pp = buf.pp;
  for (auto* v : {&comp, &pass, &dp, &pp}) {
    v->resize(P);
    for (auto& x : *v) x.clear();
  }
  std::int64_t win_begin = std::numeric_limits<std::int64_t>::max(), win_end = 0;
  // Per stage: first start and last end of any task (its span) and of its passes (needed under post-validation only).
  const bool post_validation = effective_optimizer_sync(sc.train) == OptimizerSync::PostValidation;
  auto& span = buf.span;
  auto& pass_span = buf.pass_span;
  span.assign(static_cast<std::size_t>(P), {std::numeric_limits<std::int64_t>::max(), 0});
  pass_span.assign(static_cast<std::size_t>(P), {std::numeric_limits<std::int64_t>::max(), 0});
  for (std::size_t t = 0; t < g.num_tasks(); ++t) {
    const auto id = static_cast<engine::TaskId>(t);
    const TaskInfo& ti = lw.info[g.tag(id)];
    const int s = ti.stage;
    const TimeInterval iv{tl.start[id], tl.end[id]};
    StageMetrics& sm = rep.stages[s];
    if (post_validation) {
      // The span starts at the stage's first GPU task: its host's step-begin work (zero_grad, get_batch) runs while
      // the stage still waits for its first input, so it does not lengthen the stage's period; host work after the
      // stage's last GPU task (post-step syncs, logging) does.
      if (ti.kind != TaskKind::HostWork) span[s].first = std::min(span[s].first, iv.first);
      span[s].second = std::max(span[s].second, iv.second);
    }
    switch (ti.kind) {
      case TaskKind::Forward:
      case TaskKind::Backward:
      case TaskKind::BackwardInput:
      case TaskKind::BackwardWeight: {
        win_begin = std::min(win_begin, iv.first);
        win_end = std::max(win_end, iv.second);
        if (post_validation) {
          pass_span[s].first = std::min(pass_span[s].first, iv.first);
          pass_span[s].second = std::max(pass_span[s].second, iv.second);
        }
        pass[s].push_back(iv);
        // The task's real duration may be stretched by SM contention; its TP/CP parts are not.
        const double actual = static_cast<double>(iv.second - iv.first) * 1e-9;
        const PassCost& pc = lw.cost(ti);
        sm.compute_s += std::max(0.0, actual - pc.tp_exposed_s - pc.cp_exposed_s - pc.ep_exposed_s);
        sm.comm_by_kind_s[Axis::tp] += pc.tp_s;
        sm.exposed_by_kind_s[Axis::tp] += pc.tp_exposed_s;
        sm.comm_by_kind_s[Axis::cp] += pc.cp_s;
        sm.exposed_by_kind_s[Axis::cp] += pc.cp_exposed_s;
        sm.comm_by_kind_s[Axis::ep] += pc.ep_s;
        sm.exposed_by_kind_s[Axis::ep] += pc.ep_exposed_s;
        break;
      }
      case TaskKind::Optimizer:
        comp[s].push_back(iv);  // (the compute stream's intervals besides the passes)
        sm.compute_s += static_cast<double>(iv.second - iv.first) * 1e-9;
        break;
      case TaskKind::PipeRecv: pp[s].push_back(iv); break;
      case TaskKind::GradReduce:
      case TaskKind::ParamGather: dp[s].push_back(iv); break;
      case TaskKind::HostWork: break;  // host time: it shows as GPU idle where it is exposed
    }
  }

  // The step's end. Barrier: every stage waits for the global checks, the step is the timeline's makespan and the
  // pipeline window runs from the first pass to the last over all stages. Post-validation (Qi et al. 2024 §4): no
  // stage waits for another after its own optimizer step, so back-to-back steps overlap: step k + 1 on stage s can
  // start as soon as stage s is done with step k, and every dependency between stages repeats one step later. The
  // period is then the longest stage span (first task start to last task end) — the step time —, and the window of
  // each stage's bubble is the longest stage's pass span, placed at that stage's own first pass.
  double window = win_end > win_begin ? static_cast<double>(win_end - win_begin) : 0.0;
  if (post_validation) {
    std::int64_t period = 0, pass_period = 0;
    for (int s = 0; s < P; ++s) {
      period = std::max(period, span[s].second - span[s].first);
      pass_period = std::max(pass_period, pass_span[s].second - pass_span[s].first);
    }
    rep.step_time_s = static_cast<double>(period) * 1e-9;
    window = static_cast<double>(pass_period);
  }
  double bubble_sum = 0;
  double best_busy = -1;
  for (int s = 0; s < P; ++s) {
    StageMetrics& sm = rep.stages[s];
    auto& c = buf.tmp1;
    auto& d = buf.tmp2;
    auto& p = buf.tmp3;
    // The compute stream's busy time: its passes and its other tasks (the optimizer step). Both come from one in-order
    // stream, so the union of the passes' union with the rest is the union of all of them.
    auto& ps = buf.tmp6;
    merged(pass[s], ps);
    if (comp[s].empty()) {
      c.assign(ps.begin(), ps.end());
    } else {
      auto& all = buf.tmp4;
      all.resize(ps.size() + comp[s].size());
      std::merge(ps.begin(), ps.end(), comp[s].begin(), comp[s].end(), all.begin());
      merged(all, c);
    }
    merged(dp[s], d);
    merged(pp[s], p);
    // Exposed = communication while the compute stream is idle; where PP and DP overlap, DP is charged first so
    // that the kinds add up to the total.
    auto& cd = buf.tmp4;
    cd.resize(c.size() + d.size());
    std::merge(c.begin(), c.end(), d.begin(), d.end(), cd.begin());
    auto& cd_union = buf.tmp5;
    merged(cd, cd_union);
    sm.comm_by_kind_s[Axis::dp] = static_cast<double>(length(d)) * 1e-9;
    sm.comm_by_kind_s[Axis::pp] = static_cast<double>(length(p)) * 1e-9;
    sm.exposed_by_kind_s[Axis::dp] = static_cast<double>(uncovered(d, c)) * 1e-9;
    sm.exposed_by_kind_s[Axis::pp] = static_cast<double>(uncovered(p, cd_union)) * 1e-9;
    sm.comm_s = sm.comm_by_kind_s.sum();
    sm.exposed_comm_s = sm.exposed_by_kind_s.sum();
    sm.idle_s = std::max(0.0, rep.step_time_s - sm.compute_s - sm.exposed_comm_s);
    // Bubble (contract): idle time of the compute stream inside the pipeline window, over the window. A pass's
    // in-layer TP/CP communication is part of the pass (the stage is not idle while it waits for it).
    if (P > 1 && window > 0) {
      std::int64_t busy = 0;
      if (post_validation)
        for (const auto& x : ps) busy += x.second - x.first;
      else
        for (const auto& x : ps) busy += std::min(x.second, win_end) - std::max(x.first, win_begin);
      sm.window_idle_s = (window - static_cast<double>(busy)) * 1e-9;
      bubble_sum += (window - static_cast<double>(busy)) / window;
    }
    if (sm.compute_s + sm.exposed_comm_s > best_busy) {
      best_busy = sm.compute_s + sm.exposed_comm_s;
      rep.critical_stage = s;
    }
  }
  rep.bubble_fraction = P > 1 ? bubble_sum / P : 0.0;
  rep.window_s = window * 1e-9;
  rep.simulated_microbatches = lw.microbatches;
  const StageMetrics& cs = rep.stages[rep.critical_stage];
  rep.exposed_comm_s = cs.exposed_comm_s;
  rep.exposed_by_kind_s = cs.exposed_by_kind_s;
  finish_throughput(sc, rep);
}

void finish_throughput(const Scenario& sc, StepReport& rep) {
  const Plan& pl = sc.plan;
  const double seqs = static_cast<double>(sc.train.gbs);
  // Causal attention counted as causal (Megatron-Core ≥ v0.12, commit 8873b55d6a): a 128k-token step is not credited
  // with the masked half of its s² attention. The full-s² figure (Megatron ≤ core v0.11, PaLM) is kept beside it.
  rep.model_flops_per_step = model_flops(sc.model, sc.train.gbs, sc.train.seq, AttentionCount::Causal);
  rep.model_flops_full_attention_per_step = model_flops(sc.model, sc.train.gbs, sc.train.seq);
  rep.hardware_flops_per_step =
      hardware_flops(sc.model, sc.train.gbs, sc.train.seq, sc.train.recompute, AttentionCount::Causal,
                     sc.train.recompute_modules);
  const double peak = sc.hw.gpu.peak_flops(sc.train.precision) * pl.world();
  if (rep.step_time_s > 0) {
    rep.mfu = rep.model_flops_per_step / (rep.step_time_s * peak);
    rep.mfu_full_attention = rep.model_flops_full_attention_per_step / (rep.step_time_s * peak);
    rep.hfu = rep.hardware_flops_per_step / (rep.step_time_s * peak);
    rep.tflops_per_gpu = rep.model_flops_per_step / rep.step_time_s / pl.world() * 1e-12;
    rep.tokens_per_s = seqs * static_cast<double>(sc.train.seq) / rep.step_time_s;
  }
}

}  // namespace parsim
