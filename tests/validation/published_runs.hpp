// Reader for tests/data/validation/published_runs_usable.csv (measured training runs from published sources) and
// the glue that turns one row into a simulated step: CSV parsing, the row's parsim_args flag string → ScenarioInput,
// its parsim_model_json → a model file, evaluate(), and the relative error against the measured step time.
// Shared by the `validation` test (test_validation.cpp) and the calibration tool parsim_accuracy.
#pragma once
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/step/evaluate.hpp"

#include <unistd.h>  // mkstemp, close

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace parsim::validation {

// ---- CSV (RFC 4180): comma-separated, fields optionally quoted; inside quotes commas, newlines and doubled
// quotes ("") are literal. Rows end with \n or \r\n. Throws InputError on an unterminated quote or text after a
// closing quote.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& what) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the current field was quoted and its closing quote has been seen
  int line = 1, field_line = 1;
  auto end_field = [&] {
    row.push_back(field);
    field.clear();
    was_quoted = false;
  };
  auto end_row = [&] {
    end_field();
    rows.push_back(std::move(row));
    row.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
          was_quoted = true;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == ',') {
      end_field();
    } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      if (c == '\r') ++i;
      end_row();
      ++line;
    } else if (c == '"') {
      if (!field.empty() || was_quoted)
        throw InputError(what + " line " + std::to_string(line) +
                         ": a quote inside an unquoted field (quote the whole field and double inner quotes)");
      quoted = true;
      field_line = line;
    } else {
      if (was_quoted)
        throw InputError(what + " line " + std::to_string(line) + ": text '" + std::string(1, c) +
                         "' after a closing quote (expected ',' or end of line)");
      field += c;
    }
  }
  if (quoted)
    throw InputError(what + ": quoted field opened on line " + std::to_string(field_line) + " is never closed");
  if (!field.empty() || was_quoted || !row.empty()) end_row();  // last line without a trailing newline
  return rows;
}

// One measured run: the CSV's cells by column name.
struct PublishedRun {
  std::map<std::string, std::string> cells;
  const std::string& at(const std::string& column) const {
    auto it = cells.find(column);
    if (it == cells.end()) throw InputError("published run has no column '" + column + "'");
    return it->second;
  }
  const std::string& row_id() const { return at("row_id"); }
  const std::string& source_id() const { return at("source_id"); }
  double measured_step_s() const {
    return parse_positive_number(at("derived_step_time_s"), row_id() + ": derived_step_time_s (seconds)");
  }
  // Measured memory per GPU in GB (1e9 bytes) where the source publishes it; < 0 when the cell is empty.
  double measured_memory_gb() const {
    const std::string& v = at("meas_memory_gb_per_gpu");
    if (trim(v).empty()) return -1;
    return parse_positive_number(v, row_id() + ": meas_memory_gb_per_gpu (GB)");
  }
};

// Columns the validation code reads; a file without one of them is rejected up front.
inline const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> cols = {"row_id",           "source_id",   "model",
                                                "gpu_type",         "derived_step_time_s",
                                                "meas_memory_gb_per_gpu", "parsim_args", "parsim_model_json"};
  return cols;
}

inline std::vector<PublishedRun> parse_published_runs(const std::string& text, const std::string& what) {
  const auto table = parse_csv(text, what);
  if (table.empty()) throw InputError(what + " is empty (expected a header row and data rows)");
  const std::vector<std::string>& header = table.front();
  std::set<std::string> names;
  for (const auto& h : header)
    if (!names.insert(h).second) throw InputError(what + ": column '" + h + "' appears twice in the header");
  for (const auto& c : required_columns())
    if (!names.count(c)) throw InputError(what + ": header lacks the column '" + c + "'");
  std::vector<PublishedRun> runs;
  for (std::size_t r = 1; r < table.size(); ++r) {
    const auto& cells = table[r];
    if (cells.size() == 1 && cells[0].empty()) continue;  // blank line
    if (cells.size() != header.size())
      throw InputError(what + ": data row " + std::to_string(r) + " has " + std::to_string(cells.size()) +
                       " fields, the header has " + std::to_string(header.size()));
    PublishedRun run;
    for (std::size_t c = 0; c < header.size(); ++c) run.cells[header[c]] = cells[c];
    runs.push_back(std::move(run));
  }
  return runs;
}

inline std::vector<PublishedRun> load_published_runs(const std::string& path) {
  return parse_published_runs(read_file_text(path, "validation data"), "validation data '" + path + "'");
}

// ---- parsim_args: the predict flags of docs/cli.md as one whitespace-separated string, read through the scenario
// option table (plans/scenario.hpp) like the command line: every scenario flag is accepted (value flags as `--x v` or
// `--x=v`); anything else — an unknown flag, a repeated one, a value without a flag, `--model` (the model comes from
// parsim_model_json) — throws InputError naming it.
inline ScenarioInput parse_parsim_args(const std::string& flags) {
  ScenarioInput a = scenario_from_flag_string(flags, "parsim_args '" + flags + "'", /*allow_model=*/false);
  if (a.plan.empty()) throw InputError("parsim_args '" + flags + "' has no --plan");
  return a;
}

// A model JSON written to a private temporary file (models/ reads models from files), removed on destruction.
class TempModelFile {
public:
  explicit TempModelFile(const std::string& json) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "parsim_validation_XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const int fd = mkstemp(buf.data());
    if (fd < 0) throw InputError("cannot create a temporary model file in " + tmpl);
    ::close(fd);
    path_ = buf.data();
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << json;
    if (!out) throw InputError("cannot write the temporary model file " + path_);
  }
  ~TempModelFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempModelFile(const TempModelFile&) = delete;
  TempModelFile& operator=(const TempModelFile&) = delete;
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

inline ScenarioInput scenario_args(const PublishedRun& run) {
  try {
    return parse_parsim_args(run.at("parsim_args"));
  } catch (const InputError& e) {
    throw InputError(run.row_id() + ": " + e.what());
  }
}

// The row as a validated Scenario (throws InputError prefixed with the row id).
// Calibration aid (parsim_accuracy --hw-dir): hardware files named <preset>.json in this folder replace the presets.
inline std::string& hardware_override_dir() {
  static std::string dir;
  return dir;
}

// Calibration aids (parsim_accuracy --host-megatron X / --host-legacy X): a host factor that replaces
// calibration.json's for the Megatron-Core / the legacy Megatron stack (≤ 0 = none).
inline double& host_megatron_override() {
  static double v = 0;
  return v;
}
inline double& host_legacy_override() {
  static double v = 0;
  return v;
}

// A row whose cluster differs from every preset names a hardware file of the repository (`--gpu
// examples/hardware/jean-zay-a100.json`), written relative to the repository root so that the row's flags reproduce it
// from there with the CLI; the harness resolves it against the root (PARSIM_TEST_DATA is <root>/tests/data).
inline std::string resolve_row_hardware(const std::string& gpu) {
#ifdef PARSIM_TEST_DATA
  const bool file = gpu.size() > 5 && gpu.compare(gpu.size() - 5, 5, ".json") == 0;
  if (file && !gpu.empty() && gpu.front() != '/') return std::string(PARSIM_TEST_DATA) + "/../../" + gpu;
#endif
  return gpu;
}

inline Scenario make_run_scenario(const PublishedRun& run) {
  ScenarioInput a = scenario_args(run);
  a.gpu = resolve_row_hardware(a.gpu);
  if (!hardware_override_dir().empty()) {
    const std::string f = hardware_override_dir() + "/" + a.gpu + ".json";
    if (std::ifstream(f).good()) a.gpu = f;
  }
  if (trim(run.at("parsim_model_json")).empty()) throw InputError(run.row_id() + ": parsim_model_json is empty");
  TempModelFile model(run.at("parsim_model_json"));
  a.model = model.path();
  try {
    Scenario sc = resolve_scenario(a);
    if (host_megatron_override() > 0) sc.hw.calib.host_megatron = host_megatron_override();
    if (host_legacy_override() > 0) sc.hw.calib.host_legacy = host_legacy_override();
    return sc;
  } catch (const InputError& e) {
    throw InputError(run.row_id() + ": " + e.what());
  }
}

// ---- one row simulated
struct RowResult {
  const PublishedRun* run = nullptr;
  ScenarioInput args;
  bool ok = false;
  std::string failure;    // why the row could not be simulated (ok == false)
  StepReport report;
  double measured_s = 0;
  double predicted_s = 0;
  double error = 0;       // (predicted − measured) / measured
};

// Never throws: a row that cannot be simulated comes back with ok = false and the reason.
inline RowResult evaluate_run(const PublishedRun& run) {
  RowResult r;
  r.run = &run;
  try {
    r.args = scenario_args(run);
    r.measured_s = run.measured_step_s();
    const Scenario sc = make_run_scenario(run);
    r.report = evaluate(sc);
    r.predicted_s = r.report.step_time_s;
    if (!(r.predicted_s > 0) || !std::isfinite(r.predicted_s)) {
      r.failure = run.row_id() + ": predicted step time " + std::to_string(r.predicted_s) + " s is not positive";
      return r;
    }
    r.error = (r.predicted_s - r.measured_s) / r.measured_s;
    r.ok = true;
  } catch (const std::exception& e) {
    r.failure = e.what();
  }
  return r;
}

inline std::vector<RowResult> evaluate_runs(const std::vector<PublishedRun>& runs) {
  std::vector<RowResult> out;
  out.reserve(runs.size());
  for (const auto& run : runs) out.push_back(evaluate_run(run));
  return out;
}

// ---- summaries: per source (first-appearance order) and overall
struct ErrorStats {
  std::string source;       // source id, or "all"
  int rows = 0;             // rows of this source
  int simulated = 0;        // rows that simulated (the statistics cover these)
  double mean_abs = 0;      // mean |error|
  double max_abs = 0;       // max |error|
  double mean_signed = 0;   // mean error: > 0 means parsim predicts too slow
  std::string worst_row;    // row id of max |error|
  double worst_error = 0;   // its signed error
};

inline ErrorStats summarize(const std::vector<RowResult>& results, const std::string& source = "") {
  ErrorStats s;
  s.source = source.empty() ? "all" : source;
  double sum_abs = 0, sum = 0;
  for (const auto& r : results) {
    if (!source.empty() && r.run->source_id() != source) continue;
    ++s.rows;
    if (!r.ok) continue;
    ++s.simulated;
    sum_abs += std::fabs(r.error);
    sum += r.error;
    if (s.worst_row.empty() || std::fabs(r.error) > s.max_abs) {
      s.max_abs = std::fabs(r.error);
      s.worst_row = r.run->row_id();
      s.worst_error = r.error;
    }
  }
  if (s.simulated > 0) {
    s.mean_abs = sum_abs / s.simulated;
    s.mean_signed = sum / s.simulated;
  }
  return s;
}

inline std::vector<ErrorStats> summarize_by_source(const std::vector<RowResult>& results) {
  std::vector<std::string> order;
  for (const auto& r : results)
    if (std::find(order.begin(), order.end(), r.run->source_id()) == order.end()) order.push_back(r.run->source_id());
  std::vector<ErrorStats> out;
  for (const auto& s : order) out.push_back(summarize(results, s));
  out.push_back(summarize(results));
  return out;
}

inline std::string percent(double x, int decimals = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.*f%%", decimals, 100.0 * x);
  return buf;
}

// The per-source table: source, rows (simulated/total), mean |err|, max |err|, mean signed err, worst row.
inline std::string format_source_table(const std::vector<ErrorStats>& stats) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-6s %9s %10s %10s %10s  %s\n", "source", "rows", "mean|err|", "max|err|",
                "mean err", "worst row (err)");
  out += buf;
  for (const auto& s : stats) {
    const std::string rows = std::to_string(s.simulated) + "/" + std::to_string(s.rows);
    std::snprintf(buf, sizeof buf, "%-6s %9s %9.1f%% %9.1f%% %10s  %s (%s)\n", s.source.c_str(), rows.c_str(),
                  100.0 * s.mean_abs, 100.0 * s.max_abs, percent(s.mean_signed).c_str(), s.worst_row.c_str(),
                  percent(s.worst_error).c_str());
    out += buf;
  }
  return out;
}

// The row's configuration in one short token: plan, seq, global/micro batch, recompute, precision, SP,
// e.g. "tp8pp2dp32 s2048 g1536 m1 full fp16 sp".
inline std::string short_args(const ScenarioInput& a) {
  const TrainingConfig& t = a.train;
  std::string s = a.plan + " s" + std::to_string(t.seq) + " g" + std::to_string(t.gbs) + " m" + std::to_string(t.mbs);
  s += " " + (t.recompute == Recompute::Selective ? std::string("sel") : to_string(t.recompute)) + " " +
       to_string(t.precision);
  if (t.sp) s += " sp";
  return s;
}

// Default location of the copied data (PARSIM_TEST_DATA is tests/data, set by the build).
inline std::string default_data_path() {
#ifdef PARSIM_TEST_DATA
  return std::string(PARSIM_TEST_DATA) + "/validation/published_runs_usable.csv";
#else
  return "tests/data/validation/published_runs_usable.csv";
#endif
}

}  // namespace parsim::validation
