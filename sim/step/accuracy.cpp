// parsim sim/step/accuracy.cpp — see accuracy.hpp.
#include "sim/step/accuracy.hpp"

#include "sim/step/costs.hpp"
#include "sim/step/evaluate.hpp"
#include "sim/core/text.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <exception>

namespace parsim {

const char* regime_key(AccuracyRegime r) {
  switch (r) {
    case AccuracyRegime::HostBound: return "host_bound";
    case AccuracyRegime::Moe: return "moe";
    case AccuracyRegime::Megatron: return "megatron";
    case AccuracyRegime::PyTorch: return "pytorch";
    case AccuracyRegime::NewGeneration: return "new_generation";
  }
  return "pytorch";
}

const char* generation_key(GpuArch a) {
  switch (a) {
    case GpuArch::Ampere: return "ampere";
    case GpuArch::Hopper: return "hopper";
    case GpuArch::Blackwell: return "blackwell";
    case GpuArch::CDNA3: return "cdna3";
    case GpuArch::CDNA4: return "cdna4";
  }
  return "?";
}

namespace {
const nlohmann::json& accuracy_table() {
  static const nlohmann::json table = nlohmann::json::parse(accuracy_json_text());  // built once
  return table;
}
// One figure of accuracy.json (a regime's or a GPU's) under the regime key it is reported with.
ExpectedError entry_error(const nlohmann::json& e, std::string regime) {
  ExpectedError out;
  out.regime = std::move(regime);
  out.label = e.at("label").get<std::string>();
  out.typical_pct = e.at("typical_pct").get<double>();
  out.basis = e.at("basis").get<std::string>();
  return out;
}
}  // namespace

bool generation_validated(GpuArch a) {
  for (const auto& g : accuracy_table().at("validated_generations"))
    if (g.get<std::string>() == generation_key(a)) return true;
  return false;
}

AccuracyRegime accuracy_regime(const Scenario& sc, bool host_bound) {
  if (host_bound) return AccuracyRegime::HostBound;
  if (sc.model.is_moe()) return AccuracyRegime::Moe;
  return sc.train.stack == Stack::PyTorch ? AccuracyRegime::PyTorch : AccuracyRegime::Megatron;
}

bool host_bound(const Scenario& sc) {
  if (host_constant(sc.train) == HostConstant::Pytorch) return false;
  Scenario lo = sc, hi = sc;
  lo.hw.calib.host_megatron = lo.hw.calib.host_legacy = kHostProbeLo;
  hi.hw.calib.host_megatron = hi.hw.calib.host_legacy = kHostProbeHi;
  // The scenario simulated at its own factor already; the probes differ only in the host's unit costs. Should one
  // still fail, the prediction stands and its regime falls back to the GPU-bound one.
  try {
    const double a = evaluate(lo).step_time_s, b = evaluate(hi).step_time_s;
    return std::isfinite(a) && std::isfinite(b) && b > (1 + kHostBoundShift) * a;
  } catch (const std::exception&) {
    return false;
  }
}

ExpectedError expected_error(AccuracyRegime r) {
  return entry_error(accuracy_table().at("regimes").at(regime_key(r)), regime_key(r));
}

std::optional<ExpectedError> held_out_gpu_error(const Hardware& hw) {
  const nlohmann::json& t = accuracy_table();
  if (!t.contains("gpus")) return std::nullopt;
  for (const auto& g : t.at("gpus"))
    if (g.at("gpu_name").get<std::string>() == hw.gpu.name) return entry_error(g, "gpu_held_out");
  return std::nullopt;
}

ExpectedError expected_error(const Scenario& sc) {
  const bool hb = host_bound(sc);
  const ExpectedError own = expected_error(accuracy_regime(sc, hb));
  // A host-bound step's error is the host model's, whatever the GPU; a GPU-bound one on a GPU measured only on
  // held-out runs is as uncertain as those runs say, and one on a generation that no measured run checked at least as
  // uncertain as a generation left out of every fit was.
  if (hb) return own;
  std::optional<ExpectedError> gpu = held_out_gpu_error(sc.hw);
  if (!gpu && generation_validated(sc.hw.gpu.arch)) return own;
  ExpectedError e = gpu ? *gpu : expected_error(AccuracyRegime::NewGeneration);
  if (own.typical_pct > e.typical_pct) {
    e.basis = own.basis + (gpu ? "; this GPU's held-out runs: " : "; a GPU generation left out of every fit: ") +
              fmt_fixed(e.typical_pct, 1) + " %";
    e.typical_pct = own.typical_pct;
  }
  return e;
}

}  // namespace parsim
