// parsim_bench — plans per second and per CPU-second of `parsim sweep` on two fixed sweeps (issue 4, "Speed"):
//   llama3-70b on 512 H100, global batch 512 sequences (4M tokens at seq 8192);
//   llama3-405b on 16,384 H100, global batch 2048 sequences (16M tokens, the Llama 3 405B pre-training batch,
//   Llama 3 paper §3.4.1: 16M-token batches of 8,192-token sequences).
// "simulated per CPU-second" counts only plans that went through the event simulation (not those the memory
// pre-check rejected); CPU time is the process's (all threads), so it is independent of the core count.
// Wall and CPU time move ±15 % with the load of the shared 2-core build machine: compare builds in alternating runs
// and judge changes by instruction counts (callgrind; README "Speed" has the history). The 70b case with --threads 1,
// 38,037 candidates, 11,785 simulated: 1,943–1,974 per CPU-second on the idle machine at main 0046d7a (91.5 G
// instructions for the same sweep through `parsim sweep`); with the lowering's shape cache (86 % of the simulations
// re-fill a kept graph) 72.9 G instructions (−20 %), and in alternating runs against main 38648ef at load average ≈ 1.5:
// 1,898 / 2,024 / 1,939 / 1,993 against 1,796 / 1,788 / 1,836 / 1,760 (≈ +9 %; CPU time falls less than instructions).
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/sweep/sweep.hpp"

#include <cstdio>
#include <cstring>
#include <string>

using namespace parsim;

namespace {

struct BenchCase {
  const char* name;
  const char* model;
  int gpus;
  std::int64_t gbs;
};

void run_case(const BenchCase& c, int threads) {
  SweepSetup s;
  s.base.model = c.model;
  s.base.gpu = "h100";
  s.base.train.gbs = c.gbs;
  s.gpus = c.gpus;
  SweepOptions o;
  o.threads = threads;
  const SweepReport r = run_sweep(s, o);
  std::printf("%s: %s on %d x h100, gbs %lld, %d threads\n", c.name, c.model, c.gpus, static_cast<long long>(c.gbs),
              r.threads);
  std::printf("  candidates %lld, simulated %lld, feasible %lld\n", static_cast<long long>(r.evaluated),
              static_cast<long long>(r.simulated), static_cast<long long>(r.feasible));
  std::printf("  wall %.2f s, CPU %.2f s\n", r.wall_s, r.cpu_s);
  std::printf("  plans per second (all candidates, wall):      %10.0f\n", static_cast<double>(r.evaluated) / r.wall_s);
  std::printf("  plans per CPU-second (all candidates):         %10.0f\n", static_cast<double>(r.evaluated) / r.cpu_s);
  std::printf("  simulated plans per second (wall):             %10.0f\n", static_cast<double>(r.simulated) / r.wall_s);
  std::printf("  simulated plans per CPU-second (target 2000):  %10.0f\n", static_cast<double>(r.simulated) / r.cpu_s);
  if (!r.ranked.empty()) {
    const PlanResult& b = r.ranked.front();
    std::printf("  best: %s mbs %lld %s sp %s %s: %.3f s/step, MFU %.1f%%, %.1f GiB\n", b.plan.to_string().c_str(),
                static_cast<long long>(b.mbs), to_string(b.recompute).c_str(), b.sp ? "on" : "off",
                to_string(b.schedule).c_str(),
                b.step_time_s, 100 * b.mfu, b.peak_gib);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: parsim_bench [--threads N] [--only 70b|405b]\n");
      return 2;
    }
  }
  const BenchCase cases[] = {{"70b", "llama3-70b", 512, 512}, {"405b", "llama3-405b", 16384, 2048}};
  try {
    for (const BenchCase& c : cases)
      if (only.empty() || only == c.name) run_case(c, threads);
  } catch (const InputError& e) {
    std::fprintf(stderr, "parsim_bench: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
