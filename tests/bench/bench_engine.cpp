// Engine and evaluate() throughput: events per second of the raw executor, and simulated plans per second (one
// thread) for representative scenarios. Run: build/tests/parsim_bench_engine
#include "sim/engine/engine.hpp"
#include "sim/step/evaluate.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

using namespace parsim;

namespace {

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

void bench_raw_engine() {
  // A 1F1B-like chain: 16 stages × 512 passes with cross-stage dependencies and a comm stream per stage.
  engine::TaskGraph g;
  engine::Executor ex;
  engine::Timeline tl;
  const int stages = 16, passes = 512;
  auto build = [&] {
    g.clear();
    std::vector<engine::StreamId> comp, comm;
    for (int s = 0; s < stages; ++s) {
      int d = g.add_device(0.15);
      comp.push_back(g.add_stream(d, engine::StreamClass::Compute));
      comm.push_back(g.add_stream(d, engine::StreamClass::Comm));
    }
    std::vector<engine::TaskId> prev(stages, 0);
    for (int p = 0; p < passes; ++p)
      for (int s = 0; s < stages; ++s) {
        engine::TaskId t = g.add_task(comp[s], 1000 + (p * 7 + s) % 300, 0);
        engine::TaskId c = g.add_task(comm[s], 300, 0);
        g.add_dep(t, c);
        if (s > 0 && p > 0) g.add_dep(prev[s - 1], t);
        prev[s] = t;
      }
  };
  build();
  const int reps = 20;
  std::int64_t events = 0;
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  for (int r = 0; r < reps; ++r) {
    ex.run(g, tl);
    events += tl.events;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double cpu = cpu_seconds() - c0;
  std::printf("raw engine: %zu tasks/run, %d runs: %.2f M events/s (wall), %.2f M events per CPU-second\n",
              g.num_tasks(), reps, static_cast<double>(events) / wall * 1e-6, static_cast<double>(events) / cpu * 1e-6);
}

void bench_evaluate(const char* model, const char* plan, const char* gpu, std::int64_t gbs, std::int64_t seq, int reps) {
  ScenarioInput a;
  a.model = model;
  a.plan = plan;
  a.gpu = gpu;
  a.train.gbs = gbs;
  a.train.seq = seq;
  const Scenario sc = resolve_scenario(a);
  Evaluator ev;
  std::int64_t events = 0;
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  double step = 0;
  for (int r = 0; r < reps; ++r) {
    const StepReport rep = ev.run(sc);
    events += rep.events;
    step = rep.step_time_s;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double cpu = cpu_seconds() - c0;
  std::printf("evaluate %-10s %-18s gbs %-5lld: %8.0f plans/s, %8.0f plans per CPU-s, %7.2f M events/s, %lld events/plan "
              "(step %.3f s)\n",
              model, plan, static_cast<long long>(gbs), reps / wall, reps / cpu,
              static_cast<double>(events) / wall * 1e-6, static_cast<long long>(events / reps), step);
}

}  // namespace

int main() {
  bench_raw_engine();
  bench_evaluate("llama2-7b", "tp8pp2dp4", "h100", 1024, 4096, 50);
  bench_evaluate("llama3-70b", "tp8pp4dp16", "h100", 512, 8192, 200);
  bench_evaluate("llama3-70b", "tp8pp8dp8vpp5", "h100", 512, 8192, 100);
  bench_evaluate("llama3-70b", "tp2dp256fsdp", "h100", 512, 8192, 100);
  bench_evaluate("llama3-405b", "tp8pp16dp128", "h100", 2048, 8192, 50);
  return 0;
}
