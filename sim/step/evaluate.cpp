// evaluate(): costs → lowering → engine → analysis, with the periodic steady state extended where it holds.
#include "sim/step/evaluate.hpp"

#include "sim/core/text.hpp"
#include "sim/step/analysis.hpp"
#include "sim/step/lower/builder.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

namespace parsim {

struct Evaluator::State {
  ExecutedStep ex;
  engine::Executor executor;
  StepCosts costs;
  std::vector<MemorySample> samples;
  lowering::Scratch lowering;
  Scenario shortened;  // the steady-state runs' scenario (assigned, not constructed: keeps its allocations)
  const Hardware* megatron_hw = nullptr;  // share_megatron_hardware()
  // fix_hardware(): collective costs memoised across plans, one memo per hardware — sc.hw (the same for every
  // scenario, the caller's promise) and *megatron_hw (cleared whenever that pointer changes).
  bool fixed_hw = false;
  PrecheckMemo precheck;  // the memory pre-check's walk of the pipeline order, by its inputs (exact: analysis.hpp)
  CollectiveMemo coll_plain, coll_megatron;
  CollectiveMemos memos() {
    return fixed_hw ? CollectiveMemos{&coll_plain, megatron_hw ? &coll_megatron : nullptr} : CollectiveMemos{};
  }
  // shortened = sc — but under fix_hardware, once it holds the promised hardware, without copying the Hardware again
  // (its provenance map alone costs more than the rest of the copy): the other members are assigned, the hardware is
  // equal by the promise.
  bool shortened_has_hw = false;
  void assign_shortened(const Scenario& sc) {
    if (!fixed_hw || !shortened_has_hw) {
      shortened = sc;
      shortened_has_hw = fixed_hw;
      return;
    }
    const auto& [model, hw, plan, train] = sc;  // (a compile error when Scenario gains a member: assign it here too)
    (void)hw;
    shortened.model = model;
    shortened.plan = plan;
    shortened.train = train;
  }
  StepCosts costs_of(const Scenario& sc) {
    const CollectiveMemos m = memos();
    return compute_step_costs(sc, megatron_hw, &m);
  }
};

Evaluator::Evaluator() : st_(std::make_unique<State>()) {}
Evaluator::~Evaluator() = default;

namespace {

// The report's warnings, most important first: a plan that does not fit says so before anything else (issue 9 item
// 8: the headline of the table and the first `warnings` entry, not only the memory line), then the plan's remarks.
std::vector<std::string> report_warnings(const Scenario& sc, const StepReport& r) {
  std::vector<std::string> w;
  if (!r.memory.fits)
    w.push_back(does_not_fit_message(sc, r.memory));
  for (auto& x : plan_warnings(sc.plan, sc.model, sc.hw, sc.train)) w.push_back(std::move(x));
  return w;
}

}  // namespace

StepReport Evaluator::run(const Scenario& sc, const EvalOptions& opt) { return run_impl(sc, opt, false); }

MemoryReport Evaluator::estimate_memory(const Scenario& sc) {
  if (!is_resolved(sc.train)) throw std::logic_error("Evaluator::estimate_memory: the scenario is not resolved");
  st_->costs = st_->costs_of(sc);
  return estimate_memory_from_costs(sc, st_->costs, &st_->lowering.schedules, &st_->precheck);
}

void Evaluator::share_megatron_hardware(const Hardware* megatron_hw) {
  if (megatron_hw != st_->megatron_hw) st_->coll_megatron.clear();  // (its memo served the previous one)
  st_->megatron_hw = megatron_hw;
}

void Evaluator::fix_hardware(bool same) {
  st_->fixed_hw = same;
  st_->shortened_has_hw = false;
  st_->coll_plain.clear();
  st_->coll_megatron.clear();
  st_->lowering.collectives = same ? &st_->coll_plain : nullptr;
}

std::pair<std::uint64_t, std::uint64_t> Evaluator::collective_memo_use() const {
  return {st_->coll_plain.hits() + st_->coll_megatron.hits(), st_->coll_plain.misses() + st_->coll_megatron.misses()};
}

void Evaluator::reuse_graphs(bool on) { st_->lowering.shapes.enabled = on; }

std::pair<std::uint64_t, std::uint64_t> Evaluator::graph_reuse() const {
  return {st_->lowering.shapes.refills, st_->lowering.shapes.builds};
}

StepReport Evaluator::run_with_kept_costs(const Scenario& sc, const EvalOptions& opt) {
  return run_impl(sc, opt, true);
}

namespace {
// --cpu-offloading-num-layers: what moves and what the step waits for it — every micro-batch's forward and backward
// waits (costs/offload.cpp), so linear in the micro-batches whether the step was extended or not.
void add_offload_report(const Scenario& sc, const StepCosts& k, StepReport& r) {
  if (sc.train.cpu_offload_layers <= 0) return;
  CpuOffloadReport o;
  o.layers = k.offload.layers;
  o.gib_per_microbatch = k.offload.bytes / kGiB;
  o.link_gbytes_per_s = sc.hw.node.host_link_gbytes_per_s;
  o.exposed_s = static_cast<double>(sc.train.micro_batches(sc.plan)) * (k.offload.fwd_wait_s + k.offload.bwd_wait_s);
  o.host_capacity_gib = sc.hw.node.host_memory_gbytes_per_gpu * kGB / kGiB;
  r.cpu_offload = o;
  // Pinned host buffers the size of one micro-batch's offloaded activations (Transformer Engine allocates a pinned
  // CPU tensor per offloaded tensor and frees it after the reload; with pp 1 one micro-batch is in flight at a time).
  // More than the node's DRAM per GPU cannot run: the first warning after a device that does not fit.
  if (!o.host_fits()) {
    std::ostringstream m;
    m << "HOST MEMORY: --cpu-offloading-num-layers " << o.layers << " puts " << fmt_fixed(o.gib_per_microbatch, 1)
      << " GiB per GPU in host memory, more than the " << fmt_fixed(o.host_capacity_gib, 1)
      << " GiB per GPU the node has (node.host_memory_gbytes_per_gpu " << fmt_num(sc.hw.node.host_memory_gbytes_per_gpu, 6)
      << " GB): offload fewer layers, or a smaller --mbs";
    const auto at = r.warnings.begin() + (r.memory.fits ? 0 : 1);
    r.warnings.insert(at, m.str());
  }
}
}  // namespace

StepReport Evaluator::run_impl(const Scenario& sc, const EvalOptions& opt, bool kept_costs) {
  if (!is_resolved(sc.train)) {
    Scenario r = sc;
    r.train = resolve_training(sc.plan, sc.model, sc.train);
    return run(r, opt);
  }
  const std::int64_t M = sc.train.micro_batches(sc.plan);
  if (!opt.schedule && steady_state_extendable(sc, opt.keep_timeline, M)) {
    const auto [m1, m2] = steady_state_runs(sc);
    // The same scenario with m1, then m2 micro-batches (one copy kept in the evaluator's state).
    Scenario& shortened = st_->shortened;
    st_->assign_shortened(sc);
    shortened.train.gbs = m1 * sc.plan.dp * sc.train.mbs;
    // (compute_step_costs does not read the batch: the second run keeps the first one's costs). The memory of the
    // first run is never read — extend_steady_state takes memory from the second, whose warm-up holds the peak — so
    // the first run skips timeline_memory (the same report, fewer instructions per plan).
    const StepReport a = simulate(shortened, opt, kept_costs, /*memory=*/false);
    shortened.train.gbs = m2 * sc.plan.dp * sc.train.mbs;
    const StepReport b = simulate(shortened, opt, true);
    StepReport r = extend_steady_state(sc, a, b, m1, m2, M);
    r.warnings = report_warnings(sc, r);
    add_offload_report(sc, st_->costs, r);
    return r;
  }
  StepReport rep = simulate(sc, opt, kept_costs);
  rep.warnings = report_warnings(sc, rep);
  add_offload_report(sc, st_->costs, rep);
  return rep;
}

namespace {
// "stage 1 forward of chunk 3, micro-batch 5, layers 12–13" and the like, for the deadlock report.
std::string name_task(const void* ctx, engine::TaskId t) {
  const Lowered& lw = *static_cast<const Lowered*>(ctx);
  const TaskInfo& ti = lw.info[lw.graph.tag(t)];
  static constexpr const char* kNames[] = {"forward",          "backward",           "backward-input",
                                           "backward-weight",  "pipeline receive",   "gradient reduction",
                                           "parameter gather", "optimizer step",     "host work"};
  std::string r = "stage " + std::to_string(ti.stage) + " ";
  r += ti.kind == TaskKind::HostWork ? host_part_name(ti.host) : kNames[static_cast<int>(ti.kind)];
  if (ti.kind != TaskKind::HostWork && ti.kind != TaskKind::Optimizer) r += " of chunk " + std::to_string(ti.chunk);
  if (ti.microbatch >= 0) r += ", micro-batch " + std::to_string(ti.microbatch);
  if (ti.kind <= TaskKind::BackwardWeight)
    r += ", layers " + std::to_string(ti.layer_begin) + "-" + std::to_string(ti.layer_end - 1);
  return r + " (task " + std::to_string(t) + ")";
}
}  // namespace

StepReport Evaluator::simulate(const Scenario& sc, const EvalOptions& opt, bool kept_costs, bool memory) {
  StepReport rep;
  if (!kept_costs) st_->costs = st_->costs_of(sc);
  lowering::lower_step(sc, st_->costs, st_->ex.lowered, opt.schedule, st_->lowering);
  try {
    st_->executor.run(st_->ex.lowered.graph, st_->ex.timeline);
  } catch (const engine::DeadlockError& e) {
    // A lowering bug, not bad input: name the stuck tasks so that the cycle can be found (and reported).
    throw std::logic_error(
        engine::deadlock_message(e.remaining(), e.tasks(), e.stuck(), &name_task, &st_->ex.lowered));
  }
  compute_metrics(sc, st_->costs, st_->ex, rep);
  st_->samples.clear();
  if (memory)
    timeline_memory(sc, st_->costs, st_->ex, rep, opt.keep_timeline ? &st_->samples : nullptr);
  return rep;
}

std::string does_not_fit_message(const Scenario& sc, const MemoryReport& m) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "DOES NOT FIT: stage %d needs %.2f GiB (%.2f GiB of live tensors + CUDA context and NCCL buffers) but "
                "one %s has %.2f GiB",
                m.peak_stage, m.required_gib, m.allocated_peak_gib, sc.hw.gpu.name.c_str(), m.capacity_gib);
  return buf;
}

const ExecutedStep& Evaluator::executed() const { return st_->ex; }
const StepCosts& Evaluator::costs() const { return st_->costs; }
const std::vector<MemorySample>& Evaluator::memory_samples() const { return st_->samples; }

StepReport evaluate(const Scenario& sc, const EvalOptions& opt) {
  Evaluator ev;
  return ev.run(sc, opt);
}

MemoryReport estimate_memory(const Scenario& sc) {
  if (!is_resolved(sc.train)) {
    Scenario r = sc;
    r.train = resolve_training(sc.plan, sc.model, sc.train);
    return estimate_memory(r);
  }
  return estimate_memory_from_costs(sc, compute_step_costs(sc));
}

TrainEstimate train_estimate(const Scenario& sc, const StepReport& r, double tokens, double price, double goodput) {
  TrainEstimate t;
  t.tokens = tokens;
  t.goodput = goodput;
  const double tokens_per_step = static_cast<double>(sc.train.gbs * sc.train.seq);
  const double wall_s = std::ceil(tokens / tokens_per_step) * r.step_time_s / goodput;
  t.days = wall_s / 86400.0;
  t.gpu_hours = wall_s / 3600.0 * sc.plan.world();
  if (price > 0) {
    t.cost_usd = t.gpu_hours * price;
    t.has_cost = true;
  }
  return t;
}

}  // namespace parsim
