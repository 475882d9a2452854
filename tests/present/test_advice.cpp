// sim/present/advice: the notes follow from the simulated numbers (shares, group placement, the memory model's
// savings), and plans side by side decompose their difference in step time.
#include "sim/present/advice.hpp"

#include "plans/scenario.hpp"
#include "sim/core/text.hpp"
#include "sim/step/evaluate.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace parsim;

namespace {

Compared run(const std::string& model, const std::string& plan, int gbs = 0, const std::string& gpu = "h100") {
  ScenarioInput in;
  in.model = model;
  in.plan = plan;
  in.gpu = gpu;
  in.train.gbs = gbs;
  in.train.sp = false;  // the numbers below are derived without sequence parallelism (Megatron's default for
  in.train.sp_auto = false;  // tp > 1 is SP since the fidelity work: say --no-sp explicitly)
  Compared c{resolve_scenario(in), {}};
  c.report = evaluate(c.scenario);
  return c;
}

bool has_note(const Advice& a, const std::string& part) {
  for (const auto& n : a.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("advice names the exposed communication by share, collective and placement, and the knob") {
  // tp8pp2dp4 for llama2-7b on 8-GPU H100 nodes: TP all-reduces (no --sp) inside a node are exposed; the note states
  // their share of the step as the report has it (exposed tp / step time) and suggests --sp.
  const Compared c = run("llama7b", "tp8pp2dp4");
  const double share = c.report.exposed_by_kind_s[Axis::tp] / c.report.step_time_s;
  REQUIRE(share >= 0.10);
  const Advice a = advise(c.scenario, c.report);
  CHECK(has_note(a, fmt_fixed(100 * share, 0) + " % of the step is exposed tp all-reduce within a node"));
  CHECK(has_note(a, "try --sp"));
  CHECK(a.remedies.empty());  // it fits: no memory remedies
  // tp16 on 8-GPU nodes puts the TP group across 2 nodes (group_shape): the advice is to keep tp ≤ 8.
  const Compared x = run("llama3-8b", "tp16dp4", 64);
  REQUIRE(x.report.exposed_by_kind_s[Axis::tp] / x.report.step_time_s >= 0.10);
  const Advice b = advise(x.scenario, x.report);
  CHECK(has_note(b, "exposed tp all-reduce across nodes"));
  CHECK(has_note(b, "try tp ≤ 8"));
}

TEST_CASE("advice for a plan that does not fit: the deficit and what each remedy frees") {
  // llama2-7b as plain DDP on 8 H100 (dp8, no sharding): every GPU holds 2-byte weights, gradients and 12 bytes of
  // fp32 master weights and Adam moments per parameter: 6.74e9 × 16 B ≈ 100 GiB > 79 GiB, so it does not fit.
  const Compared c = run("llama7b", "dp8", 8);
  REQUIRE_FALSE(c.report.memory.fits);
  const Advice a = advise(c.scenario, c.report);
  // The deficit is what the run needs (live tensors + context + NCCL: required_gib, the fit verdict) over the device.
  const double deficit = c.report.memory.required_gib - c.report.memory.capacity_gib;
  REQUIRE_FALSE(a.notes.empty());
  CHECK(a.notes.front().rfind("does not fit by " + fmt_fixed(deficit, 1) + " GiB", 0) == 0);
  // ZeRO-1 shards the optimizer states over dp = 8: the simulated dp8zero1 holds 7/8 fewer of them (allocated
  // memory), and what the run requires falls by the same (context and NCCL do not change). The remedy's saving
  // (estimate_memory of the changed scenario) is the simulated difference of the two requirements.
  const Compared z = run("llama7b", "dp8zero1", 8);
  CHECK(c.report.memory.allocated_peak_gib - z.report.memory.allocated_peak_gib ==
        doctest::Approx(c.report.memory.optimizer_gib * 7.0 / 8.0).epsilon(0.01));
  const MemoryRemedy* zero1 = nullptr;
  for (const auto& r : a.remedies)
    if (r.change == "zero1") zero1 = &r;
  REQUIRE(zero1);
  CHECK(zero1->freed_gib == doctest::Approx(c.report.memory.required_gib - z.report.memory.required_gib).epsilon(0.01));
  CHECK(zero1->enough == z.report.memory.fits);
  CHECK(zero1->enough == (zero1->freed_gib >= deficit));
  // Remedies are listed largest saving first.
  for (std::size_t i = 1; i < a.remedies.size(); ++i) CHECK(a.remedies[i - 1].freed_gib >= a.remedies[i].freed_gib);
  // torchtitan's per-op checkpointing is offered on the PyTorch stack only (the Megatron DDP plan above has none) and
  // frees what the same plan with --recompute op no longer requires.
  for (const auto& r : a.remedies) CHECK(r.change != "--recompute op");
  Scenario pt = c.scenario;
  pt.train.stack = Stack::PyTorch;
  const double before = estimate_memory(pt).required_gib;
  Scenario op = pt;
  op.train.recompute = Recompute::Op;
  const Advice ap = advise(pt, c.report);
  const MemoryRemedy* per_op = nullptr;
  for (const auto& r : ap.remedies)
    if (r.change == "--recompute op") per_op = &r;
  REQUIRE(per_op);
  CHECK(per_op->freed_gib == doctest::Approx(before - estimate_memory(op).required_gib).epsilon(1e-9));
}

TEST_CASE("advice for a plan that does not fit: splitting the layers further (tp × 2, pp × 2)") {
  // llama2-7b on ONE H100 (tp1pp1dp1, plain DDP): 6.74e9 parameters × 18 B (2-byte weights, 4-byte fp32 main
  // gradients, 12 B of fp32 master weights and Adam moments) = 121 GB ≈ 113 GiB of model state alone > 79.2 GiB.
  // With dp = 1 no sharding and no recompute helps enough; TP 2 or PP 2 halves the per-GPU model state (≈ 56 GiB), on
  // twice the GPUs since there is no DP to halve.
  const Compared one = run("llama7b", "tp1pp1dp1", 1);
  REQUIRE_FALSE(one.report.memory.fits);
  const Advice a = advise(one.scenario, one.report);
  auto find = [](const Advice& adv, const std::string& change) -> const MemoryRemedy* {
    for (const auto& r : adv.remedies)
      if (r.change == change) return &r;
    return nullptr;
  };
  for (const std::string& change : {std::string("tp2 (2× the GPUs)"), std::string("pp2 (2× the GPUs)")}) {
    CAPTURE(change);
    const MemoryRemedy* r = find(a, change);
    REQUIRE(r);
    // What it frees is estimate_memory of the split plan against this one's (the remedy's definition), about half of
    // the 113 GiB model state.
    Scenario split = one.scenario;
    (change[0] == 't' ? split.plan.tp : split.plan.pp) = 2;
    CHECK(r->freed_gib == doctest::Approx(estimate_memory(one.scenario).required_gib -
                                          estimate_memory(split).required_gib).epsilon(1e-9));
    CHECK(r->freed_gib > 0.45 * 113.0);
    CHECK(r->enough);
  }
  // On 8 GPUs (dp8) the split keeps the GPU count: DP halves (tp2 × dp4, pp2 × dp4).
  const Compared eight = run("llama7b", "dp8", 8);
  const Advice b = advise(eight.scenario, eight.report);
  CHECK(find(b, "tp2 (dp4)"));
  CHECK(find(b, "pp2 (dp4)"));
  // TP never grows past the NVLink domain (8 GPUs per H100 node): llama3-70b as tp8pp2dp4 holds 70.6e9 / 16 ≈ 4.4e9
  // parameters per GPU × 18 B ≈ 79 GB ≈ 74 GiB of model state plus activations > 79.2 GiB, and is offered pp4, not tp16.
  const Compared wide = run("llama3-70b", "tp8pp2dp4", 64);
  REQUIRE_FALSE(wide.report.memory.fits);
  const Advice w = advise(wide.scenario, wide.report);
  CHECK_FALSE(find(w, "tp16 (dp2)"));
  CHECK(find(w, "pp4 (dp2)"));
}

TEST_CASE("the largest micro-batch that fits: it fits, the next candidate does not") {
  // tp8pp2dp4, gbs 64: 16 sequences per replica; micro-batches 1, 2, 4, 8, 16 divide it.
  const Compared c = run("llama7b", "tp8pp2dp4", 64);
  const Advice a = advise(c.scenario, c.report);
  REQUIRE(a.max_mbs >= 1);
  auto peak = [&](std::int64_t mbs) {
    Scenario s = c.scenario;
    s.train.mbs = mbs;
    // What the run requires (the fit verdict's required_gib), anchored at the simulated plan as advice.cpp does.
    return c.report.memory.required_gib + estimate_memory(s).required_gib - estimate_memory(c.scenario).required_gib;
  };
  CHECK(peak(a.max_mbs) <= c.report.memory.capacity_gib);
  if (a.max_mbs < 16) CHECK(peak(a.max_mbs * 2) > c.report.memory.capacity_gib);
}

TEST_CASE("compare: the best plan fits; the others' difference is split into its parts") {
  const std::vector<Compared> plans = {run("llama7b", "tp8pp2dp4"), run("llama7b", "tp4pp4dp4"),
                                       run("llama7b", "tp2pp1dp32")};
  const std::size_t best = best_of(plans);
  for (const auto& p : plans)
    if (p.report.memory.fits) CHECK(plans[best].report.step_time_s <= p.report.step_time_s);
  CHECK(versus_best(plans, best, best).find("the fastest") != std::string::npos);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (i == best) continue;
    const std::string line = versus_best(plans, i, best);
    // The line starts with the plan, then the signed difference in step time against the best.
    CHECK(line.rfind(plans[i].scenario.plan.to_string() + ": +", 0) == 0);
    CHECK(line.find("vs " + plans[best].scenario.plan.to_string()) != std::string::npos);
  }
  const std::string table = compare_table(plans);
  for (const auto& p : plans) CHECK(table.find(p.scenario.plan.to_string()) != std::string::npos);
  CHECK(table.find("where the time goes") != std::string::npos);
  const auto j = compare_json(plans);
  CHECK(j["plans"].size() == 3);
  CHECK(j["best"] == plans[best].scenario.plan.to_string());
  CHECK(j["plans"][0]["step_time_s"].get<double>() == plans[0].report.step_time_s);
}

TEST_CASE("advice for eager PyTorch: what --compile would save, as the compiled plan simulates") {
  // llama2-7b FSDP on 8 H100, PyTorch stack, eager: the same plan with --compile (fused norms, RoPE and SwiGLU;
  // costs/layer.cpp pytorch_eager_work) is shorter by more than 3 % of the step, and the note states that share.
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = "dp8fsdp";
  in.train.seq = 4096;
  in.train.gbs = 16;
  const Scenario eager = resolve_scenario(in);
  REQUIRE(eager.train.stack == Stack::PyTorch);
  const StepReport r = evaluate(eager);
  in.train.compile = true;
  const double compiled = evaluate(resolve_scenario(in)).step_time_s;
  const double share = (r.step_time_s - compiled) / r.step_time_s;
  REQUIRE(share >= 0.03);
  const Advice a = advise(eager, r);
  CHECK(has_note(a, "--compile"));
  CHECK(has_note(a, "would take " + fmt_fixed(100 * share, share < 0.1 ? 1 : 0) + " % off the step"));
  // Compiled already, or on the Megatron stack: no such note.
  const Scenario sc = resolve_scenario(in);
  CHECK_FALSE(has_note(advise(sc, evaluate(sc)), "--compile"));
  const Compared m = run("llama7b", "tp8pp2dp4");
  CHECK_FALSE(has_note(advise(m.scenario, m.report), "--compile"));
}

TEST_CASE("advice on Hopper/Blackwell PyTorch: what SDPA's cuDNN backend (--attention cudnn) would change") {
  // llama3-8b FSDP on 8 B200, PyTorch stack, compiled: attention is priced on FlashAttention-2's curves (which cannot
  // use Blackwell's tcgen05 tensor cores); the same plan with --attention cudnn is shorter by ≥ 3 %, and the note
  // states that share. The Megatron stack already runs cuDNN: no such note.
  ScenarioInput in;
  in.model = "llama3-8b";
  in.plan = "dp8fsdp";
  in.gpu = "b200";
  in.train.seq = 8192;
  in.train.gbs = 16;
  in.train.mbs = 2;
  in.train.compile = true;
  const Scenario fa2 = resolve_scenario(in);
  const StepReport r = evaluate(fa2);
  Scenario cud = fa2;
  cud.train.attention_cudnn = true;
  const double share = (r.step_time_s - evaluate(cud).step_time_s) / r.step_time_s;
  REQUIRE(share >= 0.03);
  const Advice a = advise(fa2, r);
  CHECK(has_note(a, "--attention cudnn takes " + fmt_fixed(100 * share, share < 0.1 ? 1 : 0) + " % off the step"));
  CHECK_FALSE(has_note(advise(cud, evaluate(cud)), "--attention cudnn"));
  const Compared m = run("llama7b", "tp8pp2dp4");
  CHECK_FALSE(has_note(advise(m.scenario, m.report), "--attention cudnn"));
}
