// Pipeline schedules as data — the contract every schedule must keep, run over many (p, v, m), plus a small
// dependency simulation that replays the order with unit-time passes and free communication.
#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace parsim;

namespace {

// Contract: on every stage each (micro-batch, chunk) that the chunk serves (PipelinePlacement::serves: every one,
// except under DualPipe's two directions) runs exactly once forward and once backward — one combined Backward, or one B
// (input gradient) and one W (weight gradient) — forward before B before W. `split`: every backward must be split
// (1) or none (0); -1 allows either per (micro-batch, chunk). A forward marked overlapped_with_next is followed by a
// backward (combined or B) of another micro-batch: an F&B pair.
void check_contract(const ScheduleOrder& ops, const PipelinePlacement& pl, int m, int split) {
  const int p = pl.pp, v = pl.chunks;
  REQUIRE(ops.size() == static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    CAPTURE(s);
    const auto& o = ops[static_cast<std::size_t>(s)];
    std::map<std::pair<int, int>, int> at[4];  // by PipeOp::Kind
    for (int i = 0; i < static_cast<int>(o.size()); ++i) {
      const auto& op = o[static_cast<std::size_t>(i)];
      REQUIRE(op.microbatch >= 0);
      REQUIRE(op.microbatch < m);
      REQUIRE(op.chunk >= 0);
      REQUIRE(op.chunk < v);
      CHECK(pl.serves(op.chunk, op.microbatch, m));
      auto& slot = at[op.kind];
      CHECK(slot.count({op.microbatch, op.chunk}) == 0);  // once
      slot[{op.microbatch, op.chunk}] = i;
      if (op.overlapped_with_next) {
        CHECK(op.kind == PipeOp::Forward);
        REQUIRE(i + 1 < static_cast<int>(o.size()));
        const auto& next = o[static_cast<std::size_t>(i + 1)];
        CHECK((next.kind == PipeOp::Backward || next.kind == PipeOp::BackwardInput));
        CHECK(next.microbatch != op.microbatch);
      }
    }
    std::size_t served = 0;
    for (int c = 0; c < v; ++c)
      for (int mb = 0; mb < m; ++mb) served += pl.serves(c, mb, m) ? 1 : 0;
    CHECK(at[PipeOp::Forward].size() == served);
    CHECK(at[PipeOp::Backward].size() + at[PipeOp::BackwardInput].size() == served);
    CHECK(at[PipeOp::BackwardInput].size() == at[PipeOp::BackwardWeight].size());
    if (split == 0) CHECK(at[PipeOp::BackwardInput].empty());
    if (split == 1) CHECK(at[PipeOp::Backward].empty());
    for (const auto& [key, f] : at[PipeOp::Forward]) {
      if (at[PipeOp::Backward].count(key)) {
        CHECK(f < at[PipeOp::Backward][key]);  // forward before backward
        CHECK(at[PipeOp::BackwardInput].count(key) == 0);
      } else {
        REQUIRE(at[PipeOp::BackwardInput].count(key) == 1);
        REQUIRE(at[PipeOp::BackwardWeight].count(key) == 1);
        CHECK(f < at[PipeOp::BackwardInput][key]);                                  // F before B
        CHECK(at[PipeOp::BackwardInput][key] < at[PipeOp::BackwardWeight][key]);  // B before W
      }
    }
  }
}
// The looped placement of p stages with v chunks (GPipe, 1F1B, interleaved).
void check_contract(const ScheduleOrder& ops, int p, int v, int m, bool split = false) {
  PipelinePlacement pl;
  pl.pp = p;
  pl.chunks = v;
  check_contract(ops, pl, m, split ? 1 : 0);
}

// Pass durations of the replay: F, B (input gradient) and W (weight gradient); a combined backward takes B + W.
struct Durations {
  double f = 1, b = 1, w = 1;
};

struct SimResult {
  bool deadlock = false;
  double window = 0;      // first start (0) to last end, over all stages
  double bubble = 0;      // mean over stages of idle / window (the contract's definition)
  double period = 0;      // longest stage span, first start to last end: the step under post-validation
  std::vector<double> busy;         // per stage
  std::vector<int> peak_in_flight;  // per stage: most chunk-passes forwarded but not yet done with their backward
                                    // (combined backward or W: what holds activations)
};

// Each stage runs its ops in order, one at a time. F(mb) on a chunk needs F(mb) on the previous virtual stage of the
// micro-batch's path (PipelinePlacement::locate); a backward (combined, or its B half) on the last virtual stage needs
// its own F, elsewhere the next virtual stage's input gradient; W needs its own B. The first op of an F&B pair also
// waits for its partner's input (the pair starts together). Communication is free.
SimResult simulate(const ScheduleOrder& ops, const PipelinePlacement& pl, int m, Durations d) {
  const int p = pl.pp, V = pl.virtual_stages();
  const auto key = [&](int s, int c, int mb) {
    return (static_cast<std::size_t>(s) * static_cast<std::size_t>(pl.chunks) + static_cast<std::size_t>(c)) *
               static_cast<std::size_t>(m) + static_cast<std::size_t>(mb);
  };
  const std::size_t n = static_cast<std::size_t>(p) * static_cast<std::size_t>(pl.chunks) * static_cast<std::size_t>(m);
  std::vector<double> fend(n, -1), bend(n, -1);
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free_at(static_cast<std::size_t>(p), 0), first(static_cast<std::size_t>(p), -1);
  std::vector<int> in_flight(static_cast<std::size_t>(p), 0);
  SimResult r;
  r.busy.assign(static_cast<std::size_t>(p), 0);
  r.peak_in_flight.assign(static_cast<std::size_t>(p), 0);
  // When the input of `op` on stage s is ready (−1: not yet produced).
  auto ready_of = [&](int s, const PipeOp& op) -> double {
    const int vs = pl.vstage(s, op.chunk), dir = pl.direction(op.chunk);
    if (op.kind == PipeOp::Forward) {
      if (vs == 0) return 0;
      const StageChunk from = pl.locate(vs - 1, dir);
      return fend[key(from.stage, from.chunk, op.microbatch)];
    }
    if (op.kind == PipeOp::BackwardWeight) return bend[key(s, op.chunk, op.microbatch)];
    if (vs == V - 1) return fend[key(s, op.chunk, op.microbatch)];
    const StageChunk from = pl.locate(vs + 1, dir);
    return bend[key(from.stage, from.chunk, op.microbatch)];
  };
  std::size_t done = 0, total = 0;
  for (const auto& o : ops) total += o.size();
  while (done < total) {
    bool progress = false;
    for (int s = 0; s < p; ++s) {
      const auto su = static_cast<std::size_t>(s);
      auto& k = next[su];
      while (k < ops[su].size()) {
        const PipeOp& op = ops[su][k];
        double ready = ready_of(s, op);
        if (ready < 0) break;  // dependency not run yet
        if (op.overlapped_with_next && k + 1 < ops[su].size()) {
          const double partner = ready_of(s, ops[su][k + 1]);
          if (partner < 0) break;
          ready = std::max(ready, partner);
        }
        const double dur = op.kind == PipeOp::Forward          ? d.f
                           : op.kind == PipeOp::Backward       ? d.b + d.w
                           : op.kind == PipeOp::BackwardInput ? d.b
                                                               : d.w;
        const double start = std::max(free_at[su], ready);
        const double end = start + dur;
        if (first[su] < 0) first[su] = start;
        if (op.kind == PipeOp::Forward) fend[key(s, op.chunk, op.microbatch)] = end;
        else if (op.kind != PipeOp::BackwardWeight) bend[key(s, op.chunk, op.microbatch)] = end;
        free_at[su] = end;
        r.busy[su] += dur;
        auto& f = in_flight[su];
        f += op.kind == PipeOp::Forward ? 1 : op.kind == PipeOp::BackwardInput ? 0 : -1;
        r.peak_in_flight[su] = std::max(r.peak_in_flight[su], f);
        ++k, ++done, progress = true;
      }
    }
    if (!progress) {
      r.deadlock = true;
      return r;
    }
  }
  r.window = *std::max_element(free_at.begin(), free_at.end());
  for (int s = 0; s < p; ++s) {
    const auto su = static_cast<std::size_t>(s);
    r.bubble += (r.window - r.busy[su]) / r.window;
    r.period = std::max(r.period, free_at[su] - first[su]);
  }
  r.bubble /= p;
  return r;
}
// The looped placement, F = tf and a combined backward tb (a split one tb/2 + tb/2).
SimResult simulate(const ScheduleOrder& ops, int p, int v, int m, double tf, double tb) {
  PipelinePlacement pl;
  pl.pp = p;
  pl.chunks = v;
  return simulate(ops, pl, m, Durations{tf, tb / 2, tb / 2});
}

// "F0 F1 B0 …" (with "c<chunk>" after each micro-batch when `chunks`).
std::string order_of(const std::vector<PipeOp>& ops, bool chunks) {
  std::string out;
  for (const auto& op : ops) {
    out.append(op.kind == PipeOp::Forward          ? "F"
               : op.kind == PipeOp::Backward       ? "B"
               : op.kind == PipeOp::BackwardInput ? "I"
                                                   : "W");
    out.append(std::to_string(op.microbatch));
    if (chunks) {
      out.push_back('c');
      out.append(std::to_string(op.chunk));
    }
    if (op.overlapped_with_next) out.push_back('&');
    out.push_back(' ');
  }
  return out;
}

}  // namespace

TEST_CASE("GPipe and 1F1B: contract, no deadlock, bubble (p−1)/(m+p−1)") {
  for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB})
    for (int p : {1, 2, 3, 4, 8})
      for (int m : {1, 2, 3, 4, 5, 8, 12, 16}) {
        CAPTURE(to_string(s));
        CAPTURE(p);
        CAPTURE(m);
        const auto ops = pipeline_schedule(s, p, 1, m);
        check_contract(ops, p, 1, m);
        // Equal passes (tf = tb) and the usual tb = 2·tf: the idle time is (p−1)(tf+tb) out of (m+p−1)(tf+tb) on
        // every stage (Narayanan et al. 2021 §2.2), so the bubble is (p−1)/(m+p−1) either way.
        for (double tb : {1.0, 2.0}) {
          const auto r = simulate(ops, p, 1, m, 1.0, tb);
          REQUIRE_FALSE(r.deadlock);
          CHECK(r.window == doctest::Approx((m + p - 1) * (1.0 + tb)));
          CHECK(r.bubble == doctest::Approx(double(p - 1) / (m + p - 1)));
        }
      }
}

TEST_CASE("1F1B order: warm-up min(p−i−1, m) forwards, then alternate; in flight p−i, GPipe m") {
  // p = 4, m = 6, stage 1: warm-up 4 − 1 − 1 = 2 forwards, then F2 B0 F3 B1 F4 B2 F5 B3, cool-down B4 B5.
  const auto ops = pipeline_schedule(Schedule::OneFOneB, 4, 1, 6);
  CHECK(order_of(ops[1], false) == "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
  for (int p : {2, 4, 8})
    for (int m : {1, 3, 8, 16}) {
      const auto one = simulate(pipeline_schedule(Schedule::OneFOneB, p, 1, m), p, 1, m, 1, 2);
      const auto gp = simulate(pipeline_schedule(Schedule::GPipe, p, 1, m), p, 1, m, 1, 2);
      for (int i = 0; i < p; ++i) {
        // 1F1B stage i keeps min(p − i, m) micro-batches' activations (Narayanan 2021 §2.2; MCore warm-up p−i−1 + 1).
        CHECK(one.peak_in_flight[static_cast<std::size_t>(i)] == std::min(p - i, m));
        // GPipe keeps all m.
        CHECK(gp.peak_in_flight[static_cast<std::size_t>(i)] == m);
      }
    }
}

TEST_CASE("Interleaved 1F1B: contract, no deadlock, bubble (p−1)/(v·m+p−1)") {
  for (int p : {2, 3, 4, 8})
    for (int v : {2, 3, 4})
      for (int k : {1, 2, 3, 4}) {
        const int m = k * p;  // Megatron-Core: m a multiple of p at the default group size G = p
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const auto ops = pipeline_schedule(Schedule::Interleaved, p, v, m);
        check_contract(ops, p, v, m);
        for (double tb : {1.0, 2.0}) {
          const auto r = simulate(ops, p, v, m, 1.0, tb);
          REQUIRE_FALSE(r.deadlock);
          // Each stage is busy v·m·(tf+tb); the ideal interleaved window adds (p−1)(tf+tb) of chunk passes
          // (Narayanan et al. 2021 §2.2.1: bubble shrinks by v) → bubble (p−1)/(v·m+p−1).
          CHECK(r.window == doctest::Approx((v * m + p - 1) * (1.0 + tb)));
          CHECK(r.bubble == doctest::Approx(double(p - 1) / (v * m + p - 1)));
          for (int i = 0; i < p; ++i) {
            // In flight at the peak: warm-up (p−i−1)·2 + (v−1)·p chunk passes plus the first steady forward, capped
            // at all v·m (Megatron-Core get_pp_rank_microbatches).
            const int warm = std::min(2 * (p - i - 1) + (v - 1) * p, v * m);
            CHECK(r.peak_in_flight[static_cast<std::size_t>(i)] == std::min(warm + 1, v * m));
          }
        }
      }
}

TEST_CASE("Interleaved order follows Megatron-Core's schedule table") {
  // p = 2, v = 2, m = 4: table in groups of G = 2 micro-batches: (0,c0) (1,c0) (0,c1) (1,c1) (2,c0) (3,c0) (2,c1)
  // (3,c1). Stage 1 warm-up (2−1−1)·2 + (2−1)·2 = 2: F0c0 F1c0; then pairs F(k+2) / B(k) where backward k runs
  // chunk v−1−table[k].chunk: B0c1 B1c1 B0c0 B1c0 B2c1 …
  const auto ops = pipeline_schedule(Schedule::Interleaved, 2, 2, 4);
  CHECK(order_of(ops[1], true) == "F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 B2c0 B3c0 ");
}

TEST_CASE("the dependency simulation detects a deadlocking order and times a hand-checked one") {
  // Stage 0 runs B0 before F1, but stage 1 wants F1 (which needs stage 0's F1) before its F0/B0 → circular wait.
  const std::vector<std::vector<PipeOp>> bad{
      {{PipeOp::Forward, 0, 0}, {PipeOp::Backward, 0, 0}, {PipeOp::Forward, 1, 0}, {PipeOp::Backward, 1, 0}},
      {{PipeOp::Forward, 1, 0}, {PipeOp::Forward, 0, 0}, {PipeOp::Backward, 0, 0}, {PipeOp::Backward, 1, 0}}};
  check_contract(bad, 2, 1, 2);  // the order itself is well formed…
  CHECK(simulate(bad, 2, 1, 2, 1, 1).deadlock);  // …but cannot run
  // Stage 1 doing both forwards before any backward (GPipe-like) while stage 0 runs 1F1B-like: still valid, and
  // with p = 2, m = 2, tf = tb = 1 the window is (m + p − 1)·2 = 6 → bubble 1/3, the same as 1F1B.
  const std::vector<std::vector<PipeOp>> mixed{
      {{PipeOp::Forward, 0, 0}, {PipeOp::Forward, 1, 0}, {PipeOp::Backward, 0, 0}, {PipeOp::Backward, 1, 0}},
      {{PipeOp::Forward, 0, 0}, {PipeOp::Backward, 0, 0}, {PipeOp::Forward, 1, 0}, {PipeOp::Backward, 1, 0}}};
  const auto r = simulate(mixed, 2, 1, 2, 1, 1);
  REQUIRE_FALSE(r.deadlock);
  CHECK(r.bubble == doctest::Approx(1.0 / 3.0));
}

TEST_CASE("pipeline_schedule rejects inconsistent arguments") {
  using doctest::Contains;
  CHECK(test::error_of([] { pipeline_schedule(Schedule::OneFOneB, 4, 2, 8); }) == Contains("interleaved"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::Interleaved, 4, 1, 8); }) == Contains("vpp > 1"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::Interleaved, 4, 2, 6); }) == Contains("multiple of pp4"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::GPipe, 4, 1, 0); }) == Contains("positive"));
}

TEST_CASE("every schedule in the traits table keeps the contract and replays without deadlock") {
  // The table is the single list of schedules (plans/schedule.cpp): a new one is checked here without editing this
  // test. Grid: p ∈ {1..4, 6, 8}, the vpp its rule allows (2 and 3 for interleaving), m from 1 to 3p where its
  // preconditions hold (schedule_precondition_error: m a multiple of p, m ≥ 2p, even p and m …).
  for (const ScheduleTraits& t : all_schedule_traits()) {
    CAPTURE(t.name);
    CHECK(parse_schedule(t.name) == t.schedule);
    for (const std::string& alias : t.aliases) CHECK(parse_schedule(alias) == t.schedule);
    CHECK(std::string(t.source).size() > 10);  // every schedule names its source
    const std::vector<int> vpps = t.vpp == VppRule::AboveOne ? std::vector<int>{2, 3}
                                  : t.vpp == VppRule::Two    ? std::vector<int>{2}
                                                             : std::vector<int>{1};
    int checked = 0;
    for (int p : {1, 2, 3, 4, 6, 8})
      for (int v : vpps)
        for (int m = 1; m <= 3 * p; ++m) {
          if (schedule_precondition_error(t, p, v, m)) {
            CHECK_THROWS_AS(pipeline_schedule(t.schedule, p, v, m), InputError);
            continue;
          }
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          const auto ops = pipeline_schedule(t.schedule, p, v, m);
          const PipelinePlacement pl = pipeline_placement(t.schedule, p, v);
          check_contract(ops, pl, m, t.splits_backward ? -1 : 0);
          bool pairs = false;
          for (const auto& o : ops)
            for (const PipeOp& op : o) pairs = pairs || op.overlapped_with_next;
          if (!t.overlaps_forward_backward) CHECK_FALSE(pairs);
          const auto r = simulate(ops, pl, m, Durations{1.0, 1.0, 1.0});
          REQUIRE_FALSE(r.deadlock);
          // Nothing beats the busy time of the busiest stage.
          CHECK(r.window >= *std::max_element(r.busy.begin(), r.busy.end()) - 1e-9);
          ++checked;
        }
    CHECK(checked > 0);
  }
  CHECK(test::error_of([] { schedule_traits(Schedule::Auto); }) == doctest::Contains("resolve"));
}

TEST_CASE("placements: looped, V-shape and bidirectional virtual stages") {
  // Looped p = 4, v = 2: virtual stage c·4 + s. V-shape p = 4: stage s holds s and 7 − s, so stage 0 runs the first
  // and the last virtual stage (embedding and loss). Bidirectional p = 4: stage s holds s and a copy of 3 − s; a
  // micro-batch of direction 1 enters at stage 3 (its chunk 1 is virtual stage 0).
  const PipelinePlacement looped = pipeline_placement(Schedule::Interleaved, 4, 2);
  CHECK(looped.virtual_stages() == 8);
  CHECK(looped.vstage(1, 1) == 5);
  CHECK(looped.locate(5, 0).stage == 1);
  const PipelinePlacement v = pipeline_placement(Schedule::ZBV, 4, 2);
  CHECK(v.virtual_stages() == 8);
  CHECK(v.vstage(0, 1) == 7);
  CHECK(v.vstage(3, 0) == 3);
  CHECK(v.vstage(3, 1) == 4);
  CHECK(v.locate(4, 0).stage == 3);
  CHECK(v.locate(4, 0).chunk == 1);
  const PipelinePlacement bi = pipeline_placement(Schedule::DualPipe, 4, 1);
  CHECK(bi.chunks == 2);
  CHECK(bi.virtual_stages() == 4);
  CHECK(bi.vstage(3, 1) == 0);
  CHECK(bi.vstage(0, 1) == 3);
  CHECK(bi.locate(0, 1).stage == 3);
  CHECK(bi.locate(2, 0).stage == 2);
  CHECK(bi.direction_of(3, 8) == 0);
  CHECK(bi.direction_of(4, 8) == 1);
  CHECK_FALSE(bi.serves(1, 0, 8));
  CHECK(bi.serves(1, 7, 8));
}

TEST_CASE("ZB-H1: 1F1B's activation memory, bubble (p−1)(T_F + T_B − T_W) — a third of 1F1B's for equal passes") {
  // Qi et al. 2024 §2.1. 1F1B runs B and W as one backward: a stage waits (p−1)(T_F + T_B + T_W) in all (warm-up
  // and cool-down: the last micro-batch's backward climbs back through p − 1 stages of B + W each). Splitting the
  // backward, only B is on the critical path: the gradient climbs at T_B per stage, and ZB-H1 delays stage i's W's by
  // i micro-batches so that the delayed W's fill the cool-down. Stage p − 1 starts (p−1)·T_F after stage 0 and
  // never waits again; stage 0 waits once for its first B, (p−1)·T_B, and the W's it would have run there are the
  // ones the stages below defer — so every stage idles (p−1)(T_F + T_B − T_W) (for T_W ≤ T_B). With
  // T_F = T_B = T_W = 1: 1F1B idles 3(p − 1), ZB-H1 p − 1: a third.
  for (int p : {2, 4, 8})
    for (int m : {p, 2 * p, 4 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto zb = pipeline_schedule(Schedule::ZBH1, p, 1, m);
      const auto one = pipeline_schedule(Schedule::OneFOneB, p, 1, m);
      check_contract(zb, p, 1, m, true);
      for (const Durations d : {Durations{1, 1, 1}, Durations{1, 1.5, 0.5}, Durations{1, 1.28, 0.86}, Durations{1, 2, 1}}) {
        CAPTURE(d.b);
        CAPTURE(d.w);
        const PipelinePlacement pl = pipeline_placement(Schedule::ZBH1, p, 1);
        const auto r = simulate(zb, pl, m, d), r1 = simulate(one, pl, m, d);
        REQUIRE_FALSE(r.deadlock);
        const double busy = m * (d.f + d.b + d.w);
        CHECK(r1.window - busy == doctest::Approx((p - 1) * (d.f + d.b + d.w)));
        CHECK(r.window - busy == doctest::Approx((p - 1) * (d.f + d.b - d.w)));
        if (d.b == d.w && d.f == d.b) CHECK((r.window - busy) * 3 == doctest::Approx(r1.window - busy));
      }
      // In flight (F done, W not yet): p on every stage — 1F1B's peak, that of its first stage (p − i on stage i).
      const auto r = simulate(zb, pipeline_placement(Schedule::ZBH1, p, 1), m, Durations{});
      const auto r1 = simulate(one, pipeline_placement(Schedule::OneFOneB, p, 1), m, Durations{});
      const int peak1 = *std::max_element(r1.peak_in_flight.begin(), r1.peak_in_flight.end());
      CHECK(peak1 == std::min(p, m));
      for (int i = 0; i < p; ++i) CHECK(r.peak_in_flight[static_cast<std::size_t>(i)] == std::min(p, m));
    }
  // p = 4, m = 6, stage 2: 1F1B's F/B order (warm-up 1), W's two micro-batches behind their B.
  CHECK(order_of(pipeline_schedule(Schedule::ZBH1, 4, 1, 6)[2], false) ==
        "F0 F1 I0 F2 I1 F3 I2 W0 F4 I3 W1 F5 I4 W2 I5 W3 W4 W5 ");
}

TEST_CASE("ZB-H2: zero bubble with post-validation, up to 2p − 1 micro-batches in flight") {
  // Qi et al. 2024 §2.2. With equal passes each stage is busy 3m; it cannot start before (its index)·T_F, so under a
  // barrier the window is at least 3m + (p − 1) — which ZB-H1 already reaches. ZB-H2's extra warm-up forwards and
  // W's pushed to the tail make every stage run without a gap from its first pass to its last (a parallelogram):
  // with post-validation (§4) consecutive steps overlap and the period is the stage span, 3m: zero bubble.
  for (int p : {2, 4, 8})
    for (int m : {2 * p, 3 * p, 4 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto ops = pipeline_schedule(Schedule::ZBH2, p, 1, m);
      check_contract(ops, p, 1, m, true);
      const auto r = simulate(ops, pipeline_placement(Schedule::ZBH2, p, 1), m, Durations{});
      REQUIRE_FALSE(r.deadlock);
      CHECK(r.period == doctest::Approx(3.0 * m));
      CHECK(r.window == doctest::Approx(3.0 * m + p - 1));
      for (int i = 0; i < p; ++i) CHECK(r.peak_in_flight[static_cast<std::size_t>(i)] <= 2 * p - 1);
      CHECK(*std::max_element(r.peak_in_flight.begin(), r.peak_in_flight.end()) == 2 * p - 1);
    }
}

TEST_CASE("ZB-V: V-shape, 1F1B's activation memory, zero bubble with post-validation once m ≥ 2p − 1") {
  // Qi et al. 2024 (arXiv v2) §6: two chunks of half a stage each, placed in a V so that stage 0 holds the first and
  // the last virtual stage. Each chunk pass takes half a stage pass: F = B = W = 1/2, 3m busy per stage. At most 2p
  // chunk activations in flight = p stage activations, 1F1B's peak. With m ≥ 2p − 1 every stage runs without a gap
  // from its first pass to its last: with post-validation the step is 3m.
  for (int p : {2, 4, 8})
    for (int m : {2 * p - 1, 2 * p, 3 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto ops = pipeline_schedule(Schedule::ZBV, p, 2, m);
      const PipelinePlacement pl = pipeline_placement(Schedule::ZBV, p, 2);
      check_contract(ops, pl, m, 1);
      const auto r = simulate(ops, pl, m, Durations{0.5, 0.5, 0.5});
      REQUIRE_FALSE(r.deadlock);
      CHECK(r.period == doctest::Approx(1.5 * 2 * m));
      for (int i = 0; i < p; ++i) CHECK(r.peak_in_flight[static_cast<std::size_t>(i)] <= 2 * p);
    }
}

TEST_CASE("DualPipe and DualPipeV: both directions, F&B pairs, bubble within the repository's bound") {
  // DeepSeek-V3 report Table 2 / DualPipe README: bubble (PP/2 − 1)(F&B + B − 3W) against 1F1B's (PP − 1)(F + B), with
  // B the whole backward and F&B the overlapped pair (here F + B: the replay has no communication to hide). DualPipe:
  // each stage runs m/2 micro-batches on each of its two chunks, one stage's worth of layers each: busy m(F + B).
  // DualPipeV: the same eight steps on a V of half-size chunks; the README's bound "based on the same number of PP
  // stages" counts its 2p stages of half-size chunks: (2p/2 − 1)(F&B + B − 3W)/2. The replay's idle must stay within
  // the bounds and below 1F1B's.
  for (const Durations d : {Durations{1, 1, 1}, Durations{1, 2, 1}, Durations{1, 1.5, 0.5}})
    for (int p : {2, 4, 8})
      for (int m : {2 * p, 3 * p, 4 * p}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(d.b);
        const auto dual = pipeline_schedule(Schedule::DualPipe, p, 1, m);
        const PipelinePlacement pl = pipeline_placement(Schedule::DualPipe, p, 1);
        check_contract(dual, pl, m, -1);
        const auto r = simulate(dual, pl, m, d);
        REQUIRE_FALSE(r.deadlock);
        const double F = d.f, B = d.b + d.w, W = d.w, busy = m * (F + B);
        const double bound = (p / 2.0 - 1) * ((F + B) + B - 3 * W), one_f_one_b = (p - 1) * (F + B);
        CHECK(r.window - busy <= bound + 1e-9);
        CHECK(r.window - busy < one_f_one_b);
        const auto v = pipeline_schedule(Schedule::DualPipeV, p, 2, m);
        const PipelinePlacement pv = pipeline_placement(Schedule::DualPipeV, p, 2);
        check_contract(v, pv, m, -1);
        const auto rv = simulate(v, pv, m, Durations{d.f / 2, d.b / 2, d.w / 2});
        REQUIRE_FALSE(rv.deadlock);
        CHECK(rv.window - busy <= (p - 1) * ((F + B) + B - 3 * W) / 2 + 1e-9);
        CHECK(rv.window - busy < one_f_one_b);
      }
  // Direction and pairs: p = 4, m = 8, stage 0 runs micro-batches 0–3 on chunk 0 (from stage 0) and 4–7 on chunk 1
  // (entering at stage 3); its steady state pairs a forward of one direction with a backward of the other.
  const auto o = pipeline_schedule(Schedule::DualPipe, 4, 1, 8);
  CHECK(order_of(o[0], true) ==
        "F0c0 F1c0 F2c0 F4c1 I4c1 W4c1 F5c1 F3c0& B5c1 F6c1& B0c0 B6c1 F7c1& B1c0 B7c1 I2c0 W2c0 I3c0 W3c0 ");
}

TEST_CASE("schedule preconditions are one-line errors") {
  using doctest::Contains;
  CHECK(test::error_of([] { pipeline_schedule(Schedule::DualPipe, 3, 1, 12); }) == Contains("even pp"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::DualPipe, 4, 1, 6); }) == Contains("at least 2 × pp = 8"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::DualPipe, 4, 1, 9); }) == Contains("even micro-batch count"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::DualPipeV, 4, 2, 7); }) == Contains("at least 2 × pp = 8"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::ZBV, 4, 1, 8); }) == Contains("needs vpp2"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::ZBV, 4, 3, 8); }) == Contains("needs vpp2"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::ZBH1, 4, 2, 8); }) == Contains("not zb-h1"));
  CHECK(test::error_of([] { pipeline_schedule(Schedule::DualPipeV, 1, 2, 8); }) == Contains("pp > 1"));
  CHECK(parse_optimizer_sync("Post-Validation") == OptimizerSync::PostValidation);
  CHECK(test::error_of([] { parse_optimizer_sync("sometimes"); }) == Contains("--optimizer-sync 'sometimes'"));
  CHECK(test::error_of([] { parse_schedule("zb3"); }) == Contains("dualpipev"));
}

TEST_CASE("a split backward: B before W, only B on the pipeline's critical path") {
  // p = 4, m = 8, tf = 1, tb = 2. Combined 1F1B: window (m + p − 1)(tf + tb) = 11·3 = 33. Split in place (B then W
  // right after, B = W = tb/2 = 1): a stage's B waits only for the next stage's B, so the gradient crosses the
  // pipeline at tb/2 per stage: window = m(tf + tb) + (p − 1)(tf + tb/2) = 24 + 3·2 = 30 (Qi et al. 2024 §2: W is
  // off the critical path). Deferring every W to the end of its stage keeps 30: the W's fill the cool-down.
  const int p = 4, m = 8;
  const auto base = pipeline_schedule(Schedule::OneFOneB, p, 1, m);
  std::vector<std::vector<PipeOp>> split(p), deferred(p);
  for (int s = 0; s < p; ++s) {
    std::vector<PipeOp> ws;
    for (const PipeOp& op : base[static_cast<std::size_t>(s)]) {
      if (op.kind != PipeOp::Backward) {
        split[static_cast<std::size_t>(s)].push_back(op);
        deferred[static_cast<std::size_t>(s)].push_back(op);
        continue;
      }
      split[static_cast<std::size_t>(s)].push_back({PipeOp::BackwardInput, op.microbatch, 0});
      split[static_cast<std::size_t>(s)].push_back({PipeOp::BackwardWeight, op.microbatch, 0});
      deferred[static_cast<std::size_t>(s)].push_back({PipeOp::BackwardInput, op.microbatch, 0});
      ws.push_back({PipeOp::BackwardWeight, op.microbatch, 0});
    }
    for (const PipeOp& w : ws) deferred[static_cast<std::size_t>(s)].push_back(w);
  }
  check_contract(split, p, 1, m, true);
  check_contract(deferred, p, 1, m, true);
  const auto a = simulate(split, p, 1, m, 1, 2), b = simulate(deferred, p, 1, m, 1, 2);
  REQUIRE_FALSE(a.deadlock);
  REQUIRE_FALSE(b.deadlock);
  CHECK(simulate(base, p, 1, m, 1, 2).window == doctest::Approx(33.0));
  CHECK(a.window == doctest::Approx(30.0));
  CHECK(b.window == doctest::Approx(30.0));
  // W before its B is a broken order: the contract check would fail; the replay cannot run it.
  std::vector<std::vector<PipeOp>> broken{{{PipeOp::Forward, 0, 0}, {PipeOp::BackwardWeight, 0, 0},
                                           {PipeOp::BackwardInput, 0, 0}}};
  CHECK(simulate(broken, 1, 1, 1, 1, 2).deadlock);
}
