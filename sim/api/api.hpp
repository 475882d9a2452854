// parsim sim/api — every command as a function: a request (built from an option table by the command line, from a
// JSON object by the JSON functions and the Python module) → a typed result → the CLI's JSON.
//
//   nlohmann::json predict(const nlohmann::json&)    the contract's predict JSON (report_to_json)
//   nlohmann::json sweep(const nlohmann::json&)      the sweep JSON (sweep_to_json)
//   nlohmann::json merge(const nlohmann::json&)      merged sweep files
//   nlohmann::json profile(const nlohmann::json&)    profile JSON
//   nlohmann::json calibrate(const nlohmann::json&)  calibration JSON
//   nlohmann::json validate(const nlohmann::json&)   prediction beside measurement
//
// Request keys are the command's flags without dashes, '-' → '_' (docs/cli.md "Python"): {"model": "llama3-8b",
// "plan": "tp2dp32", "seq": 8192, "sp": true, "tokens": "2T"}; a "scenario" key names a scenario JSON file applied
// first. Bad input throws InputError with the CLI's one-line message (unknown keys included). The command line
// (sim/cli) registers the same tables and calls the same run_* functions, so both paths share parsing and results.
#pragma once
#include "plans/scenario.hpp"
#include "sim/core/options.hpp"
#include "sim/measure/calibrate.hpp"
#include "sim/measure/calibrate_gemm.hpp"
#include "sim/measure/profile.hpp"
#include "sim/measure/validate.hpp"
#include "sim/present/advice.hpp"
#include "sim/present/render.hpp"
#include "sim/present/svg.hpp"
#include "sim/present/sweep_io.hpp"
#include "sim/sweep/sweep.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace parsim::api {

// --tokens / --price-per-gpu-hour / --goodput (predict and sweep).
struct TrainRun {
  double tokens = 0, price_per_gpu_hour = 0, goodput = 1;
  bool given_price = false;
};

// ---- predict ----
struct PredictRequest {
  ScenarioInput scenario;
  TrainRun run;
  std::string trace;         // write the timeline as Chrome-trace JSON here ("" = none)
  std::string svg;           // write the picture of the step here ("" = none)
  bool trace_layers = true;  // per-layer slices in the trace
  bool advice = false;       // add "advice" (advise()) to the JSON; the table always shows it
  std::string format = "table";  // command line only: table | json
};
const OptionTable<PredictRequest>& predict_options();
// Applies the values (a "scenario" file first, the flags over it) and checks what spans several options.
PredictRequest predict_request(std::vector<OptionValue> values);
struct Prediction {
  Scenario scenario;
  StepReport report;
  std::optional<TrainEstimate> train;
};
Prediction run_predict(const PredictRequest& r);
// The contract's predict JSON, with "advice" when the request asks for it (the CLI's --format json output).
nlohmann::json prediction_json(const PredictRequest& r, const Prediction& p);
nlohmann::json predict(const nlohmann::json& request);

// ---- compare: several plans side by side (the predict options; --plan repeated or a comma list) ----
struct CompareRequest {
  ScenarioInput scenario;          // everything but the plan
  std::vector<std::string> plans;  // at least two
  std::string format = "table";    // command line only: table | json
};
const OptionTable<CompareRequest>& compare_options();
CompareRequest compare_request(std::vector<OptionValue> values);
std::vector<Compared> run_compare(const CompareRequest& r);
nlohmann::json compare(const nlohmann::json& request);

// ---- sweep ----
struct SweepRequest {
  SweepSetup setup;
  SweepOptions options;
  SweepListing listing;
  TrainRun run;
  double headroom_gib = 0;       // keep this much below each GPU's capacity: plans above capacity − headroom do not fit
  std::string svg;               // write the picture of the sweep here ("" = none)
  std::string format = "table";  // command line only: table | json | csv
};
const OptionTable<SweepRequest>& sweep_options();
SweepRequest sweep_request(const std::vector<OptionValue>& values);
SweepReport run_sweep(const SweepRequest& r);  // applies the headroom, writes the picture
// Drops the plans whose peak memory exceeds capacity − headroom_gib from `rep.ranked` (counted in `rep.rejected` as
// "out of memory (headroom N GiB)" and out of `feasible`) and recomputes the Pareto front.
void apply_headroom(SweepReport& rep, double headroom_gib);
nlohmann::json sweep(const nlohmann::json& request);

// ---- merge ----
struct MergeRequest {
  std::vector<std::string> files;
  bool partial = false;  // rank what is given even when shards are missing or inputs are CSV (merge_sweeps)
  SweepListing listing;
  std::string format = "table";
};
const OptionTable<MergeRequest>& merge_options();
MergeRequest merge_request(const std::vector<OptionValue>& values);
SweepReport run_merge(const MergeRequest& r);
nlohmann::json merge(const nlohmann::json& request);

// ---- profile ----
struct ProfileRequest {
  std::vector<std::string> files;
  ProfileOptions options;
  std::string svg;  // write the per-rank picture here ("" = none)
  std::string format = "table";
};
const OptionTable<ProfileRequest>& profile_options();
ProfileRequest profile_request(const std::vector<OptionValue>& values);
ProfileReport run_profile(const ProfileRequest& r);  // writes the picture when asked
// The per-rank picture's data: the measured ranks; the slowest is the straggler of the cross-rank analysis (the rank
// that arrives last at the collectives) when there is one, else the rank with the most compute (the others wait).
RanksPicture ranks_picture(const ProfileReport& rep);
nlohmann::json profile(const nlohmann::json& request);

// ---- calibrate ----
struct CalibrateRequest {
  std::string file, out, gpu;
  int ranks = 0, nodes = 0, gpus_per_node = 0;
  std::string device;     // GEMM tables: which device of the table
  double min_gflop = 0;   // GEMM tables: smallest shape fitted, GFLOP per call (0: the default, 30)
  std::string precision;  // GEMM tables: "bf16" (default: gemm_ceiling and gemm_k_half) or "fp8" (gemm_ceiling_fp8)
  std::string format = "table";
};
const OptionTable<CalibrateRequest>& calibrate_options();
CalibrateRequest calibrate_request(const std::vector<OptionValue>& values);
// A collective benchmark gives `fits` (one per table, `primary` the one --out uses); a GEMM table (XLA's GemmPerfTable
// or a CSV of m, n, k, TFLOP/s: sim/measure/calibrate_gemm.hpp) gives `gemm` instead.
struct CalibrationResult {
  std::vector<Calibration> fits;
  std::size_t primary = 0;
  std::optional<GemmCalibration> gemm;
};
std::string calibration_result_text(const CalibrationResult& c, const std::string& format);
CalibrationResult run_calibrate(const CalibrateRequest& r);  // writes `out` when set
nlohmann::json calibrate(const nlohmann::json& request);

// ---- validate ----
struct ValidateRequest {
  ScenarioInput scenario;
  std::vector<std::string> profiles;
  bool all_kernels = false;
  std::string format = "table";
};
const OptionTable<ValidateRequest>& validate_options();
ValidateRequest validate_request(std::vector<OptionValue> values);
struct ValidationResult {
  Validation validation;
  nlohmann::ordered_json prediction;  // plan, model, gpu, critical stage, mfu, bubble (under "prediction")
};
ValidationResult run_validate(const ValidateRequest& r);
nlohmann::json validate(const nlohmann::json& request);

}  // namespace parsim::api
