// parsim plans/ — pipeline schedules as data: for each stage, the order of its forward and backward passes.
//
// GPipe (Huang et al. 2019): all forwards, then all backwards, micro-batches in order (fill–drain, FIFO).
// 1F1B (PipeDream-Flush, Narayanan et al. 2021 §2.2; Megatron-Core forward_backward_pipelining_without_interleaving):
//   stage i runs min(p−i−1, m) warm-up forwards, then alternates one forward / one backward, then drains backwards.
// Interleaved 1F1B (Narayanan et al. 2021 §2.2.1; Megatron-Core forward_backward_pipelining_with_interleaving):
//   each stage holds v model chunks; the v·m chunk-passes are ordered by Megatron-Core's schedule table — groups of
//   G = p micro-batches (default --microbatch-group-size-per-virtual-pipeline-stage), within a group chunk 0 for the
//   G micro-batches, then chunk 1, …; the last group takes the remaining micro-batches. Virtual micro-batch k runs
//   forward on chunk table[k].chunk and backward on chunk v−1−table[k].chunk, both for micro-batch table[k].mb.
//   Warm-up: (p−i−1)·2 + (v−1)·G forward chunk-passes (capped at v·m: then all forwards run first),
//   then 1F1B pairs (forward k+warm-up, backward k), then the remaining backwards (get_pp_rank_microbatches).
// Zero-bubble schedules (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): the backward is split into B (input
//   gradient, on the pipeline's critical path) and W (weight gradient, needed only by the optimizer step), and W is
//   placed where the stage would otherwise idle.
//   ZB-H1 (§2.1, Figure 3 top): 1F1B's warm-up and order of F and B; stage i delays its W's by i micro-batches, so that
//     every stage keeps at most p micro-batches in flight (F done, W not yet) — 1F1B's peak, that of its first stage —
//     and the i delayed W's fill the cool-down. Bubble (p−1)(T_F + T_B − T_W), a third of 1F1B's (p−1)(T_F+T_B+T_W)
//     when the three are equal (derivation in tests/plans/test_schedule.cpp).
//   ZB-H2 (§2.2, Figure 3 bottom): up to 2p − 1 micro-batches in flight on every stage; extra warm-up forwards fill the
//     wait for the first B and W's are postponed to the tail, turning the trapezoid into a parallelogram: with the
//     optimizer's post-validation (§4) back-to-back steps overlap and the bubble is zero for equal pass times. The
//     order is the paper's construction played out on unit-time passes (every pass 1, communication free): each
//     stage, whenever idle, runs a ready B, else a ready F while fewer than 2p − 1 micro-batches are in flight, else
//     its oldest pending W.
//   ZB-V (§6, the arXiv version's "ZB-V" / Figure 8): two chunks per stage in a V (stage s holds virtual stages s and
//     2p−1−s); warm-up 2(p−s)−1 chunk-0 forwards, s pairs (F chunk 1, F chunk 0), p−s triples (F, B, W of chunk 1),
//     then (F, B, W) of chunk 0 and of chunk 1 in turn, and a cool-down of B's whose W's fill the tail. Peak 2p chunk
//     activations = 1F1B's p stage activations; zero bubble for equal pass times with post-validation once m ≥ 2p−1.
// DualPipe (DeepSeek-V3 technical report §3.2.1, Figure 5; github.com/deepseek-ai/DualPipe dualpipe.py): even pp, the
//   stages pair up as mirror images (rank s holds virtual stage s and a copy of virtual stage pp−1−s), micro-batches
//   enter from both ends (m/2 each way), and in the steady state every stage runs one forward of one direction
//   overlapped with the backward of the other (F&B pairs). Per rank, with H = pp/2 pairs, h = min(s, pp−1−s) and
//   N = m/2, phase 0 = the direction whose micro-batches reach the rank first: (1) 2(H−h−1) F0; (2) h+1 × (F0, F1);
//   (3) H−h−1 × (B1 split, W, F1); (4) N−2H+h+1 × (F0&B1, F1&B0) — the middle ranks' first F0/B1 not overlapped; (5)
//   H−h−1 × (B1, F1&B0); (6) h+1 × (B1, B0), the second half of these split; (7) H−h−1 × (W, B0 split); (8) the
//   remaining W's, oldest first. Split backwards ("zero bubble" in the repository) are B now and W where the
//   schedule pops it; the others are whole backwards.
// DualPipeV (the DualPipe repository's dualpipev.py, Sea AI Lab's "cut-in-half" of DualPipe): the same eight steps on
//   a V-shape placement (two chunks per stage, micro-batches from stage 0 only), with H = pp, h = s, N = m.
#include "plans/schedule.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <deque>

namespace parsim {

namespace {

struct TableEntry {
  int mb, chunk;
};

// Megatron-Core get_schedule_table(num_microbatches, num_model_chunks, microbatch_group_size_per_vp_stage).
std::vector<TableEntry> schedule_table(int m, int v, int group) {
  std::vector<TableEntry> t;
  t.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
  for (int lo = 0; lo < m; lo += group) {
    const int hi = lo + group >= m ? m : lo + group;  // the last group takes the rest
    for (int c = 0; c < v; ++c)
      for (int mb = lo; mb < hi; ++mb) t.push_back({mb, c});
  }
  return t;
}

// GPipe and 1F1B: warm-up forwards (all of them for GPipe, p−i−1 for 1F1B), then one forward / one backward pairs,
// then the remaining backwards.
ScheduleOrder one_chunk_order(int p, int m, bool gpipe) {
  ScheduleOrder ops(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    auto& o = ops[static_cast<std::size_t>(i)];
    o.reserve(2 * static_cast<std::size_t>(m));
    const int warmup = gpipe ? m : std::min(p - i - 1, m);
    for (int k = 0; k < warmup; ++k) o.push_back({PipeOp::Forward, k, 0});
    for (int k = 0; k < m - warmup; ++k) {  // steady state: forward k+warmup, backward k
      o.push_back({PipeOp::Forward, k + warmup, 0});
      o.push_back({PipeOp::Backward, k, 0});
    }
    for (int k = m - warmup; k < m; ++k) o.push_back({PipeOp::Backward, k, 0});
  }
  return ops;
}

ScheduleOrder gpipe_order(int p, int, int m) { return one_chunk_order(p, m, true); }
ScheduleOrder one_f_one_b_order(int p, int, int m) { return one_chunk_order(p, m, false); }

ScheduleOrder interleaved_order(int p, int v, int m) {
  ScheduleOrder ops(static_cast<std::size_t>(p));
  const int group = p;  // Megatron-Core default G = p
  const auto table = schedule_table(m, v, group);
  const int total = m * v;
  for (int i = 0; i < p; ++i) {
    auto& o = ops[static_cast<std::size_t>(i)];
    o.reserve(2 * static_cast<std::size_t>(total));
    const int warmup = std::min((p - i - 1) * 2 + (v - 1) * group, total);
    auto fwd = [&](int k) {
      const auto& e = table[static_cast<std::size_t>(k)];
      o.push_back({PipeOp::Forward, e.mb, e.chunk});
    };
    auto bwd = [&](int k) {
      const auto& e = table[static_cast<std::size_t>(k)];
      o.push_back({PipeOp::Backward, e.mb, v - 1 - e.chunk});
    };
    for (int k = 0; k < warmup; ++k) fwd(k);
    for (int k = 0; k < total - warmup; ++k) {
      fwd(k + warmup);
      bwd(k);
    }
    for (int k = total - warmup; k < total; ++k) bwd(k);
  }
  return ops;
}

// ZB-H1: 1F1B's F/B order; stage i's W of micro-batch k follows its B of micro-batch k + i (W's lag by i), the
// remaining i W's close the stage's order. In flight (F done, W not): the 1F1B warm-up p − i − 1, the steady F, and
// i delayed W's = p on every stage.
ScheduleOrder zb_h1_order(int p, int, int m) {
  ScheduleOrder ops(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    auto& o = ops[static_cast<std::size_t>(i)];
    o.reserve(3 * static_cast<std::size_t>(m));
    const int warmup = std::min(p - i - 1, m);
    const int lag = std::min(i, m);
    for (int k = 0; k < warmup; ++k) o.push_back({PipeOp::Forward, k, 0});
    int w = 0;
    for (int k = 0; k < m; ++k) {
      if (k + warmup < m) o.push_back({PipeOp::Forward, k + warmup, 0});
      o.push_back({PipeOp::BackwardInput, k, 0});
      if (k >= lag) o.push_back({PipeOp::BackwardWeight, w++, 0});
    }
    while (w < m) o.push_back({PipeOp::BackwardWeight, w++, 0});
  }
  return ops;
}

// ZB-H2: the paper's rule played out on unit-time passes with free communication (see the header). Time advances in
// whole units; at each unit every idle stage picks B (its next micro-batch's input gradient has arrived), else F (its
// input has arrived and fewer than 2p − 1 micro-batches are in flight), else its oldest pending W. Deterministic; the
// result is a fixed order, timed later with the real pass costs.
ScheduleOrder zb_h2_order(int p, int, int m) {
  const int limit = 2 * p - 1;
  constexpr int kNever = 1 << 30;
  // f_end[s][k], b_end[s][k]: unit time at which F / B of micro-batch k ends on stage s.
  std::vector<std::vector<int>> f_end(static_cast<std::size_t>(p), std::vector<int>(static_cast<std::size_t>(m), kNever));
  auto b_end = f_end;
  std::vector<int> nf(static_cast<std::size_t>(p), 0), nb(static_cast<std::size_t>(p), 0), nw(static_cast<std::size_t>(p), 0);
  ScheduleOrder ops(static_cast<std::size_t>(p));
  for (auto& o : ops) o.reserve(3 * static_cast<std::size_t>(m));
  std::size_t done = 0;
  const std::size_t total = 3 * static_cast<std::size_t>(p) * static_cast<std::size_t>(m);
  for (int t = 0; done < total; ++t) {
    for (int s = 0; s < p; ++s) {
      const auto su = static_cast<std::size_t>(s);
      auto& o = ops[su];
      const int b = nb[su], f = nf[su];
      // B of micro-batch b: the last stage needs its own F, the others the next stage's B.
      const bool b_ready = b < f && (s == p - 1 ? f_end[su][static_cast<std::size_t>(b)] : b_end[su + 1][static_cast<std::size_t>(b)]) <= t;
      const bool f_ready = f < m && f - nw[su] < limit && (s == 0 || f_end[su - 1][static_cast<std::size_t>(f)] <= t);
      if (b_ready) {
        o.push_back({PipeOp::BackwardInput, b, 0});
        b_end[su][static_cast<std::size_t>(b)] = t + 1;
        ++nb[su];
      } else if (f_ready) {
        o.push_back({PipeOp::Forward, f, 0});
        f_end[su][static_cast<std::size_t>(f)] = t + 1;
        ++nf[su];
      } else if (nw[su] < nb[su]) {
        o.push_back({PipeOp::BackwardWeight, nw[su]++, 0});
      } else {
        continue;  // idle this unit
      }
      ++done;
    }
  }
  return ops;
}

// ZB-V (Qi et al. 2024 §6): see the header. Built for n = max(m, 2p − 1) micro-batches and filtered to the m that
// exist, which keeps the pattern for small m (PyTorch's ScheduleZBVZeroBubble does the same).
ScheduleOrder zb_v_order(int p, int, int m) {
  const int n = std::max(m, 2 * p - 1);
  ScheduleOrder ops(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    auto& o = ops[static_cast<std::size_t>(r)];
    o.reserve(6 * static_cast<std::size_t>(m));
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    auto add = [&](PipeOp::Kind k, int mb, int chunk) {
      if (mb < m) o.push_back({k, mb, chunk});
    };
    for (int k = 0; k < 2 * (p - r) - 1; ++k) add(PipeOp::Forward, f0++, 0);
    for (int k = 0; k < r; ++k) {
      add(PipeOp::Forward, f1++, 1);
      add(PipeOp::Forward, f0++, 0);
    }
    for (int k = 0; k < p - r; ++k) {
      add(PipeOp::Forward, f1++, 1);
      add(PipeOp::BackwardInput, b1, 1);
      add(PipeOp::BackwardWeight, b1++, 1);
    }
    while (f1 < f0 || f0 < n) {
      if (f0 < n) add(PipeOp::Forward, f0++, 0);
      add(PipeOp::BackwardInput, b0, 0);
      add(PipeOp::BackwardWeight, b0++, 0);
      add(PipeOp::Forward, f1++, 1);
      add(PipeOp::BackwardInput, b1, 1);
      add(PipeOp::BackwardWeight, b1++, 1);
    }
    int w0 = b0, w1 = b1;
    for (int k = 0; k < r; ++k) {
      add(PipeOp::BackwardInput, b0++, 0);
      add(PipeOp::BackwardInput, b1++, 1);
    }
    for (int k = 0; k < p - r; ++k) {
      add(PipeOp::BackwardInput, b0++, 0);
      add(PipeOp::BackwardWeight, w0++, 0);
    }
    while (w1 < b1) add(PipeOp::BackwardWeight, w1++, 1);
    while (w0 < b0) add(PipeOp::BackwardWeight, w0++, 0);
  }
  return ops;
}

// One rank's DualPipe program (see the header) over two phases; `chunk_of_phase` maps a phase to the rank's chunk and
// `first_mb` gives each chunk's first micro-batch (its direction's micro-batches are consecutive).
void dualpipe_rank(int H, int h, int N, const int chunk_of_phase[2], const int first_mb[2], std::vector<PipeOp>& o) {
  int nf[2] = {0, 0}, nb[2] = {0, 0};
  std::deque<std::pair<int, int>> pending_w;  // (micro-batch, chunk) of split backwards, FIFO
  auto mb_of = [&](int phase, int k) { return first_mb[chunk_of_phase[phase]] + k; };
  auto F = [&](int phase, bool overlapped) {
    o.push_back({PipeOp::Forward, mb_of(phase, nf[phase]++), chunk_of_phase[phase], overlapped});
  };
  auto B = [&](int phase, bool split) {
    const int mb = mb_of(phase, nb[phase]++), c = chunk_of_phase[phase];
    o.push_back({split ? PipeOp::BackwardInput : PipeOp::Backward, mb, c});
    if (split) pending_w.emplace_back(mb, c);
  };
  auto W = [&] {
    const auto [mb, c] = pending_w.front();
    pending_w.pop_front();
    o.push_back({PipeOp::BackwardWeight, mb, c});
  };
  for (int k = 0; k < 2 * (H - h - 1); ++k) F(0, false);              // (1)
  for (int k = 0; k < h + 1; ++k) F(0, false), F(1, false);          // (2)
  for (int k = 0; k < H - h - 1; ++k) B(1, true), W(), F(1, false);  // (3)
  for (int k = 0; k < N - 2 * H + h + 1; ++k) {                      // (4)
    if (k == 0 && h == H - 1) F(0, false), B(1, false);  // the middle ranks: not overlapped, to cut the bubble
    else F(0, true), B(1, false);
    F(1, true), B(0, false);
  }
  for (int k = 0; k < H - h - 1; ++k) B(1, false), F(1, true), B(0, false);  // (5)
  bool split = false;                                                        // (6)
  for (int k = 0; k < h + 1; ++k) {
    if (k == (h + 1) / 2 && h % 2 == 1) split = true;
    B(1, split);
    if (k == (h + 1) / 2 && h % 2 == 0) split = true;
    B(0, split);
  }
  for (int k = 0; k < H - h - 1; ++k) W(), B(0, true);  // (7)
  while (!pending_w.empty()) W();                       // (8)
}

ScheduleOrder dualpipe_order(int p, int, int m) {
  ScheduleOrder ops(static_cast<std::size_t>(p));
  const int H = p / 2, N = m / 2;
  const int first_mb[2] = {0, N};  // direction 0: micro-batches 0..N−1 on chunk 0; direction 1: N..m−1 on chunk 1
  for (int r = 0; r < p; ++r) {
    const bool second_half = r >= H;  // its phase 0 (the nearer source) is direction 1
    const int chunk_of_phase[2] = {second_half ? 1 : 0, second_half ? 0 : 1};
    ops[static_cast<std::size_t>(r)].reserve(4 * static_cast<std::size_t>(N));
    dualpipe_rank(H, std::min(r, p - 1 - r), N, chunk_of_phase, first_mb, ops[static_cast<std::size_t>(r)]);
  }
  return ops;
}

ScheduleOrder dualpipe_v_order(int p, int, int m) {
  ScheduleOrder ops(static_cast<std::size_t>(p));
  const int chunk_of_phase[2] = {0, 1}, first_mb[2] = {0, 0};
  for (int r = 0; r < p; ++r) {
    ops[static_cast<std::size_t>(r)].reserve(8 * static_cast<std::size_t>(m));
    dualpipe_rank(p, r, m, chunk_of_phase, first_mb, ops[static_cast<std::size_t>(r)]);
  }
  return ops;
}

const std::vector<ScheduleTraits>& table() {
  using P = Placement;
  using O = OptimizerSync;
  // Sweep enumeration order: 1F1B before GPipe (plans/space.cpp takes the first allowed one when pp = 1). Columns:
  // vpp rule, placement, parameter copies, m % pp, m ≥ k·pp, even pp, even m, splits backward, F&B pairs, optimizer
  // sync, steady-state groups, in the default sweep, generator.
  static const std::vector<ScheduleTraits> t = {
      {Schedule::OneFOneB, "1f1b", {"pipedream-flush"},
       "PipeDream-Flush, Narayanan et al. 2021 §2.2; Megatron-Core forward_backward_pipelining_without_interleaving",
       VppRule::One, P::Looped, 1, false, 0, false, false, false, false, O::Barrier, 2, true, one_f_one_b_order},
      {Schedule::GPipe, "gpipe", {}, "Huang et al. 2019", VppRule::One, P::Looped, 1, false, 0, false, false, false,
       false, O::Barrier, 0, false, gpipe_order},
      {Schedule::Interleaved, "interleaved", {"interleaved-1f1b", "interleaved1f1b"},
       "Narayanan et al. 2021 §2.2.1; Megatron-Core forward_backward_pipelining_with_interleaving", VppRule::AboveOne,
       P::Looped, 1, true, 0, false, false, false, false, O::Barrier, 2, true, interleaved_order},
      {Schedule::ZBH1, "zb-h1", {"zbh1", "zb1p"}, "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, §2.1 Figure 3",
       VppRule::One, P::Looped, 1, false, 0, false, false, true, false, O::PostValidation, 4, false, zb_h1_order},
      {Schedule::ZBH2, "zb-h2", {"zbh2", "zb2p"}, "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, §2.2 Figure 3",
       VppRule::One, P::Looped, 1, false, 0, false, false, true, false, O::PostValidation, 2, false, zb_h2_order},
      {Schedule::ZBV, "zb-v", {"zbv"}, "Qi et al., Zero Bubble Pipeline Parallelism (arXiv 2401.10241v2) §6, ZB-V",
       VppRule::Two, P::VShape, 1, false, 0, false, false, true, false, O::PostValidation, 0, false, zb_v_order},
      {Schedule::DualPipe, "dualpipe", {},
       "DeepSeek-V3 technical report §3.2.1 Figure 5 and Table 2; github.com/deepseek-ai/DualPipe dualpipe.py",
       VppRule::One, P::Bidirectional, 2, false, 2, true, true, true, true, O::Barrier, 3, false, dualpipe_order},
      {Schedule::DualPipeV, "dualpipev", {"dualpipe-v"},
       "github.com/deepseek-ai/DualPipe dualpipev.py (Sea AI Lab's cut-in-half of DualPipe)", VppRule::Two,
       P::VShape, 1, false, 2, false, false, true, true, O::Barrier, 3, false, dualpipe_v_order},
  };
  return t;
}

}  // namespace

const std::vector<ScheduleTraits>& all_schedule_traits() { return table(); }

const ScheduleTraits& schedule_traits(Schedule s) {
  for (const ScheduleTraits& t : table())
    if (t.schedule == s) return t;
  throw InputError("the pipeline schedule is 'auto' here: resolve it first (resolve_training)");
}

PipelinePlacement pipeline_placement(Schedule s, int pp, int vpp) {
  const ScheduleTraits& t = schedule_traits(s);
  PipelinePlacement p;
  p.kind = t.placement;
  p.pp = pp;
  p.chunks = t.placement == Placement::Bidirectional ? 2 : vpp;
  return p;
}

bool vpp_fits(const ScheduleTraits& t, int vpp) {
  switch (t.vpp) {
    case VppRule::One: return vpp == 1;
    case VppRule::AboveOne: return vpp > 1;
    case VppRule::Two: return vpp == 2;
  }
  return false;
}

std::optional<std::string> schedule_precondition_error(const ScheduleTraits& t, int pp, int vpp, std::int64_t m) {
  // Cheap checks first (the sweep asks for every candidate); the message only when one fails.
  const bool vpp_ok = vpp_fits(t, vpp);
  const bool pp_ok = t.vpp == VppRule::One || pp >= 2;
  const bool even_pp_ok = !t.even_pp || pp % 2 == 0;
  const bool multiple_ok = !t.microbatches_multiple_of_pp || m % pp == 0;
  const bool min_ok = t.min_microbatches_per_pp <= 0 || m >= std::int64_t{t.min_microbatches_per_pp} * pp;
  const bool even_m_ok = !t.even_microbatches || m % 2 == 0;
  if (vpp_ok && pp_ok && even_pp_ok && multiple_ok && min_ok && even_m_ok) return std::nullopt;
  const std::string name = t.name;
  const std::string P = std::to_string(pp), M = std::to_string(m), V = std::to_string(vpp);
  if (!vpp_ok) {
    switch (t.vpp) {
      case VppRule::One:
        return "vpp" + V + " runs a schedule with virtual stages (interleaved, zb-v, dualpipev), not " + name +
               " (drop vpp from the plan or choose one of those schedules)";
      case VppRule::AboveOne:
        return "the " + name + " schedule needs vpp > 1 in the plan (e.g. pp" + P + "vpp2), got vpp" + V;
      case VppRule::Two:
        return "the " + name + " schedule places two model chunks per stage in a V: it needs vpp2 in the plan (e.g. pp" +
               P + "vpp2), got vpp" + V;
    }
  }
  if (!pp_ok) return "the " + name + " schedule needs pipeline parallelism (pp > 1), got pp" + P;
  if (!even_pp_ok) return "the " + name + " schedule pairs mirrored stages: it needs an even pp, got pp" + P;
  if (!multiple_ok)
    return "the " + name + " schedule (vpp" + V + ") needs the micro-batch count gbs / (dp × mbs) = " + M +
           " to be a multiple of pp" + P + " (Megatron-Core)";
  if (!min_ok)
    return "the " + name + " schedule needs at least " + std::to_string(t.min_microbatches_per_pp) + " × pp = " +
           std::to_string(t.min_microbatches_per_pp * pp) + " micro-batches (gbs / (dp × mbs)), got " + M;
  return "the " + name + " schedule feeds half the micro-batches from each end: it needs an even micro-batch count " +
         "gbs / (dp × mbs), got " + M;
}

OptimizerSync effective_optimizer_sync(const TrainingConfig& t) {
  if (t.optimizer_sync != OptimizerSync::Auto) return t.optimizer_sync;
  return schedule_traits(t.schedule).optimizer_sync;
}

std::string to_string(Schedule s) {
  if (s == Schedule::Auto) return "auto";
  return schedule_traits(s).name;
}

Schedule parse_schedule(const std::string& s) {
  const std::string l = to_lower(trim(s));
  if (l == "auto") return Schedule::Auto;
  std::string names = "auto";
  for (const ScheduleTraits& t : table()) {
    if (l == t.name) return t.schedule;
    for (const std::string& a : t.aliases)
      if (l == a) return t.schedule;
    names += ", ";
    names += t.name;
  }
  throw InputError("--schedule '" + s + "' is not valid (choose " + names + ")");
}

std::string to_string(OptimizerSync s) {
  switch (s) {
    case OptimizerSync::Auto: return "auto";
    case OptimizerSync::Barrier: return "barrier";
    case OptimizerSync::PostValidation: return "post-validation";
  }
  return "auto";
}

OptimizerSync parse_optimizer_sync(const std::string& s) {
  const std::string l = to_lower(trim(s));
  if (l == "auto") return OptimizerSync::Auto;
  if (l == "barrier") return OptimizerSync::Barrier;
  if (l == "post-validation" || l == "postvalidation") return OptimizerSync::PostValidation;
  throw InputError("--optimizer-sync '" + s + "' is not valid (choose auto, barrier, post-validation)");
}

ScheduleOrder pipeline_schedule(Schedule s, int pp, int vpp, int microbatches) {
  const ScheduleTraits& t = schedule_traits(s);
  const std::string what = std::string(t.name) + " schedule with pp" + std::to_string(pp) + ", vpp" +
                           std::to_string(vpp) + ", " + std::to_string(microbatches) + " micro-batches";
  require(pp >= 1 && vpp >= 1 && microbatches >= 1, what + ": pp, vpp and micro-batches must be positive");
  if (auto e = schedule_precondition_error(t, pp, vpp, microbatches)) throw InputError(what + ": " + *e);
  return t.order(pp, vpp, microbatches);
}

const ScheduleOrder& ScheduleCache::get(Schedule s, int pp, int vpp, int microbatches) {
  for (const Entry& e : entries_)
    if (!e.order.empty() && e.schedule == s && e.pp == pp && e.vpp == vpp && e.microbatches == microbatches)
      return e.order;
  Entry& e = entries_[next_];
  next_ = (next_ + 1) % entries_.size();
  e.order.clear();  // (a throwing generator leaves the entry empty, i.e. unused)
  e.order = pipeline_schedule(s, pp, vpp, microbatches);
  e.schedule = s;
  e.pp = pp;
  e.vpp = vpp;
  e.microbatches = microbatches;
  return e.order;
}

}  // namespace parsim
