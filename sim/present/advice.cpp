// parsim sim/present — advice from the simulated numbers, and plans side by side (advice.hpp).
#include "sim/present/advice.hpp"

#include "plans/plan.hpp"
#include "plans/sharding.hpp"
#include "sim/core/text.hpp"
#include "sim/present/render.hpp"
#include "sim/step/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace parsim {

namespace {

// Terminal columns of a UTF-8 string (one per code point).
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string pct(double f) { return fmt_fixed(100 * f, f < 0.1 ? 1 : 0) + " %"; }

std::string secs(double s) {
  const double a = std::fabs(s);
  if (a >= 1) return fmt_fixed(s, 2) + " s";
  if (a >= 1e-3) return fmt_fixed(s * 1e3, 1) + " ms";
  return fmt_fixed(s * 1e6, 0) + " µs";
}

GroupKind group_of(Axis a) {
  switch (a) {
    case Axis::tp: return GroupKind::TP;
    case Axis::cp: return GroupKind::CP;
    case Axis::ep: return GroupKind::EP;
    case Axis::dp: return GroupKind::DP;
    case Axis::pp: return GroupKind::PP;
  }
  return GroupKind::TP;
}

int degree(const Plan& p, Axis a) {
  switch (a) {
    case Axis::tp: return p.tp;
    case Axis::cp: return p.cp;
    case Axis::ep: return p.ep;
    case Axis::dp: return p.dp;
    case Axis::pp: return p.pp;
  }
  return 1;
}

bool crosses_nodes(const Scenario& sc, Axis a) {
  if (degree(sc.plan, a) <= 1) return false;
  return group_shape(sc.plan, group_of(a), sc.hw.node.gpus_per_node).nodes > 1;
}

// Peak memory of `sc` after `change`, by the simulator's closed-form memory model (estimate_memory); NaN when the
// changed scenario is not a valid plan.
template <class Change>
double peak_with(const Scenario& sc, Change change) {
  Scenario s = sc;
  change(s);
  try {
    return estimate_memory(s).required_gib;
  } catch (const InputError&) {
    return std::nan("");
  }
}

// Step time of `sc` after `change`, simulated (evaluate).
template <class Change>
double step_with(const Scenario& sc, Change change) {
  Scenario s = sc;
  change(s);
  return evaluate(s).step_time_s;
}

}  // namespace

std::string axis_comm_text(const Scenario& sc, Axis a) {
  std::string coll;
  switch (a) {
    case Axis::tp: coll = sc.train.sp ? "all-gather / reduce-scatter" : "all-reduce"; break;
    case Axis::cp: coll = "K/V exchange"; break;
    case Axis::ep: coll = "all-to-all"; break;
    case Axis::dp: {
      const ShardingTraits& t = sharding_traits(sc.plan.sharding);
      coll = t.shards_params ? "all-gather / reduce-scatter" : to_string(t.grad_collective);
      std::replace(coll.begin(), coll.end(), '_', '-');
      break;
    }
    case Axis::pp: coll = "send / recv"; break;
  }
  return std::string(axis_name(a)) + " " + coll + (crosses_nodes(sc, a) ? " across nodes" : " within a node");
}

Advice advise(const Scenario& sc, const StepReport& r) {
  Advice out;
  const Plan& p = sc.plan;
  const TrainingConfig& t = sc.train;
  const int gpn = sc.hw.node.gpus_per_node;
  const double step = r.step_time_s;
  struct Note {
    double cost_s;
    std::string text;
  };
  std::vector<Note> notes;
  if (step > 0) {
    for (Axis a : kAxes) {
      const double e = r.exposed_by_kind_s[a], f = e / step;
      const double threshold = a == Axis::pp ? 0.05 : 0.10;
      if (f < threshold) continue;
      std::string head = pct(f) + " of the step is exposed " + axis_comm_text(sc, a) + " (" + secs(e) + ")";
      std::string hint;
      switch (a) {
        case Axis::tp:
          if (crosses_nodes(sc, a)) hint = "keep tensor parallelism inside a node: try tp ≤ " + std::to_string(gpn);
          else if (!t.sp) hint = "try --sp (sequence parallelism lets Megatron overlap TP communication with GEMMs)";
          else if (!t.tp_comm_overlap) hint = "try --tp-comm-overlap";
          else hint = "try a smaller tp (more pp or dp)";
          break;
        case Axis::cp:
          hint = "try a smaller cp (context parallelism pays off only when the sequence per rank stays long)";
          break;
        case Axis::ep:
          hint = crosses_nodes(sc, a) ? "keep expert parallelism inside a node: try ep ≤ " + std::to_string(gpn)
                                      : "try a smaller ep";
          break;
        case Axis::dp:
          if (sharding_traits(p.sharding).shards_params)
            hint = "parameters are gathered every micro-batch: try zero1/zero2, or hsdp with the shard group inside a "
                   "node";
          else if (!t.overlap_grad_reduce)
            hint = "overlap the gradient reduction with the backward (drop --no-overlap-grad-reduce)";
          else
            hint = "fewer, larger steps hide it: a larger --gbs, or more tp/pp and a smaller dp";
          break;
        case Axis::pp:
          hint = "pipeline sends wait on the network: fewer stages, or stages inside a node";
          break;
      }
      notes.push_back({e, head + ": " + hint});
    }
    const double bubble_s = r.bubble_fraction * step;
    if (p.pp > 1 && r.bubble_fraction >= 0.10) {
      std::string hint = "more micro-batches per replica (now " + std::to_string(r.microbatches) +
                         ": a larger --gbs or a smaller --mbs)";
      if (p.vpp == 1) hint += ", interleaving (vpp > 1)";
      hint += " or fewer stages";
      notes.push_back({bubble_s, pct(r.bubble_fraction) + " of the step is pipeline bubble (" + secs(bubble_s) +
                                     " idle per stage): " + hint});
    }
    // A setting of the PyTorch stack the run may not have used: the same plan simulated with it; noted when it takes
    // ≥ 3 % off the step.
    auto saving = [&](auto change, const std::string& what) {
      const double saved = step - step_with(sc, change);
      if (saved >= 0.03 * step) notes.push_back({saved, what + pct(saved / step) + " off the step (" + secs(saved) + ")"});
    };
    // Run eagerly: what torch.compile's fused kernels would save (costs/layer.cpp pytorch_eager_work, costs/host.cpp).
    if (t.stack == Stack::PyTorch && !t.compile)
      saving([](Scenario& s) { s.train.compile = true; },
             "eager PyTorch ops: --compile (torch.compile per block, fused norms, RoPE and activation) would take ");
    // scaled_dot_product_attention on Hopper/Blackwell: its cuDNN backend is the default from PyTorch 2.9 with
    // cuDNN > 9.15 (bundled from 2.11; pytorch/pytorch#162073), FlashAttention-2 before: say what it changes.
    const GpuArch arch = sc.hw.gpu.arch;
    if (t.stack == Stack::PyTorch && t.flash_attention && !t.flash_v1 && !t.attention_cudnn &&
        (arch == GpuArch::Hopper || arch == GpuArch::Blackwell))
      saving([](Scenario& s) { s.train.attention_cudnn = true; },
             "attention priced as scaled_dot_product_attention's FlashAttention-2 backend; on PyTorch ≥ 2.11 (cuDNN > "
             "9.15) it runs cuDNN's fused attention on this GPU: --attention cudnn takes ");
  }
  std::stable_sort(notes.begin(), notes.end(), [](const Note& a, const Note& b) { return a.cost_s > b.cost_s; });
  for (auto& n : notes) out.notes.push_back(std::move(n.text));

  // Memory: what each usual remedy frees (estimate_memory of the changed scenario against this one's).
  const MemoryReport& m = r.memory;
  const double base = estimate_memory(sc).required_gib;
  auto remedy = [&](const std::string& name, auto change) {
    const double after = peak_with(sc, change);
    if (!std::isfinite(after)) return;
    const double freed = base - after;
    if (freed < 0.05) return;
    out.remedies.push_back({name, freed, m.required_gib - freed <= m.capacity_gib});
  };
  if (!m.fits) {
    if (t.recompute == Recompute::None)
      remedy("selective recompute", [](Scenario& s) { s.train.recompute = Recompute::Selective; });
    if (t.recompute != Recompute::Full) remedy("full recompute", [](Scenario& s) { s.train.recompute = Recompute::Full; });
    // torchtitan's per-op checkpointing, where the stack and the layers admit it (plans/validate.cpp).
    if (t.recompute != Recompute::Op && t.recompute != Recompute::Full) {
      TrainingConfig op = t;
      op.recompute = Recompute::Op;
      if (!recompute_op_error(sc.model, op)) remedy("--recompute op", [](Scenario& s) { s.train.recompute = Recompute::Op; });
    }
    if (p.dp > 1 && p.sharding == Sharding::None) remedy("zero1", [](Scenario& s) { s.plan.sharding = Sharding::Zero1; });
    if (p.dp > 1 && (p.sharding == Sharding::None || p.sharding == Sharding::Zero1))
      remedy("zero3 / fsdp", [](Scenario& s) { s.plan.sharding = Sharding::Zero3; });
    if (p.tp > 1 && !t.sp) remedy("--sp", [](Scenario& s) { s.train.sp = true; });
    if (t.mbs > 1) remedy("--mbs 1", [](Scenario& s) { s.train.mbs = 1; });
    // The layers split twice as far: TP × 2 (within the NVLink domain: TP across nodes exposes its traffic on the
    // NICs) or PP × 2, at the same GPU count where DP halves, else with twice the GPUs. Offered where the changed
    // plan is valid for the model (validate_plan: heads, layers, divisibility) — the plain-DDP dp1 7B on one 80 GB GPU
    // has no other remedy. The settings stay as resolved (SP as it was: what TP 2 frees with SP, it frees more).
    auto split = [&](bool by_tp) {
      Plan q = p;
      (by_tp ? q.tp : q.pp) *= 2;
      if (by_tp && q.tp > sc.hw.node.gpus_per_node) return;
      const bool same_gpus = q.dp % 2 == 0;
      if (same_gpus) q.dp /= 2;
      try {
        validate_plan(q, sc.model, sc.hw, t);
      } catch (const InputError&) {
        return;
      }
      const std::string name = (by_tp ? "tp" + std::to_string(q.tp) : "pp" + std::to_string(q.pp)) +
                               (same_gpus ? " (dp" + std::to_string(q.dp) + ")" : " (2× the GPUs)");
      remedy(name, [q](Scenario& s) { s.plan = q; });
    };
    split(true);
    split(false);
    std::stable_sort(out.remedies.begin(), out.remedies.end(),
                     [](const MemoryRemedy& a, const MemoryRemedy& b) { return a.freed_gib > b.freed_gib; });
    std::string line = "does not fit by " + fmt_fixed(m.required_gib - m.capacity_gib, 1) + " GiB (" +
                       fmt_fixed(m.required_gib, 1) + " of " + fmt_fixed(m.capacity_gib, 1) + " GiB on stage " +
                       std::to_string(m.peak_stage) + ")";
    if (out.remedies.empty()) {
      line += ": more GPUs per replica (tp or pp)";
    } else {
      line += ":";
      for (std::size_t i = 0; i < out.remedies.size() && i < 4; ++i)
        line += std::string(i ? "," : "") + " " + out.remedies[i].change + " frees " +
                fmt_fixed(out.remedies[i].freed_gib, 1) + " GiB" + (out.remedies[i].enough ? " (enough)" : "");
    }
    out.notes.insert(out.notes.begin(), line);
  }
  // The largest micro-batch that fits: powers of two and the divisors of gbs / dp up to it, by estimate_memory.
  const std::int64_t per_replica = t.gbs / std::max(1, p.dp);
  for (std::int64_t mbs = 1; mbs <= per_replica; ++mbs) {
    if (per_replica % mbs) continue;
    const std::int64_t micro = per_replica / mbs;
    if (p.vpp > 1 && micro % p.pp) continue;  // interleaving needs m % pp == 0 (Megatron)
    const double peak = peak_with(sc, [mbs](Scenario& s) { s.train.mbs = mbs; });
    if (!std::isfinite(peak)) continue;
    // estimate_memory and the simulation agree to within their model; compare the estimate's change, anchored at
    // this plan's simulated peak, with the capacity.
    if (m.required_gib + (peak - base) <= m.capacity_gib) out.max_mbs = mbs;
    else if (mbs > t.mbs) break;  // memory grows with mbs: larger ones do not fit either
  }
  if (m.fits && out.max_mbs > t.mbs)
    out.notes.push_back("micro-batches up to " + std::to_string(out.max_mbs) +
                        " fit in memory (larger GEMMs, fewer pipeline passes; the bubble grows as micro-batches "
                        "per replica fall)");
  return out;
}

nlohmann::json advice_json(const Advice& a) {
  nlohmann::json j;
  j["notes"] = a.notes;
  nlohmann::json rem = nlohmann::json::array();
  for (const auto& r : a.remedies) rem.push_back({{"change", r.change}, {"freed_gib", r.freed_gib}, {"enough", r.enough}});
  j["memory_remedies"] = rem;
  j["max_mbs"] = a.max_mbs;
  return j;
}

std::string advice_table(const Advice& a) {
  if (a.notes.empty()) return "";
  std::string s = "\n  advice (from the simulated numbers)\n";
  for (const auto& n : a.notes) s += "    • " + n + "\n";
  return s;
}

// ---- plans side by side ----

std::size_t best_of(const std::vector<Compared>& plans) {
  std::size_t best = 0;
  bool best_fits = false;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& r = plans[i].report;
    const bool fits = r.memory.fits;
    if (i == 0 || (fits && !best_fits) ||
        (fits == best_fits && r.step_time_s < plans[best].report.step_time_s)) {
      best = i;
      best_fits = fits;
    }
  }
  return best;
}

namespace {
struct Parts {
  double other = 0, bubble = 0;
  PerAxis<double> exposed{};
};
Parts parts(const StepReport& r) {
  Parts p;
  p.bubble = r.bubble_fraction * r.step_time_s;
  double e = 0;
  for (Axis a : kAxes) p.exposed[a] = r.exposed_by_kind_s[a], e += r.exposed_by_kind_s[a];
  p.other = r.step_time_s - p.bubble - e;
  return p;
}
std::string signed_secs(double s) { return (s >= 0 ? "+" : "−") + secs(std::fabs(s)); }
}  // namespace

std::string versus_best(const std::vector<Compared>& plans, std::size_t i, std::size_t best) {
  const auto& a = plans[i];
  const auto& b = plans[best];
  std::string name = a.scenario.plan.to_string();
  if (i == best) return name + ": the fastest" + std::string(a.report.memory.fits ? " that fits" : " (none fits)");
  const Parts pa = parts(a.report), pb = parts(b.report);
  struct Item {
    double d;
    std::string what;
  };
  std::vector<Item> items = {{pa.other - pb.other, "compute and other work"}, {pa.bubble - pb.bubble, "pipeline bubble"}};
  for (Axis k : kAxes) {
    const double d = pa.exposed[k] - pb.exposed[k];
    // Name the collective of the plan that spends more on it.
    items.push_back({d, "exposed " + axis_comm_text(d >= 0 ? a.scenario : b.scenario, k)});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return std::fabs(x.d) > std::fabs(y.d); });
  const double diff = a.report.step_time_s - b.report.step_time_s;
  std::string s = name + ": " + signed_secs(diff) + " (" + (diff >= 0 ? "+" : "−") +
                  fmt_fixed(100 * std::fabs(diff) / b.report.step_time_s, 1) + " %) vs " +
                  b.scenario.plan.to_string() + " — ";
  int shown = 0;
  for (const Item& it : items) {
    if (shown == 3 || std::fabs(it.d) < std::max(1e-4, 0.05 * std::fabs(diff))) break;
    s += std::string(shown ? ", " : "") + signed_secs(it.d) + " " + it.what;
    ++shown;
  }
  if (shown == 0) s += "the same breakdown";
  if (!a.report.memory.fits) s += "; does not fit (" + fmt_fixed(a.report.memory.required_gib, 1) + " GiB)";
  return s;
}

std::string compare_table(const std::vector<Compared>& plans) {
  const std::size_t best = best_of(plans);
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& label, auto cell) {
    std::vector<std::string> r{label};
    for (const auto& c : plans) r.push_back(cell(c));
    rows.push_back(std::move(r));
  };
  row("plan", [](const Compared& c) { return c.scenario.plan.to_string(); });
  row("step time", [](const Compared& c) { return fmt_fixed(c.report.step_time_s, 4) + " s"; });
  row("expected error", [](const Compared& c) {  // the regime's typical out-of-sample error (sim/step/accuracy.hpp)
    return c.report.expected_error
               ? "±" + fmt_fixed(c.report.expected_error->typical_pct, 1) + " % " + c.report.expected_error->regime
               : std::string("-");
  });
  row("MFU", [](const Compared& c) { return fmt_fixed(100 * c.report.mfu, 1) + " %"; });
  row("tokens/s per GPU",
      [](const Compared& c) { return fmt_fixed(c.report.tokens_per_s / c.scenario.plan.world(), 0); });
  row("peak memory", [](const Compared& c) {
    return fmt_fixed(c.report.memory.peak_gib, 1) + " GiB" + (c.report.memory.fits ? "" : " (no fit)");
  });
  row("bubble", [](const Compared& c) { return fmt_fixed(100 * c.report.bubble_fraction, 1) + " %"; });
  row("exposed comm", [](const Compared& c) { return fmt_fixed(c.report.exposed_comm_s * 1e3, 1) + " ms"; });
  for (Axis a : kAxes) {
    bool any = false;
    for (const auto& c : plans) any = any || c.report.exposed_by_kind_s[a] > 0;
    if (!any) continue;
    row(std::string("  ") + axis_name(a),
        [a](const Compared& c) { return fmt_fixed(c.report.exposed_by_kind_s[a] * 1e3, 1) + " ms"; });
  }
  row("micro-batches", [](const Compared& c) { return std::to_string(c.report.microbatches); });
  std::vector<std::size_t> width(plans.size() + 1, 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], display_width(r[i]));
  std::ostringstream o;
  const auto& s0 = plans.front().scenario;
  o << "parsim compare: " << s0.model.name << " on " << s0.hw.gpu.name << " (" << s0.hw.node.gpus_per_node
    << " GPUs/node), seq " << s0.train.seq << ", gbs " << s0.train.gbs << "\n\n";
  for (const auto& r : rows) {
    o << "  ";
    for (std::size_t i = 0; i < r.size(); ++i) {
      o << r[i];
      if (i + 1 < r.size()) o << std::string(width[i] - display_width(r[i]) + 3, ' ');
    }
    o << "\n";
  }
  o << "\n  where the time goes, against the best plan (" << plans[best].scenario.plan.to_string() << ")\n";
  for (std::size_t i = 0; i < plans.size(); ++i) o << "    " << versus_best(plans, i, best) << "\n";
  return o.str();
}

nlohmann::json compare_json(const std::vector<Compared>& plans) {
  const std::size_t best = best_of(plans);
  nlohmann::json j;
  j["best"] = plans[best].scenario.plan.to_string();
  j["plans"] = nlohmann::json::array();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    nlohmann::json p = report_to_json(plans[i].scenario, plans[i].report, std::nullopt);
    p["versus_best"] = versus_best(plans, i, best);
    j["plans"].push_back(std::move(p));
  }
  return j;
}

}  // namespace parsim
