// parsim sim/step/accuracy.cpp — see accuracy.hpp.
#include "sim/step/accuracy.hpp"

#include "sim/step/costs.hpp"
#include "sim/step/evaluate.hpp"

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
  }
  return "pytorch";
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
  static const nlohmann::json table = nlohmann::json::parse(accuracy_json_text()).at("regimes");  // built once
  const nlohmann::json& e = table.at(regime_key(r));
  ExpectedError out;
  out.regime = regime_key(r);
  out.label = e.at("label").get<std::string>();
  out.typical_pct = e.at("typical_pct").get<double>();
  out.basis = e.at("basis").get<std::string>();
  return out;
}

ExpectedError expected_error(const Scenario& sc) { return expected_error(accuracy_regime(sc, host_bound(sc))); }

}  // namespace parsim
