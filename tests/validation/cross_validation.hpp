// Leave-one-source-out cross-validation of the fitted constants (hardware/calibration.json) on the measured rows of
// tests/data/validation. Used by `parsim_accuracy --cv` and asserted by test_cross_validation (label validation).
//
// Method: every constant of calibration.json that has a range (min < max) is fitted by coordinate descent — for each
// constant in turn a golden-section search on a grid (kGridStep) around its current value, rounds until none moves (at
// most 6; each left-out source starts from the all-rows fit) — minimising the mean
// |ln(predicted / measured)| over the fit rows (every row that can be simulated). A row's prediction depends only on
// the constants of its stack and precision (row_depends), so a constant's search re-simulates only those rows. For
// every source S the constants are refitted on all rows but S's, starting from the all-rows fit, and S's rows are
// predicted with them (out of sample); the in-sample figure uses the constants fitted on all rows. Deterministic:
// fixed grid and search order, no per-row constant.
//
// Constants covered: sustained_megatron, sustained_pytorch (the in-training fraction of microbenchmark speed, one per
// stack, shared by every GPU), fp8_training_fraction (fp8 rows), attn_causal_efficiency (every causal LM),
// host_megatron (the host-time factor of Megatron-Core) and host_legacy (that of the legacy Megatron-LM /
// Megatron-DeepSpeed program; sim/step/costs.hpp host_constant). host_pytorch has no range (no host-bound PyTorch run
// in the data).
//
// The host factors are fitted on the host-bound rows only (mark_host_bound: the rows whose prediction they move —
// the Megatron-LM CI runs of S53/S54 and the small-model single-node runs of S56), each on the rows of its own program;
// every other constant on every row. With no host-bound row of its program among the fit rows a host factor is not
// identified and falls back to 1 (the micro-benchmark unit costs of sim/step/costs/host.cpp).
//
// Cost: the searches probe the same grid points from the same start, so a memo of each row's prediction keyed by the
// constants it depends on makes the leave-one-out refits mostly re-use the all-rows fit's simulations; only a source
// whose removal moves a constant costs new simulations.
#pragma once
#include "published_runs.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/step/accuracy.hpp"
#include "sim/step/costs.hpp"  // host_constant

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace parsim::validation {

// One fitted constant: its name in calibration.json, its field, its range and grid.
struct CvConstant {
  const char* name;
  double FittedConstants::*field;
  double lo = 0, hi = 0;
};
constexpr double kGridStep = 0.005;  // resolution of every search: ±0.25 % of a fraction, below run-to-run noise

// The constants with a range, in search order, ranges from calibration.json ("min", "max").
inline std::vector<CvConstant> cv_constants() {
  const auto j = nlohmann::json::parse(calibration_json_text()).at("constants");
  std::vector<CvConstant> out;
  const std::pair<const char*, double FittedConstants::*> all[] = {
      {"sustained_megatron", &FittedConstants::sustained_megatron},
      {"sustained_pytorch", &FittedConstants::sustained_pytorch},
      {"fp8_training_fraction", &FittedConstants::fp8_training_fraction},
      {"attn_causal_efficiency", &FittedConstants::attn_causal_efficiency},
      {"host_megatron", &FittedConstants::host_megatron},
      {"host_legacy", &FittedConstants::host_legacy},
      {"host_pytorch", &FittedConstants::host_pytorch},
      {"gpu_speed_spread_pct", &FittedConstants::gpu_speed_spread_pct}};
  for (const auto& [name, field] : all) {
    const double lo = j.at(name).at("min").get<double>(), hi = j.at(name).at("max").get<double>();
    if (hi > lo) out.push_back({name, field, lo, hi});
  }
  return out;
}

// One row ready to simulate under any constants.
struct CvRow {
  const PublishedRun* run = nullptr;
  std::optional<Scenario> sc;  // empty when the row cannot be simulated
  double measured_s = 0;
  bool megatron = false;       // a Megatron program's kernels: Megatron-Core + TE or legacy (sustained_megatron)
  HostConstant host = HostConstant::Pytorch;  // the host constant of its program (sim/step/costs.hpp host_constant)
  bool fp8 = false;
  bool host_bound = false;  // its prediction moves by more than kHostBoundShift across the host factor's range
  mutable std::map<std::array<double, 8>, double> memo;  // prediction by the constants the row depends on
};

// A row identifies the host factor when its predicted step changes by more than kHostBoundShift between factor 1 (the
// micro-benchmark unit costs of host.cpp) and 3 (beyond the fitted value): its host issue is on the critical path.
// GPU-bound rows (the host runs ahead) move by < 3 % there, the Megatron-LM CI rows by 1.5–3×. Rows that become host-
// bound only at implausible factors (NeMo's smallest recipes at 6) do not set it: near the fit they do not depend on
// it, and their residual is the GPU model's.
// (kHostBoundShift, kHostProbeLo, kHostProbeHi: sim/step/accuracy.hpp, the rule `parsim predict` applies too.)
constexpr double kHostFactorLo = 0.5, kHostFactorHi = 6.0;  // the golden-section range of the fit

inline std::vector<CvRow> cv_rows(const std::vector<PublishedRun>& runs) {
  std::vector<CvRow> out;
  out.reserve(runs.size());
  for (const auto& r : runs) {
    CvRow c;
    c.run = &r;
    try {
      c.measured_s = r.measured_step_s();
      c.sc = make_run_scenario(r);
      c.megatron = c.sc->train.stack != Stack::PyTorch;  // Megatron-Core and the legacy program (legacy_compute)
      c.host = host_constant(c.sc->train);
      c.fp8 = c.sc->train.precision == Precision::FP8;
    } catch (const std::exception&) {
      c.sc.reset();
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Whether constant `field` is the host factor of some program (sim/step/costs.hpp host_constant_field). Fitted on
// host-bound rows only; host_pytorch has no range (cv_constants), so only the Megatron programs' factors are fitted.
inline bool host_factor(double FittedConstants::*field) {
  for (HostConstant h : {HostConstant::Pytorch, HostConstant::Megatron, HostConstant::Legacy})
    if (field == host_constant_field(h)) return true;
  return false;
}

// Whether the row's prediction reads constant `field`: the compute model reads the sustained fraction of its kernel
// stack (hardware/compute_cost.cpp sustained_fraction), fp8 rows the fp8 fraction, every row the causal factor, the
// host model the host factor of its host program (sim/step/costs/host.cpp host_model: Megatron-Core, legacy Megatron
// or PyTorch-native).
inline bool row_depends(const CvRow& r, double FittedConstants::*field) {
  if (field == &FittedConstants::sustained_megatron) return r.megatron;
  if (field == &FittedConstants::sustained_pytorch) return !r.megatron;
  if (field == &FittedConstants::fp8_training_fraction) return r.fp8;
  if (host_factor(field)) return field == host_constant_field(r.host);
  if (field == &FittedConstants::gpu_speed_spread_pct) return r.sc && r.sc->plan.world() > 1;
  return true;  // attn_causal_efficiency
}

// Predicted step time of a row under constants k (NaN when it cannot be simulated); memoised by the constants the row
// depends on.
inline double cv_predict(const CvRow& r, const FittedConstants& k) {
  if (!r.sc) return std::nan("");
  auto dep = [&](double FittedConstants::*f) { return row_depends(r, f) ? k.*f : 0.0; };
  const std::array<double, 8> key = {dep(&FittedConstants::sustained_megatron), dep(&FittedConstants::sustained_pytorch),
                                     dep(&FittedConstants::fp8_training_fraction),
                                     dep(&FittedConstants::attn_causal_efficiency), dep(&FittedConstants::host_megatron),
                                     dep(&FittedConstants::host_legacy), dep(&FittedConstants::host_pytorch),
                                     dep(&FittedConstants::gpu_speed_spread_pct)};
  if (auto it = r.memo.find(key); it != r.memo.end()) return it->second;
  Scenario sc = *r.sc;
  sc.hw.calib = k;
  double p = std::nan("");
  try {
    const double t = evaluate(sc).step_time_s;
    if (t > 0 && std::isfinite(t)) p = t;
  } catch (const std::exception&) {
  }
  r.memo.emplace(key, p);
  return p;
}

// Mean |ln(predicted / measured)| over the rows for which use(row) holds; for the host factor only the host-bound
// ones among them (the others do not depend on it near the fit: their residual is the GPU model's).
template <class Use>
inline double cv_loss(const std::vector<CvRow>& rows, Use use, const FittedConstants& k, bool host_only = false) {
  double sum = 0;
  int n = 0;
  for (const CvRow& r : rows) {
    if (!r.sc || !use(r) || (host_only && !r.host_bound)) continue;
    const double p = cv_predict(r, k);
    if (!std::isfinite(p)) continue;
    sum += std::fabs(std::log(p / r.measured_s));
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

// Marks the rows that identify their stack's host factor (kHostBoundShift).
inline void mark_host_bound(std::vector<CvRow>& rows) {
  FittedConstants lo = default_fitted_constants(), hi = lo;
  lo.host_megatron = lo.host_legacy = kHostProbeLo;
  hi.host_megatron = hi.host_legacy = kHostProbeHi;
  for (CvRow& r : rows) {
    if (r.host == HostConstant::Pytorch) continue;
    const double a = cv_predict(r, lo), b = cv_predict(r, hi);
    r.host_bound = std::isfinite(a) && std::isfinite(b) && b > (1 + kHostBoundShift) * a;
  }
}

// Refits every constant (or only `only`, when given) on the rows for which use(row) holds, from the starting
// constants k: coordinate descent, each
// constant by golden-section search over the grid points lo + i·kGridStep of its range (the loss is unimodal in each:
// time scales with 1/fraction and with the host factor, the step is the larger of host-bound and GPU-bound paths).
// The search looks within ±10 % of the range around the current value and moves the window while the best point is
// on its edge, so a refit from a nearby start costs a few probes, and every source's refit probes the same points.
template <class Use>
inline FittedConstants cv_fit_if(const std::vector<CvRow>& rows, Use use, FittedConstants k,
                                 double FittedConstants::*only = nullptr, int max_rounds = 6) {
  std::vector<CvConstant> consts = cv_constants();
  if (only) std::erase_if(consts, [&](const CvConstant& c) { return c.field != only; });
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int round = 0; round < max_rounds; ++round) {
    bool moved = false;
    for (const CvConstant& c : consts) {
      const bool host = host_factor(c.field);
      auto identifies = [&](const CvRow& r) { return r.host_bound && use(r) && row_depends(r, c.field); };
      if (host && std::none_of(rows.begin(), rows.end(), identifies)) {
        moved = moved || k.*c.field != 1.0;
        k.*c.field = 1.0;  // not identified without a host-bound row of its stack
        continue;
      }
      const int n = static_cast<int>(std::lround((c.hi - c.lo) / kGridStep));
      const int w = std::max(4, n / 10);
      auto at = [&](int i) { return std::min(c.hi, c.lo + i * kGridStep); };
      std::map<int, double> seen;
      auto loss = [&](int i) {
        if (auto it = seen.find(i); it != seen.end()) return it->second;
        FittedConstants t = k;
        t.*c.field = at(i);
        // a host factor: over the host-bound rows of its own stack; any other constant: over every fit row
        return seen[i] = host ? cv_loss(rows, identifies, t, true) : cv_loss(rows, use, t);
      };
      int centre = std::clamp(static_cast<int>(std::lround((k.*c.field - c.lo) / kGridStep)), 0, n), best = centre;
      for (int moves = 0; moves < 2 * n / w + 2; ++moves) {
        const int lo = std::max(0, centre - w), hi = std::min(n, centre + w);
        int a = lo, b = hi;
        while (b - a > 3) {
          const int step = static_cast<int>(std::lround(g * (b - a)));
          int x = b - step, y = a + step;
          if (x >= y) x = (a + b) / 2, y = x + 1;
          if (loss(x) <= loss(y)) b = y;  // unimodal: the minimum lies in [a, y]
          else a = x;                     //            … or in [x, b]
        }
        best = a;
        for (int i = a + 1; i <= b; ++i)
          if (loss(i) < loss(best)) best = i;
        const bool on_edge = (best == lo && lo > 0) || (best == hi && hi < n);
        if (!on_edge || best == centre) break;
        centre = best;  // the minimum may lie beyond the window: move it there
      }
      moved = moved || at(best) != k.*c.field;
      k.*c.field = at(best);
    }
    if (!moved) break;  // converged: a full round moved no constant
  }
  return k;
}

// Refits the constants on the rows not of source `skip` ("" = none), from the starting constants.
inline FittedConstants cv_fit(const std::vector<CvRow>& rows, const std::string& skip, FittedConstants k) {
  return cv_fit_if(rows, [&](const CvRow& r) { return r.run->source_id() != skip; }, k);
}

// Mean |error| of the rows for which `use(row)` holds, under constants k (and how many simulated).
template <class Use>
inline std::pair<double, int> cv_mean_error(const std::vector<CvRow>& rows, Use use, const FittedConstants& k) {
  double sum = 0;
  int n = 0;
  for (const CvRow& r : rows) {
    if (!use(r)) continue;
    const double p = cv_predict(r, k);
    if (!std::isfinite(p)) continue;
    sum += std::fabs(p - r.measured_s) / r.measured_s;
    ++n;
  }
  return {n > 0 ? sum / n : 0.0, n};
}

// The host factor across configurations (the host-bound rows, the Megatron-LM CI runs of S53, split in two groups
// by a property of the plan or the platform): the factor is fitted on one group and the other is predicted with it,
// both ways. This is what the small-model family needs from the host model — a factor set where the host is the
// bottleneck at one tensor-parallel size, micro-batch count or host CPU must carry over to the others.
struct CvSplit {
  std::string name, group_a, group_b;
  int rows_a = 0, rows_b = 0;
  double fit_a = 0, fit_b = 0;        // host_megatron fitted on group a alone, on group b alone
  double in_a = 0, in_b = 0;          // each group's error with the factor fitted on itself
  double out_a = 0, out_b = 0;        // a predicted with b's factor, b with a's
};

inline std::vector<CvSplit> host_bound_splits(const std::vector<CvRow>& rows, const std::string& source = "S53") {
  struct Rule {
    const char *name, *a, *b;
    bool (*in_a)(const Scenario&);
  };
  static const Rule kRules[] = {
      {"tensor parallelism", "tp1", "tp2-4", [](const Scenario& sc) { return sc.plan.tp == 1; }},
      {"pipeline", "pp1", "pp2-4", [](const Scenario& sc) { return sc.plan.pp == 1; }},
      {"host CPU", "DGX H100 (Xeon)", "DGX A100 (EPYC) + GB200 (Grace)",
       [](const Scenario& sc) { return sc.hw.node.host_time_factor == 1.0; }},
      {"transformer impl", "transformer_engine", "local spec", [](const Scenario& sc) { return !sc.train.local_layers; }},
      {"deterministic mode", "--deterministic", "not deterministic", [](const Scenario& sc) { return sc.train.deterministic; }},
  };
  std::vector<CvSplit> out;
  for (const Rule& rule : kRules) {
    auto in_a = [&](const CvRow& r) { return r.run->source_id() == source && r.sc && rule.in_a(*r.sc); };
    auto in_b = [&](const CvRow& r) { return r.run->source_id() == source && r.sc && !rule.in_a(*r.sc); };
    CvSplit s;
    s.name = rule.name, s.group_a = rule.a, s.group_b = rule.b;
    const FittedConstants ka = cv_fit_if(rows, in_a, default_fitted_constants(), &FittedConstants::host_megatron);
    const FittedConstants kb = cv_fit_if(rows, in_b, default_fitted_constants(), &FittedConstants::host_megatron);
    s.fit_a = ka.host_megatron, s.fit_b = kb.host_megatron;
    std::tie(s.in_a, s.rows_a) = cv_mean_error(rows, in_a, ka);
    std::tie(s.in_b, s.rows_b) = cv_mean_error(rows, in_b, kb);
    s.out_a = cv_mean_error(rows, in_a, kb).first;
    s.out_b = cv_mean_error(rows, in_b, ka).first;
    if (s.rows_a > 0 && s.rows_b > 0) out.push_back(s);
  }
  return out;
}

struct CvSource {
  std::string source;
  int rows = 0;
  int host_bound_rows = 0;                   // its rows that identify the host factor
  double in_sample = 0, out_of_sample = 0;  // mean |error|
  FittedConstants fitted_without;            // the constants refitted without this source
};

struct CvResult {
  FittedConstants all;             // fitted on every row
  std::vector<CvSource> sources;   // first-appearance order
  double mean_in = 0, mean_out = 0;  // mean over sources of the per-source figures
  double max_out = 0;
  std::string worst;
};

inline CvResult cross_validate(const std::vector<CvRow>& rows) {
  CvResult res;
  res.all = cv_fit(rows, "", default_fitted_constants());
  std::vector<std::string> order;
  for (const CvRow& r : rows)
    if (std::find(order.begin(), order.end(), r.run->source_id()) == order.end()) order.push_back(r.run->source_id());
  for (const std::string& s : order) {
    CvSource cs;
    cs.source = s;
    // Every source has rows that depend on attn_causal_efficiency (every causal LM), so each is refitted without it.
    cs.fitted_without = cv_fit(rows, s, res.all);
    double sin = 0, sout = 0;
    for (const CvRow& r : rows) {
      if (r.run->source_id() != s) continue;
      const double pin = cv_predict(r, res.all), pout = cv_predict(r, cs.fitted_without);
      if (!std::isfinite(pin) || !std::isfinite(pout)) continue;
      ++cs.rows;
      cs.host_bound_rows += r.host_bound ? 1 : 0;
      sin += std::fabs(pin - r.measured_s) / r.measured_s;
      sout += std::fabs(pout - r.measured_s) / r.measured_s;
    }
    if (cs.rows == 0) continue;
    cs.in_sample = sin / cs.rows;
    cs.out_of_sample = sout / cs.rows;
    res.sources.push_back(cs);
  }
  for (const CvSource& cs : res.sources) {
    res.mean_in += cs.in_sample / static_cast<double>(res.sources.size());
    res.mean_out += cs.out_of_sample / static_cast<double>(res.sources.size());
    if (cs.out_of_sample > res.max_out) res.max_out = cs.out_of_sample, res.worst = cs.source;
  }
  return res;
}

// The out-of-sample error by accuracy regime (sim/step/accuracy.hpp, hardware/accuracy.json): each row in the regime a
// prediction of it gets (accuracy_regime with the row's host-bound mark), the mean over sources of each source's mean
// out-of-sample |error| over its rows of that regime (cv_mean_error under the constants refitted without the source)
// — sources weigh alike, as in the leave-one-source-out mean.
struct CvRegime {
  AccuracyRegime regime;
  int rows = 0, sources = 0;
  double out_of_sample = 0;
};
inline std::vector<CvRegime> regime_errors(const std::vector<CvRow>& rows, const CvResult& cv) {
  std::vector<CvRegime> out;
  for (AccuracyRegime g :
       {AccuracyRegime::HostBound, AccuracyRegime::Moe, AccuracyRegime::Megatron, AccuracyRegime::PyTorch}) {
    CvRegime reg{g};
    for (const CvSource& s : cv.sources) {
      auto use = [&](const CvRow& r) {
        return r.sc && r.run->source_id() == s.source && accuracy_regime(*r.sc, r.host_bound) == g;
      };
      const auto [err, n] = cv_mean_error(rows, use, s.fitted_without);
      if (n == 0) continue;
      reg.rows += n, ++reg.sources, reg.out_of_sample += err;
    }
    if (reg.sources > 0) reg.out_of_sample /= reg.sources;
    out.push_back(reg);
  }
  return out;
}

// Leave one GPU generation out (issue 9: "a GPU generation it never saw"). Every constant is refitted without the rows
// of one generation (Ampere, Hopper, Blackwell, CDNA3 — hw.gpu.arch of the row's hardware, presets and the clusters'
// own files alike), from the constants fitted on every row, and that generation's GPU-bound rows are predicted with
// the result: what a user gets on a GPU whose runs set none of the constants, from its datasheet and measured kernel
// curves. The host-bound rows stay out of these figures: the host factors are per program and node CPU, and the
// legacy program's has been measured on A100 hosts only (left out with Ampere it would fall back to 1), so they are
// cross-validated by source and across S53's configurations above. The error is the mean over the generation's
// sources of each source's mean |error| over its GPU-bound rows of that generation (sources weigh alike, as in the
// leave-one-source-out mean).
inline const char* arch_label(GpuArch a) {
  switch (a) {
    case GpuArch::Ampere: return "Ampere (A100)";
    case GpuArch::Hopper: return "Hopper (H100, H200)";
    case GpuArch::Blackwell: return "Blackwell (B200, GB200, B300)";
    case GpuArch::CDNA3: return "CDNA3 (MI300X, MI325X)";
    case GpuArch::CDNA4: return "CDNA4 (MI355X)";
  }
  return "?";
}

struct CvGeneration {
  GpuArch arch = GpuArch::Ampere;
  const char* name() const { return arch_label(arch); }
  int rows = 0, sources = 0;
  double in_sample = 0, out_of_sample = 0;
  FittedConstants fitted_without;
};


inline std::vector<CvGeneration> leave_generation_out(const std::vector<CvRow>& rows, const FittedConstants& all) {
  std::vector<CvGeneration> out;
  for (GpuArch a : {GpuArch::Ampere, GpuArch::Hopper, GpuArch::Blackwell, GpuArch::CDNA3, GpuArch::CDNA4}) {
    auto of = [&](const CvRow& r) { return r.sc && r.sc->hw.gpu.arch == a; };
    if (std::none_of(rows.begin(), rows.end(), [&](const CvRow& r) { return of(r) && !r.host_bound; })) continue;
    CvGeneration g;
    g.arch = a;
    g.fitted_without = cv_fit_if(rows, [&](const CvRow& r) { return !of(r); }, all);
    std::set<std::string> sources;
    for (const CvRow& r : rows)
      if (of(r) && !r.host_bound) sources.insert(r.run->source_id());
    std::vector<std::pair<double, double>> errors;  // each source's mean |error| in and out of sample
    for (const std::string& src : sources) {
      auto use = [&](const CvRow& r) { return of(r) && !r.host_bound && r.run->source_id() == src; };
      const auto [in, n] = cv_mean_error(rows, use, all);
      if (n == 0) continue;
      g.rows += n;
      errors.emplace_back(in, cv_mean_error(rows, use, g.fitted_without).first);
    }
    for (const auto& [in, out_of] : errors) {
      g.in_sample += in / static_cast<double>(errors.size());
      g.out_of_sample += out_of / static_cast<double>(errors.size());
    }
    g.sources = static_cast<int>(errors.size());
    if (g.rows > 0) out.push_back(g);
  }
  return out;
}

// The measured files the cross-validation covers (step-time rows; moe.csv waits for expert parallelism).
inline std::vector<std::string> cv_data_files() {
  const std::string d = std::string(PARSIM_TEST_DATA) + "/validation/";
  return {d + "published_runs_usable.csv", d + "nemo_megatron_h100.csv", d + "megatron_ci_small.csv", d + "megatron_ci_2023.csv",
          d + "megatron_deepspeed_a100.csv", d + "nvidia_hopper_2025.csv", d + "blackwell.csv",
          d + "small_models.csv", d + "amd_mi300.csv", d + "small_models_a100.csv"};
}

}  // namespace parsim::validation
