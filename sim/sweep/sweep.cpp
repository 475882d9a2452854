// parsim sim/sweep — the evaluator adapter and the exhaustive parallel search (see sweep.hpp for the design).
#include "sim/sweep/sweep.hpp"

#include "sim/core/error.hpp"
#include "sim/step/analysis.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <ctime>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace parsim {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::Fits: return "fits";
    case Verdict::OutOfMemoryPrecheck: return "out of memory (pre-check)";
    case Verdict::OutOfMemory: return "out of memory (simulated)";
    case Verdict::Error: return "error";
  }
  return "?";
}

bool ranks_before(const PlanResult& a, const PlanResult& b) {
  if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
  if (a.peak_gib != b.peak_gib) return a.peak_gib < b.peak_gib;
  // Ties (rare): the identity as text, so that the order is the same as the listing's.
  const std::string pa = a.plan.to_string(), pb = b.plan.to_string();
  const std::string ra = to_string(a.recompute), rb = to_string(b.recompute);
  const std::string sa = to_string(a.schedule), sb = to_string(b.schedule);
  const std::string ka = to_string(a.stack), kb = to_string(b.stack);
  return std::tie(pa, a.mbs, ra, a.sp, sa, ka) < std::tie(pb, b.mbs, rb, b.sp, sb, kb);
}

std::vector<PlanResult> pareto_front(const std::vector<PlanResult>& ranked) {
  std::vector<PlanResult> out;
  for (const PlanResult& r : ranked)  // ranked by time (then memory): keep each plan leaner than every faster one
    if (out.empty() || r.peak_gib < out.back().peak_gib) out.push_back(r);
  return out;
}

namespace {

void fill_identity(const Scenario& sc, PlanResult& r) {
  r.plan = sc.plan;
  r.seq = sc.train.seq;
  r.gbs = sc.train.gbs;
  r.mbs = sc.train.mbs;
  r.recompute = sc.train.recompute;
  r.schedule = sc.train.schedule;
  r.precision = sc.train.precision;
  r.stack = sc.train.stack;
  r.sp = sc.train.sp;
}

void fill_memory(const MemoryReport& m, PlanResult& r) {
  r.peak_gib = m.peak_gib;
  r.allocated_peak_gib = m.allocated_peak_gib;
  r.required_gib = m.required_gib;
  r.capacity_gib = m.capacity_gib;
  r.fits = m.fits;
}

}  // namespace

PlanResult evaluate_candidate(const Scenario& sc, Evaluator& ev, const SweepOptions& opt, bool* simulated) {
  PlanResult r;
  if (simulated) *simulated = false;
  fill_identity(sc, r);
  try {
    // Cheap pre-check: closed-form lower bound of the simulated peak (sim/step/memory.cpp), on the step costs the
    // evaluator keeps for the simulation (computed once per plan).
    const bool resolved = is_resolved(sc.train);
    const MemoryReport est = resolved ? ev.estimate_memory(sc) : estimate_memory(sc);
    if (!est.fits) {
      fill_memory(est, r);
      r.verdict = Verdict::OutOfMemoryPrecheck;
      r.reason = to_string(r.verdict);
      return r;
    }
    if (simulated) *simulated = true;
    const StepReport rep = resolved ? ev.run_with_kept_costs(sc) : ev.run(sc);
    fill_memory(rep.memory, r);
    r.step_time_s = rep.step_time_s;
    r.mfu = rep.mfu;
    r.hfu = rep.hfu;
    r.tflops_per_gpu = rep.tflops_per_gpu;
    r.tokens_per_s = rep.tokens_per_s;
    r.bubble_fraction = rep.bubble_fraction;
    r.exposed_comm_s = rep.exposed_comm_s;
    r.exposed_by_kind_s = rep.exposed_by_kind_s;
    // Main loss: the largest of the bubble's share of the step and each kind's exposed communication.
    r.main_loss = "bubble";
    double worst = rep.bubble_fraction * rep.step_time_s;
    for (Axis k : kAxes)
      if (rep.exposed_by_kind_s[k] > worst) {
        worst = rep.exposed_by_kind_s[k];
        r.main_loss = axis_name(k);
        r.main_loss += " comm";
      }
    r.main_loss_fraction = rep.step_time_s > 0 ? worst / rep.step_time_s : 0;
    if (opt.tokens > 0) {
      const TrainEstimate t = train_estimate(sc, rep, opt.tokens, opt.price_per_gpu_hour, opt.goodput);
      r.has_train = true;
      r.train_days = t.days;
      r.gpu_hours = t.gpu_hours;
      r.has_cost = t.has_cost;
      r.cost_usd = t.cost_usd;
    }
    if (!rep.memory.fits) {
      r.verdict = Verdict::OutOfMemory;
      r.reason = to_string(r.verdict);
    } else if (rep.cpu_offload && !rep.cpu_offload->host_fits()) {
      // The device fits but the offloaded activations exceed the node's host memory per GPU: it cannot run either.
      r.fits = false;
      r.verdict = Verdict::OutOfMemory;
      r.reason = "out of host memory (cpu offloading)";
    }
  } catch (const InputError& e) {
    r.verdict = Verdict::Error;
    r.reason = "error: ";
    r.reason += e.what();
  } catch (const std::exception& e) {
    r.verdict = Verdict::Error;
    r.reason = "internal error: ";
    r.reason += e.what();
  }
  return r;
}

TrainingConfig sweep_base_training(const ScenarioInput& in, const ModelSpec& m) {
  TrainingConfig t = in.train;
  t.seq = t.seq > 0 ? t.seq : m.seq_len;
  t.gbs = t.gbs > 0 ? t.gbs : sweep_default_gbs(t.seq);
  return t;
}

std::vector<std::string> result_flags(const PlanResult& r) {
  ScenarioInput in;
  in.plan = r.plan.to_string();
  in.train.seq = r.seq;
  in.train.gbs = r.gbs;
  in.train.mbs = r.mbs;
  in.train.recompute = r.recompute;
  in.train.sp = r.sp;
  in.train.sp_auto = r.plan.tp == 1;  // tp > 1: --sp or --no-sp explicitly (predict's default depends on the stack)
  in.train.precision = r.precision;
  in.train.schedule = r.schedule;
  in.train.stack = r.stack;
  return options_to_flags(scenario_options(), in, kUsePerRow, 0, /*include_defaults=*/true);
}

std::vector<Stack> sweep_stacks(const SweepSetup& setup) {
  if (!setup.stacks.empty()) return setup.stacks;
  const Stack s = setup.base.train.stack;
  return {s == Stack::Auto ? Stack::Megatron : s};
}

std::vector<std::string> sweep_base_flags(const ScenarioInput& in) {
  return options_to_flags(scenario_options(), in, kUseSweep, kUsePerRow);
}

namespace {

std::string ints_text(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

// The filters as a stable text, so that merge can tell shards of one sweep from another.
std::string filter_text(const SpaceFilter& f) {
  std::string s;
  auto add = [&](const char* name, const std::string& v) {
    if (v.empty()) return;
    if (!s.empty()) s += ' ';
    s.append(name).append(" ").append(v);
  };
  add("--tp", ints_text(f.tp));
  add("--pp", ints_text(f.pp));
  add("--dp", ints_text(f.dp));
  add("--cp", ints_text(f.cp));
  add("--vpp", ints_text(f.vpp));
  add("--mbs", ints_text(f.mbs));
  add("--ep", ints_text(f.ep));
  add("--etp", ints_text(f.etp));
  std::string z, r, sc;
  auto item = [](std::string& list, const std::string& x) {
    if (!list.empty()) list += ',';
    list += x;
  };
  for (Sharding x : f.sharding) item(z, to_string(x));
  for (Recompute x : f.recompute) item(r, to_string(x));
  for (Schedule x : f.schedule) item(sc, to_string(x));
  add("--sharding", z);
  add("--recompute", r);
  add("--sp", ints_text(f.sp));
  add("--schedule", sc);
  if (f.max_tp_per_node > 0) add("--max-tp-per-node", std::to_string(f.max_tp_per_node));
  return s;
}

std::string stacks_text(const std::vector<Stack>& stacks) {
  std::string s;
  for (Stack k : stacks) {
    if (!s.empty()) s += ',';
    s += to_string(k);
  }
  return s;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

SweepReport run_sweep(const SweepSetup& setup, const SweepOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  require(setup.gpus > 0, "--gpus must be a positive integer, got " + std::to_string(setup.gpus));
  require(opt.shard_count >= 1 && opt.shard_index >= 0 && opt.shard_index < opt.shard_count,
          "--shard " + std::to_string(opt.shard_index) + "/" + std::to_string(opt.shard_count) +
              " is not valid (write i/N with 0 ≤ i < N)");
  require(opt.threads >= 0, "--threads must be a positive integer, got " + std::to_string(opt.threads));

  // Inputs resolved once; every candidate shares them.
  Scenario base;
  if (setup.base.model.empty()) throw InputError("--model is required (a built-in name or a model JSON path)");
  base.model = resolve_model(setup.base.model);
  base.hw = resolve_hardware(setup.base.gpu, setup.base.gpus_per_node);
  base.train = sweep_base_training(setup.base, base.model);
  check_training_on_hardware(base.hw, base.train);
  apply_framework_collectives(base.hw, base.train);

  // Space: the plan space once per stack compared (stack-major, so each stack's candidates keep the space's order).
  const std::vector<Stack> stacks = sweep_stacks(setup);
  // --recompute op is torchtitan's per-op checkpointing, a PyTorch-stack policy: a sweep whose stacks exclude it would
  // drop those candidates without a word.
  const auto& rf = setup.filter.recompute;
  if (std::find(rf.begin(), rf.end(), Recompute::Op) != rf.end() &&
      std::find(stacks.begin(), stacks.end(), Stack::PyTorch) == stacks.end()) {
    std::string msg = "--recompute op is torchtitan's per-op checkpointing on the PyTorch stack, but this sweep compares --stack ";
    msg += stacks_text(stacks);
    msg += " (add --stack pytorch)";
    throw InputError(msg);
  }
  std::vector<Candidate> space;
  for (Stack k : stacks) {
    TrainingConfig t = base.train;
    t.stack = k;
    // --no-rope-fusion on a model it cannot apply to would reject every Megatron candidate: say why once.
    if (auto e = rope_fusion_error(base.model, t)) throw InputError(*e);
    // A hybrid model on a stack that cannot run it would reject every candidate of that stack: say why once.
    if (auto e = hybrid_stack_error(base.model, t)) throw InputError(*e);
    // Activation offloading on a stack or hardware that cannot run it would reject every candidate: say why once.
    if (auto e = cpu_offload_stack_error(base.hw, t)) throw InputError(*e);
    auto part = enumerate_space(base.model, base.hw, setup.gpus, t, setup.filter);
    space.insert(space.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  if (space.empty())
    throw InputError("no valid plan for " + std::to_string(setup.gpus) + " GPUs with " + base.model.name + " (" +
                     std::to_string(base.model.heads) + " heads, " + std::to_string(base.model.layers) +
                     " layers), global batch " + std::to_string(base.train.gbs) + " and these filters: the batch " +
                     "must divide by dp × mbs and tp must divide the heads (try --gbs, --gpus or fewer filters)");

  // This shard's candidates: every shard_count-th, starting at shard_index (round robin spreads the cheap and the
  // expensive corners of the space evenly over shards).
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(opt.shard_index); i < space.size();
       i += static_cast<std::size_t>(opt.shard_count))
    mine.push_back(i);

  if (opt.progress_total) opt.progress_total->store(static_cast<std::int64_t>(mine.size()));

  // Search: evaluate every candidate of the shard in parallel; each writes only its own slot.
  std::vector<PlanResult> results(mine.size());
  std::vector<char> simulated(mine.size(), 0);
  struct Worker {
    // Every plan of the sweep runs on base.hw (sc.hw is never reassigned below): the evaluator may memoise
    // collective costs across the plans of this thread (Evaluator::fix_hardware).
    explicit Worker(const Scenario& s) : sc(s) { ev.fix_hardware(true); }
    Scenario sc;
    Evaluator ev;
  };
  tbb::enumerable_thread_specific<Worker> workers([&base] { return Worker(base); });
  // The Megatron-Core kernels of the hardware, derived once for every plan (a hardware without that profile leaves
  // each Megatron plan to report the error itself).
  std::optional<Hardware> megatron_hw;
  if (base.hw.gpu.kernels.count("megatron")) megatron_hw = megatron_compute(base.hw);
  auto body = [&](const tbb::blocked_range<std::size_t>& range) {
    Worker& w = workers.local();
    w.ev.share_megatron_hardware(megatron_hw ? &*megatron_hw : nullptr);
    for (std::size_t j = range.begin(); j != range.end(); ++j) {
      const Candidate& c = space[mine[j]];
      w.sc.plan = c.plan;
      w.sc.train = c.train;
      bool sim = false;
      results[j] = evaluate_candidate(w.sc, w.ev, opt, &sim);
      simulated[j] = sim ? 1 : 0;
      if (opt.progress) opt.progress->fetch_add(1, std::memory_order_relaxed);
    }
  };
  int threads_used = opt.threads;
  if (opt.threads > 0) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(opt.threads));
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, mine.size(), 4), body);
  } else {
    threads_used = tbb::this_task_arena::max_concurrency();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, mine.size(), 4), body);
  }

  SweepReport rep;
  rep.model = setup.base.model;
  rep.gpu = setup.base.gpu;
  rep.gpus = setup.gpus;
  rep.gpus_per_node = base.hw.node.gpus_per_node;
  rep.seq = base.train.seq;
  rep.gbs = base.train.gbs;
  rep.precision = to_string(base.train.precision);
  rep.space = filter_text(setup.filter);
  rep.space += (rep.space.empty() ? "" : " ") + std::string("--stack ") + stacks_text(stacks);
  if (setup.base.train.compile) rep.space += " --compile";  // the PyTorch stack's plans are priced compiled
  rep.base_flags = sweep_base_flags(setup.base);
  rep.shards = {opt.shard_index};
  rep.shard_index = opt.shard_index;
  rep.shard_count = opt.shard_count;
  rep.evaluated = static_cast<std::int64_t>(mine.size());
  // A plan that could not be simulated leaves the ranking incomplete, so the sweep fails rather than printing a
  // ranking with holes and exit 0 (issue 12: a hardware efficiency of 1e-300 marked every plan "error"). The errors
  // come from the inputs (the clock bound of the lowering, a cost that is not a number), so the one line names the
  // first such plan and its message; an unexpected exception stays an internal error.
  std::int64_t errors = 0;
  const PlanResult* first_error = nullptr;
  for (const PlanResult& r : results)
    if (r.verdict == Verdict::Error && ++errors == 1) first_error = &r;
  if (first_error) {
    const std::string text = std::to_string(errors) + " of " + std::to_string(mine.size()) +
                             " plans could not be simulated; the first, " + first_error->plan.to_string() + " mbs " +
                             std::to_string(first_error->mbs) + " recompute " + to_string(first_error->recompute) +
                             ": " + first_error->reason.substr(first_error->reason.find(": ") + 2);
    if (first_error->reason.rfind("internal error: ", 0) == 0) throw std::runtime_error(text);
    throw InputError(text);
  }
  for (std::size_t j = 0; j < results.size(); ++j) {
    rep.simulated += simulated[j];
    if (results[j].verdict == Verdict::Fits) rep.ranked.push_back(std::move(results[j]));
    else ++rep.rejected[results[j].reason];
  }
  rep.feasible = static_cast<std::int64_t>(rep.ranked.size());
  std::sort(rep.ranked.begin(), rep.ranked.end(), ranks_before);
  rep.pareto = pareto_front(rep.ranked);
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  rep.cpu_s = cpu_seconds() - cpu0;
  rep.threads = threads_used;
  return rep;
}

}  // namespace parsim
