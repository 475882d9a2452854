// The trace is the simulation's own timeline: it ends at the step time and its compute tracks show the bubble.
#include "helpers.hpp"
#include "sim/present/render.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

using namespace parsim;
using namespace parsim::testing;

namespace {

// Simulates `sc` keeping its timeline, writes the trace through write_trace and reads it back as JSON.
nlohmann::json simulated_trace(const Scenario& sc, bool layer_detail, StepReport& report) {
  Evaluator ev;
  EvalOptions opt;
  opt.keep_timeline = true;
  report = ev.run(sc, opt);
  const std::string path = layer_detail ? "test_trace_layers.json" : "test_trace_passes.json";
  write_trace(path, sc, ev, report, layer_detail);
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  std::remove(path.c_str());
  return j;
}

}  // namespace

TEST_CASE("trace: opens as JSON, ends at the step time, compute tracks reproduce the bubble") {
  StepReport r;
  const auto j = simulated_trace(scenario("llama2-7b", "tp8pp4dp1", "h100", 16, 1, 4096), false, r);
  REQUIRE(j.contains("traceEvents"));
  double last_end = 0;
  std::map<int, int> compute_tid;
  std::map<int, std::vector<std::pair<double, double>>> passes;
  int counters = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name" && e["args"]["name"] == "compute") compute_tid[e["pid"]] = e["tid"];
    if (ph == "C") ++counters;
    if (ph != "X") continue;
    last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
    const std::string name = e["name"];
    if (e["tid"] == 0 && (name[0] == 'F' || name[0] == 'B')) passes[e["pid"]].emplace_back(e["ts"], e["dur"]);
  }
  // The last event ends at step_time_s (µs in the trace; printed with 3 decimals).
  CHECK(last_end == doctest::Approx(r.step_time_s * 1e6).epsilon(1e-6));
  CHECK(compute_tid.size() == 4);
  CHECK(counters > 0);
  // Bubble from the trace: window = first forward start … last backward end over all stages; per stage idle/window.
  double wb = 1e300, we = 0;
  for (auto& [pid, v] : passes)
    for (auto& [ts, dur] : v) wb = std::min(wb, ts), we = std::max(we, ts + dur);
  double sum = 0;
  for (auto& [pid, v] : passes) {
    double busy = 0;
    for (auto& [ts, dur] : v) busy += dur;
    sum += (we - wb - busy) / (we - wb);
  }
  CHECK(sum / 4 == doctest::Approx(r.bubble_fraction).epsilon(1e-3));
  CHECK(r.bubble_fraction > 0.1);
}

TEST_CASE("trace: per-layer detail nests exactly inside each pass and sums to it") {
  // Perfetto drops slices that overlap a sibling or end after their parent; the layer slices tile each pass on integer
  // nanoseconds, so on every compute track the slices must form a proper tree.
  StepReport r;
  const auto j = simulated_trace(scenario("llama2-7b", "tp2pp4dp1", "h100", 8, 1, 4096), true, r);
  std::map<int, std::vector<std::pair<long long, long long>>> slices;  // pid → [start, end) in ns
  int layers = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e["tid"] != 0) continue;
    const long long s = std::llround(e["ts"].get<double>() * 1000), d = std::llround(e["dur"].get<double>() * 1000);
    slices[e["pid"]].emplace_back(s, s + d);
    if (e["name"].get<std::string>().rfind("layer ", 0) == 0) ++layers;
  }
  // 8 micro-batches × 32 layers × (forward + backward) layer slices.
  CHECK(layers == 8 * 32 * 2);
  int improper = 0;
  for (auto& [pid, v] : slices) {
    std::sort(v.begin(), v.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<std::pair<long long, long long>> open;
    for (const auto& x : v) {
      while (!open.empty() && open.back().second <= x.first) open.pop_back();
      if (!open.empty() && x.second > open.back().second) ++improper;
      open.push_back(x);
    }
  }
  CHECK(improper == 0);
}

TEST_CASE("trace: the embedding and the LM head are drawn where the lowering put them, also with pp = 1") {
  // With one stage the only virtual stage holds both ends: forward = embedding, layers, lm head + loss; backward =
  // lm head + loss, layers in reverse, embedding (costs/edges.cpp edge_work). The trace used to draw the embedding
  // after the layers there, labelled "lm head + loss".
  for (const char* plan : {"tp8pp1dp1", "tp2pp4dp1"}) {
    CAPTURE(plan);
    StepReport r;
    const auto j = simulated_trace(scenario("llama2-7b", plan, "h100", 2, 1, 4096), true, r);
    struct Slice {
      double ts, end;
      std::string name;
      int pid;
    };
    std::vector<Slice> compute;
    for (const auto& e : j["traceEvents"])
      if (e["ph"] == "X" && e["tid"] == 0)
        compute.push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>(), e["name"], e["pid"]});
    auto children_of = [&](const std::string& prefix, int pid) {
      const auto pass = std::find_if(compute.begin(), compute.end(), [&](const Slice& s) {
        return s.pid == pid && s.name.rfind(prefix, 0) == 0;
      });
      REQUIRE(pass != compute.end());
      std::vector<Slice> kids;
      for (const Slice& s : compute)
        if (s.pid == pid && &s != &*pass && s.ts >= pass->ts - 1e-9 && s.end <= pass->end + 1e-9) kids.push_back(s);
      std::sort(kids.begin(), kids.end(), [](const Slice& a, const Slice& b) { return a.ts < b.ts; });
      REQUIRE(kids.size() >= 2);
      return kids;
    };
    const int last = parse_plan(plan).pp - 1;
    const auto f_first = children_of("F mb0", 0), f_last = children_of("F mb0", last);
    const auto b_first = children_of("B mb0", 0), b_last = children_of("B mb0", last);
    CHECK(f_first.front().name == "embedding");
    CHECK(f_first.front().name != f_last.back().name);
    CHECK(f_last.back().name == "lm head + loss");
    CHECK(b_last.front().name == "lm head + loss bwd");
    CHECK(b_first.back().name == "embedding bwd");
    CHECK(f_first[1].name.rfind("layer 0 fwd", 0) == 0);
  }
}
