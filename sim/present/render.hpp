// parsim sim/present — rendering a StepReport: JSON (the contract's keys), a table for people, a Chrome/Perfetto trace.
#pragma once
#include "sim/step/evaluate.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace parsim {

nlohmann::json report_to_json(const Scenario& sc, const StepReport& r, const std::optional<TrainEstimate>& train);
// {"regime", "label", "typical_abs_error_pct", "basis"}: predict's and validate's "expected_error" (docs/cli.md).
nlohmann::json expected_error_json(const ExpectedError& e);
std::string report_to_table(const Scenario& sc, const StepReport& r, const std::optional<TrainEstimate>& train);

// Writes the simulated timeline of the evaluator's last run (EvalOptions.keep_timeline) as Chrome-trace JSON.
// layer_detail: split each pass into its layers with their TP/CP communication on the tp/cp tracks.
void write_trace(const std::string& path, const Scenario& sc, const Evaluator& ev, const StepReport& r,
                 bool layer_detail);

}  // namespace parsim
