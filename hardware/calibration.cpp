// parsim hardware/calibration.cpp — the fitted constants, read once from hardware/calibration.json (compiled in).
#include "hardware/hardware.hpp"
#include "sim/core/json_strict.hpp"

#include <stdexcept>

namespace parsim {
namespace detail {
extern const char* const kCalibrationJson;
extern const char* const kAccuracyJson;
}  // namespace detail

namespace {

FittedConstants parse_calibration() {
  const auto j = nlohmann::json::parse(detail::kCalibrationJson);
  const auto& c = j.at("constants");
  auto v = [&](const char* key) { return c.at(key).at("value").get<double>(); };
  FittedConstants cal;
  cal.sustained_megatron = v("sustained_megatron");
  cal.sustained_pytorch = v("sustained_pytorch");
  cal.fp8_training_fraction = v("fp8_training_fraction");
  cal.attn_causal_efficiency = v("attn_causal_efficiency");
  cal.host_megatron = v("host_megatron");
  cal.host_legacy = v("host_legacy");
  cal.host_pytorch = v("host_pytorch");
  cal.gpu_speed_spread_pct = v("gpu_speed_spread_pct");
  return cal;
}

}  // namespace

const FittedConstants& default_fitted_constants() {
  static const FittedConstants cal = parse_calibration();  // an immutable table, built once
  return cal;
}

const char* calibration_json_text() { return detail::kCalibrationJson; }

const char* accuracy_json_text() { return detail::kAccuracyJson; }

}  // namespace parsim
