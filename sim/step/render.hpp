// parsim sim/step — rendering a StepReport: JSON (the contract's keys), a table for people, a Chrome/Perfetto trace.
#pragma once
#include "sim/step/evaluate.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace parsim {

// Time-to-train and cost of a whole run (--tokens, --price-per-gpu-hour, --goodput).
struct TrainEstimate {
  double tokens = 0;
  double goodput = 1;      // fraction of wall-clock time spent training (checkpoints, restarts, failures excluded)
  double days = 0;
  double gpu_hours = 0;
  double cost_usd = 0;
  bool has_cost = false;
};
TrainEstimate train_estimate(const Scenario& sc, const StepReport& r, double tokens, double price_per_gpu_hour,
                             double goodput);

nlohmann::json report_to_json(const Scenario& sc, const StepReport& r, const std::optional<TrainEstimate>& train);
std::string report_to_table(const Scenario& sc, const StepReport& r, const std::optional<TrainEstimate>& train);

// Writes the simulated timeline of the evaluator's last run (EvalOptions.keep_timeline) as Chrome-trace JSON.
// layer_detail: split each pass into its layers with their TP/CP communication on the tp/cp tracks.
void write_trace(const std::string& path, const Scenario& sc, const Evaluator& ev, const StepReport& r,
                 bool layer_detail);

}  // namespace parsim
