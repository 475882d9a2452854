// Pipeline schedules as data — the contract every schedule must keep, run over many (p, v, m), plus a small
// dependency simulation that replays the order with unit-time passes and free communication.
#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace parsim;

namespace {

// Contract: on every stage each (micro-batch, chunk) runs exactly once forward and once backward — one combined
// Backward, or one B (input gradient) and one W (weight gradient) for a split backward — forward before B before W.
void check_contract(const std::vector<std::vector<PipeOp>>& ops, int p, int v, int m, bool split = false) {
  REQUIRE(ops.size() == static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    const auto& o = ops[static_cast<std::size_t>(s)];
    CHECK(o.size() == (split ? 3u : 2u) * static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
    std::map<std::pair<int, int>, int> at[4];  // by PipeOp::Kind
    for (int i = 0; i < static_cast<int>(o.size()); ++i) {
      const auto& op = o[static_cast<std::size_t>(i)];
      REQUIRE(op.microbatch >= 0);
      REQUIRE(op.microbatch < m);
      REQUIRE(op.chunk >= 0);
      REQUIRE(op.chunk < v);
      auto& slot = at[op.kind];
      CHECK(slot.count({op.microbatch, op.chunk}) == 0);  // once
      slot[{op.microbatch, op.chunk}] = i;
    }
    const auto n = static_cast<std::size_t>(m * v);
    CHECK(at[PipeOp::Forward].size() == n);
    CHECK(at[PipeOp::Backward].size() == (split ? 0 : n));
    CHECK(at[PipeOp::BackwardInput].size() == (split ? n : 0));
    CHECK(at[PipeOp::BackwardWeight].size() == (split ? n : 0));
    for (const auto& [key, f] : at[PipeOp::Forward]) {
      if (!split) {
        CHECK(f < at[PipeOp::Backward][key]);  // forward before backward
      } else {
        CHECK(f < at[PipeOp::BackwardInput][key]);                                  // F before B
        CHECK(at[PipeOp::BackwardInput][key] < at[PipeOp::BackwardWeight][key]);  // B before W
      }
    }
  }
}

struct SimResult {
  bool deadlock = false;
  double window = 0;      // first start (0) to last end, over all stages
  double bubble = 0;      // mean over stages of idle / window (the contract's definition)
  std::vector<int> peak_in_flight;  // per stage: most chunk-passes forwarded but not yet backwarded
};

// Each stage runs its ops in order, one at a time. F(mb, c) on stage s needs F(mb) on the previous virtual stage
// (virtual stage = c·p + s; stage p−1 chunk c feeds stage 0 chunk c+1); B(mb) on virtual stage V−1 needs F(mb) there,
// others need B(mb) on the next virtual stage. Communication is free. tf, tb: durations of a chunk pass.
SimResult simulate(const std::vector<std::vector<PipeOp>>& ops, int p, int v, int m, double tf, double tb) {
  const int V = p * v;
  std::vector<std::vector<double>> fend(static_cast<std::size_t>(V), std::vector<double>(static_cast<std::size_t>(m), -1));
  auto bend = fend;
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free_at(static_cast<std::size_t>(p), 0), busy(static_cast<std::size_t>(p), 0);
  std::vector<int> in_flight(static_cast<std::size_t>(p), 0);
  SimResult r;
  r.peak_in_flight.assign(static_cast<std::size_t>(p), 0);
  std::size_t done = 0, total = 0;
  for (const auto& o : ops) total += o.size();
  while (done < total) {
    bool progress = false;
    for (int s = 0; s < p; ++s) {
      auto& k = next[static_cast<std::size_t>(s)];
      while (k < ops[static_cast<std::size_t>(s)].size()) {
        const PipeOp& op = ops[static_cast<std::size_t>(s)][k];
        const int vs = op.chunk * p + s;
        const auto mb = static_cast<std::size_t>(op.microbatch);
        // F needs the previous virtual stage's F; a backward (combined, or its B half) needs the next virtual stage's
        // input gradient (the last one: its own F); W needs its own B. A split backward takes tb/2 per half.
        double ready;
        if (op.kind == PipeOp::Forward) ready = vs == 0 ? 0 : fend[static_cast<std::size_t>(vs - 1)][mb];
        else if (op.kind == PipeOp::BackwardWeight) ready = bend[static_cast<std::size_t>(vs)][mb];
        else ready = vs == V - 1 ? fend[static_cast<std::size_t>(vs)][mb] : bend[static_cast<std::size_t>(vs + 1)][mb];
        if (ready < 0) break;  // dependency not run yet
        const double dur = op.kind == PipeOp::Forward ? tf : op.kind == PipeOp::Backward ? tb : tb / 2;
        const double start = std::max(free_at[static_cast<std::size_t>(s)], ready);
        const double end = start + dur;
        if (op.kind == PipeOp::Forward) fend[static_cast<std::size_t>(vs)][mb] = end;
        else if (op.kind != PipeOp::BackwardWeight) bend[static_cast<std::size_t>(vs)][mb] = end;
        free_at[static_cast<std::size_t>(s)] = end;
        busy[static_cast<std::size_t>(s)] += dur;
        auto& f = in_flight[static_cast<std::size_t>(s)];
        f += op.kind == PipeOp::Forward ? 1 : op.kind == PipeOp::BackwardInput ? 0 : -1;
        r.peak_in_flight[static_cast<std::size_t>(s)] = std::max(r.peak_in_flight[static_cast<std::size_t>(s)], f);
        ++k, ++done, progress = true;
      }
    }
    if (!progress) {
      r.deadlock = true;
      return r;
    }
  }
  r.window = *std::max_element(free_at.begin(), free_at.end());
  for (int s = 0; s < p; ++s) r.bubble += (r.window - busy[static_cast<std::size_t>(s)]) / r.window;
  r.bubble /= p;
  return r;
}

// "F0 F1 B0 …" (with "c<chunk>" after each micro-batch when `chunks`).
std::string order_of(const std::vector<PipeOp>& ops, bool chunks) {
  std::string out;
  for (const auto& op : ops) {
    out.push_back(op.kind == PipeOp::Forward ? 'F' : 'B');
    out.append(std::to_string(op.microbatch));
    if (chunks) {
      out.push_back('c');
      out.append(std::to_string(op.chunk));
    }
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
  // test. Grid: p ∈ {1..4, 8}, v ∈ {2, 3} where the schedule uses virtual stages (else 1), m from 1 to 3p (a multiple
  // of p where the schedule needs it).
  for (const ScheduleTraits& t : all_schedule_traits()) {
    CAPTURE(t.name);
    CHECK(parse_schedule(t.name) == t.schedule);
    for (const std::string& alias : t.aliases) CHECK(parse_schedule(alias) == t.schedule);
    for (int p : {1, 2, 3, 4, 8}) {
      if (t.uses_vpp && p == 1) continue;
      for (int v : t.uses_vpp ? std::vector<int>{2, 3} : std::vector<int>{1})
        for (int m = 1; m <= 3 * p; ++m) {
          if (t.microbatches_multiple_of_pp && m % p != 0) continue;
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          const auto ops = pipeline_schedule(t.schedule, p, v, m);
          check_contract(ops, p, v, m, t.splits_backward);
          const auto r = simulate(ops, p, v, m, 1.0, 2.0);
          REQUIRE_FALSE(r.deadlock);
          // Nothing beats the busy time of one stage: window ≥ v·m·(tf + tb).
          CHECK(r.window >= v * m * 3.0 - 1e-9);
        }
    }
  }
  CHECK(test::error_of([] { schedule_traits(Schedule::Auto); }) == doctest::Contains("resolve"));
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
