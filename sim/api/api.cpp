// parsim sim/api — the commands as functions over option tables (see api.hpp).
#include "sim/api/api.hpp"

#include "sim/core/error.hpp"
#include "sim/core/file_io.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"
#include "sim/step/accuracy.hpp"
#include "sim/step/costs.hpp"
#include "sim/step/evaluate.hpp"

#include <algorithm>
#include <fstream>

namespace parsim::api {

namespace {

using nlohmann::json;
using option::choice;
using option::flag;
using option::integer;
using option::list;
using option::number;
using option::text;

// ---- shared rows -----------------------------------------------------------------------------------------------

OptionTable<TrainRun> train_run_table(unsigned use) {
  OptionTable<TrainRun> t;
  t.push_back(text<TrainRun>(
      "tokens", "--tokens", "training-run size in tokens (2e12, 300B, 2T): adds time-to-train", "",
      [](TrainRun& r, const std::string& v) { r.tokens = parse_token_count(v, "--tokens"); },
      [](const TrainRun& r) -> std::optional<std::string> {
        if (r.tokens <= 0) return std::nullopt;
        return option::num_text(r.tokens);
      },
      use));
  t.push_back(number<TrainRun>(
      "price_per_gpu_hour", "--price-per-gpu-hour", "dollars per GPU-hour: adds the run's cost (with --tokens)", "",
      "", [](TrainRun& r, double v) { r.price_per_gpu_hour = v, r.given_price = true; },
      [](const TrainRun& r) -> std::optional<double> {
        if (!r.given_price) return std::nullopt;
        return r.price_per_gpu_hour;
      },
      use));
  t.push_back(number<TrainRun>(
      "goodput", "--goodput",
      "fraction of wall time spent training after checkpoints, restarts and failures, in (0, 1]", "", "1",
      [](TrainRun& r, double v) {
        if (v > 1) throw InputError("--goodput must be a fraction in (0, 1], got '" + option::num_text(v) + "'");
        r.goodput = v;
      },
      [](const TrainRun& r) -> std::optional<double> { return r.goodput; }, use));
  return t;
}

void check_train_run(const TrainRun& r) {
  if (r.given_price && r.tokens <= 0)
    throw InputError("--price-per-gpu-hour needs --tokens (the run's size) to give a cost");
}

template <class T>
Option<T> format_row(std::vector<std::string> choices, std::string T::*m) {
  auto o = choice<T>(
      "format", "--format", "output format", std::move(choices), "table",
      [m](T& t, const std::string& v) { t.*m = v; }, [m](const T& t) -> std::optional<std::string> { return t.*m; },
      kUseCliOnly);
  return o;
}

template <class T>
void append(OptionTable<T>& to, const OptionTable<T>& rows) {
  to.insert(to.end(), rows.begin(), rows.end());
}

template <class T>
Option<T> scenario_file_row(ScenarioInput T::*m) {
  return text<T>(
      "scenario", "--scenario",
      "a scenario JSON file: the options above as keys, e.g. {\"model\": \"llama3-8b\", \"plan\": \"tp2dp32\", "
      "\"seq\": 8192, \"sp\": true} (examples/scenarios/); flags given as well override it",
      "", [m](T& t, const std::string& path) {
        // The strict reader (sim/core): repeated keys, depth, 1e400 and the file checks and size limit.
        const json j = parsim::parse_json_text(read_file_text(path, "--scenario file", kConfigFileLimit),
                                               "--scenario '" + path + "'");
        apply_scenario_json(j, path, t.*m);
      },
      [](const T&) -> std::optional<std::string> { return std::nullopt; });
}

// Applies a request's values: the "scenario" file first, then the scenario options (after rejecting contradictory
// pairs), then the rest — so flags given with --scenario override the file.
template <class T>
void apply_request(const OptionTable<T>& table, const std::vector<OptionValue>& values, T& req,
                   ScenarioInput* scenario) {
  std::vector<OptionValue> scen, rest;
  for (const auto& v : values) {
    const bool is_scenario = scenario && v.key != "scenario" && find_option(scenario_options(), v.key);
    (is_scenario ? scen : rest).push_back(v);
  }
  if (scenario) check_scenario_conflicts(scen);
  // File first, then the scenario flags, then everything else.
  for (const auto& v : rest)
    if (v.key == "scenario") apply_options(table, {v}, req);
  apply_options(table, scen, req);
  for (const auto& v : rest)
    if (v.key != "scenario") apply_options(table, {v}, req);
}

json parse_json_text(const std::string& text) { return json::parse(text); }

}  // namespace

// ---- predict -----------------------------------------------------------------------------------------------------

const OptionTable<PredictRequest>& predict_options() {
  static const OptionTable<PredictRequest> table = [] {
    OptionTable<PredictRequest> t = option::nested(scenario_options(), &PredictRequest::scenario, kUsePredict);
    t.push_back(scenario_file_row(&PredictRequest::scenario));
    append(t, option::nested(train_run_table(kUsePredict), &PredictRequest::run));
    t.push_back(text<PredictRequest>(
        "trace", "--trace", "also write the simulated timeline as Chrome/Perfetto trace JSON to this file", "",
        [](PredictRequest& r, const std::string& v) { r.trace = v; },
        [](const PredictRequest& r) -> std::optional<std::string> {
          if (r.trace.empty()) return std::nullopt;
          return r.trace;
        }));
    t.push_back(text<PredictRequest>(
        "svg", "--svg",
        "also write a picture of the step as a standalone SVG file: a lane per pipeline stage and per communication "
        "axis, passes by kind, the bubble, exposed communication, headline numbers",
        "", [](PredictRequest& r, const std::string& v) { r.svg = v; },
        [](const PredictRequest& r) -> std::optional<std::string> {
          if (r.svg.empty()) return std::nullopt;
          return r.svg;
        }));
    t.push_back(choice<PredictRequest>(
        "trace_detail", "--trace-detail", "per-layer slices in the trace, or one slice per pass",
        {"layers", "passes"}, "layers", [](PredictRequest& r, const std::string& v) { r.trace_layers = v == "layers"; },
        [](const PredictRequest& r) -> std::optional<std::string> { return r.trace_layers ? "layers" : "passes"; }));
    t.push_back(flag<PredictRequest>(
        "advice", "--advice",
        "add \"advice\" to the JSON: why the plan is slow or does not fit and what usually helps (from the simulated "
        "numbers), the memory each remedy frees, the largest micro-batch that fits (the table always shows it)",
        [](PredictRequest& r) { r.advice = true; }, [](const PredictRequest& r) { return r.advice; }));
    t.push_back(format_row<PredictRequest>({"table", "json"}, &PredictRequest::format));
    return t;
  }();
  return table;
}

PredictRequest predict_request(std::vector<OptionValue> values) {
  PredictRequest r;
  apply_request(predict_options(), values, r, &r.scenario);
  check_train_run(r.run);
  return r;
}

Prediction run_predict(const PredictRequest& r) {
  Prediction p;
  p.scenario = resolve_scenario(r.scenario);
  Evaluator ev;
  EvalOptions opt;
  opt.keep_timeline = !r.trace.empty() || !r.svg.empty();
  p.report = ev.run(p.scenario, opt);
  p.report.layer_kinds = layer_kind_reports(p.scenario, ev.costs());
  p.report.expected_error = expected_error(p.scenario);
  if (r.run.tokens > 0)
    p.train = train_estimate(p.scenario, p.report, r.run.tokens, r.run.price_per_gpu_hour, r.run.goodput);
  if (!r.trace.empty()) write_trace(r.trace, p.scenario, ev, p.report, r.trace_layers);
  if (!r.svg.empty()) write_text_file(r.svg, step_svg(p.scenario, ev, p.report), "--svg");
  return p;
}

json prediction_json(const PredictRequest& r, const Prediction& p) {
  json j = report_to_json(p.scenario, p.report, p.train);
  if (r.advice) j["advice"] = advice_json(advise(p.scenario, p.report));
  return j;
}

json predict(const json& request) {
  const PredictRequest r = predict_request(option_values_from_json(predict_options(), request, "predict"));
  return prediction_json(r, run_predict(r));
}

// ---- compare -----------------------------------------------------------------------------------------------------

const OptionTable<CompareRequest>& compare_options() {
  static const OptionTable<CompareRequest> table = [] {
    using R = CompareRequest;
    OptionTable<R> t;
    for (auto& o : option::nested(scenario_options(), &R::scenario, kUsePredict)) {
      if (o.key != "plan") {
        t.push_back(std::move(o));
        continue;
      }
      t.push_back(list<R>(
          "plan", "--plan", "the plans to compare: --plan repeated, or a comma list (tp8pp2dp4,tp4pp4dp4)",
          [](R& r, const std::string& v) {
            for (const std::string& p : split(v, ',')) {
              if (trim(p).empty()) throw InputError("--plan '" + v + "' has an empty item (write e.g. tp8pp2dp4,tp4pp4dp4)");
              r.plans.push_back(trim(p));
            }
          },
          [](const R& r) { return r.plans; }, kUsePredict, true));
    }
    t.push_back(scenario_file_row(&R::scenario));
    t.push_back(format_row<R>({"table", "json"}, &R::format));
    return t;
  }();
  return table;
}

CompareRequest compare_request(std::vector<OptionValue> values) {
  CompareRequest r;
  apply_request(compare_options(), values, r, &r.scenario);
  if (r.plans.size() < 2)
    throw InputError("compare needs at least two plans (--plan tp8pp2dp4 --plan tp4pp4dp4, or --plan a,b)");
  return r;
}

std::vector<Compared> run_compare(const CompareRequest& r) {
  std::vector<Compared> out;
  Evaluator ev;
  for (const std::string& plan : r.plans) {
    ScenarioInput in = r.scenario;
    in.plan = plan;
    Compared c{resolve_scenario(in), {}};
    c.report = ev.run(c.scenario);
    c.report.expected_error = expected_error(c.scenario);
    out.push_back(std::move(c));
  }
  return out;
}

json compare(const json& request) {
  return compare_json(run_compare(compare_request(option_values_from_json(compare_options(), request, "compare"))));
}

// ---- sweep -------------------------------------------------------------------------------------------------------

namespace {

template <class T, class Parse>
std::vector<T> parse_list(const std::string& s, const std::string& flag, Parse parse) {
  std::vector<T> out;
  if (s.empty()) return out;
  for (const std::string& item : split(s, ',')) {
    if (trim(item).empty()) throw InputError(flag + " '" + s + "' has an empty item (write e.g. 1,2,4)");
    out.push_back(parse(trim(item)));
  }
  return out;
}

std::string ints_text(const std::vector<int>& v) {
  std::string s;
  for (int x : v) join_to(s, ",", std::to_string(x));
  return s;
}

template <class T, class Name>
std::optional<std::string> list_text(const std::vector<T>& v, Name name) {
  if (v.empty()) return std::nullopt;
  std::string s;
  for (const T& x : v) join_to(s, ",", name(x));
  return s;
}

// A filter row: a comma list parsed into the SpaceFilter member.
Option<SweepRequest> int_filter(const std::string& key, const std::string& help, std::vector<int> SpaceFilter::*m) {
  const std::string f = "--" + key;
  return text<SweepRequest>(
      key, f, "filter: " + help, "any",
      [f, m](SweepRequest& r, const std::string& v) { r.setup.filter.*m = parse_int_list(v, f); },
      [m](const SweepRequest& r) -> std::optional<std::string> {
        if ((r.setup.filter.*m).empty()) return std::nullopt;
        return ints_text(r.setup.filter.*m);
      },
      kUseSweep);
}

void parse_shard(const std::string& s, SweepOptions& opt) {
  const auto parts = split(s, '/');
  const std::string bad = "--shard '" + s + "' is not valid (write i/N with 0 ≤ i < N, e.g. 0/4)";
  if (parts.size() != 2) throw InputError(bad);
  const std::string i = trim(parts[0]), n = trim(parts[1]);
  auto digits = [](const std::string& x) {
    return !x.empty() && x.size() <= 9 && x.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(i) || !digits(n)) throw InputError(bad);
  opt.shard_index = std::stoi(i);
  opt.shard_count = std::stoi(n);
  if (opt.shard_count < 1 || opt.shard_index >= opt.shard_count) throw InputError(bad);
}

OptionTable<SweepRequest> build_sweep_table() {
  using R = SweepRequest;
  OptionTable<R> t;
  // Scenario options the sweep takes as fixed inputs (model, gpu, seq, gbs, precision, framework options).
  for (const auto& o : scenario_options()) {
    if (!(o.use & kUseSweep)) continue;
    Option<R> r;
    r.key = o.key, r.flag = o.flag, r.kind = o.kind, r.help = o.help, r.unit = o.unit, r.choices = o.choices;
    r.default_text = o.default_text, r.use = o.use, r.required = o.required;
    if (o.key == "gbs") r.default_text = "⌈4,194,304 / seq⌉, the same for every plan";
    auto set = o.set;
    auto get = o.get;
    r.set = [set](R& x, const std::string& v) { set(x.setup.base, v); };
    r.get = [get](const R& x) { return get(x.setup.base); };
    if (o.key == "stack") {
      // The sweep compares plans on ONE stack (Megatron when auto: fsdp is then Megatron-FSDP) unless given a list;
      // every result names its stack.
      r.kind = OptionKind::Text;
      r.help = "software stack(s) every plan runs on: one of auto, megatron, megatron-legacy, pytorch, or a comma list "
               "to compare stacks (auto: megatron for every scheme; results never switch stacks silently)";
      r.default_text = "megatron";
      r.set = [](R& x, const std::string& v) {
        x.setup.stacks = parse_list<Stack>(v, "--stack", [](const std::string& s) { return parse_stack(s); });
        for (Stack& s : x.setup.stacks)
          if (s == Stack::Auto) s = Stack::Megatron;
        std::sort(x.setup.stacks.begin(), x.setup.stacks.end());
        x.setup.stacks.erase(std::unique(x.setup.stacks.begin(), x.setup.stacks.end()), x.setup.stacks.end());
        x.setup.base.train.stack = x.setup.stacks.size() == 1 ? x.setup.stacks.front() : Stack::Auto;
      };
      r.get = [](const R& x) -> std::optional<std::string> {
        return list_text(x.setup.stacks, [](Stack s) { return to_string(s); });
      };
    }
    t.push_back(std::move(r));
  }
  t.push_back(integer<R>(
      "gpus", "--gpus", "number of GPUs to plan for", "GPUs", "", std::int64_t{1} << 24,
      [](R& r, std::int64_t v) { r.setup.gpus = static_cast<int>(v); },
      [](const R& r) -> std::optional<std::int64_t> {
        if (r.setup.gpus <= 0) return std::nullopt;
        return r.setup.gpus;
      },
      kUseSweep));
  t.back().required = true;
  t.push_back(integer<R>(
      "top", "--top", "how many plans to list", "", "10", std::int64_t{1} << 30,
      [](R& r, std::int64_t v) { r.listing.top = static_cast<int>(v); },
      [](const R& r) -> std::optional<std::int64_t> { return r.listing.top; }, kUseSweep));
  t.push_back(flag<R>(
      "all", "--all", "list every plan that fits (CSV: every feasible plan)", [](R& r) { r.listing.all = true; },
      [](const R& r) { return r.listing.all; }, kUseSweep));
  t.push_back(integer<R>(
      "threads", "--threads", "worker threads", "", "all cores", 4096,
      [](R& r, std::int64_t v) { r.options.threads = static_cast<int>(v); },
      [](const R& r) -> std::optional<std::int64_t> {
        if (r.options.threads <= 0) return std::nullopt;
        return r.options.threads;
      },
      kUseSweep));
  t.push_back(text<R>(
      "shard", "--shard", "evaluate only shard i of N (i/N, 0 ≤ i < N) for a job array; see merge", "",
      [](R& r, const std::string& v) { parse_shard(v, r.options); },
      [](const R& r) -> std::optional<std::string> {
        if (r.options.shard_count <= 1) return std::nullopt;
        return std::to_string(r.options.shard_index) + "/" + std::to_string(r.options.shard_count);
      },
      kUseSweep));
  append(t, option::nested(train_run_table(kUseSweep), &R::run));
  t.push_back(int_filter("tp", "tensor-parallel degrees, e.g. 1,2,4,8", &SpaceFilter::tp));
  t.push_back(int_filter("pp", "pipeline degrees", &SpaceFilter::pp));
  t.push_back(int_filter("dp", "data-parallel degrees", &SpaceFilter::dp));
  t.push_back(int_filter("cp", "context-parallel degrees (default powers of two)", &SpaceFilter::cp));
  t.push_back(int_filter("vpp", "virtual pipeline chunks per stage", &SpaceFilter::vpp));
  t.push_back(int_filter("mbs", "micro-batch sizes (default powers of two)", &SpaceFilter::mbs));
  t.push_back(int_filter("ep", "expert-parallel degrees (MoE models; default every divisor of the experts)",
                         &SpaceFilter::ep));
  t.push_back(int_filter("etp", "expert tensor-parallel degrees (MoE models; default 1 and tp)", &SpaceFilter::etp));
  {
    auto o = text<R>(
        "zero", "--zero,--sharding", "filter: 0,1,2,3,fsdp,hsdp", "any",
        [](R& r, const std::string& v) {
          r.setup.filter.sharding = parse_list<Sharding>(v, "--zero", [](const std::string& x) { return parse_sharding(x); });
        },
        [](const R& r) { return list_text(r.setup.filter.sharding, [](Sharding s) { return to_string(s); }); },
        kUseSweep);
    t.push_back(std::move(o));
  }
  t.push_back(text<R>(
      "recompute", "--recompute", "filter: none,selective,full,op (op: torchtitan's per-op checkpointing, PyTorch stack; only when listed)", "any",
      [](R& r, const std::string& v) {
        r.setup.filter.recompute =
            parse_list<Recompute>(v, "--recompute", [](const std::string& x) { return parse_recompute(x); });
      },
      [](const R& r) { return list_text(r.setup.filter.recompute, [](Recompute x) { return to_string(x); }); },
      kUseSweep));
  t.push_back(text<R>(
      "sp", "--sp", "filter: sequence parallelism on, off or on,off", "any",
      [](R& r, const std::string& v) {
        r.setup.filter.sp = parse_list<int>(v, "--sp", [&](const std::string& x) {
          const std::string l = to_lower(x);
          if (l == "on" || l == "1" || l == "true" || l == "yes") return 1;
          if (l == "off" || l == "0" || l == "false" || l == "no") return 0;
          throw InputError("--sp '" + x + "' is not valid (choose on, off or on,off)");
        });
      },
      [](const R& r) { return list_text(r.setup.filter.sp, [](int x) { return std::string(x ? "on" : "off"); }); },
      kUseSweep));
  t.push_back(text<R>(
      "schedule", "--schedule",
      "filter: a comma list of gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v, dualpipe, dualpipev (each where its "
      "preconditions hold: zb-v and dualpipev on vpp2 plans)",
      "1f1b + interleaved",
      [](R& r, const std::string& v) {
        r.setup.filter.schedule =
            parse_list<Schedule>(v, "--schedule", [](const std::string& x) { return parse_schedule(x); });
      },
      [](const R& r) { return list_text(r.setup.filter.schedule, [](Schedule x) { return to_string(x); }); },
      kUseSweep));
  t.push_back(integer<R>(
      "max_tp_per_node", "--max-tp-per-node", "largest tp (more spans nodes)", "", "GPUs per node", 1 << 20,
      [](R& r, std::int64_t v) { r.setup.filter.max_tp_per_node = static_cast<int>(v); },
      [](const R& r) -> std::optional<std::int64_t> {
        if (r.setup.filter.max_tp_per_node <= 0) return std::nullopt;
        return r.setup.filter.max_tp_per_node;
      },
      kUseSweep));
  t.push_back(number<R>(
      "headroom_gib", "--headroom-gib", "safety margin: a plan fits only with this much memory left below the GPU's "
      "capacity (fragmentation spikes, a different allocator, a longer sequence later)",
      "GiB", "0", [](R& r, double v) { r.headroom_gib = v; },
      [](const R& r) -> std::optional<double> {
        if (r.headroom_gib <= 0) return std::nullopt;
        return r.headroom_gib;
      },
      kUseSweep));
  t.push_back(text<R>(
      "svg", "--svg",
      "also write a picture of the sweep as a standalone SVG file: every feasible plan (step time against peak "
      "memory per GPU), the Pareto front, the capacity line, the fastest plans labelled",
      "", [](R& r, const std::string& v) { r.svg = v; },
      [](const R& r) -> std::optional<std::string> {
        if (r.svg.empty()) return std::nullopt;
        return r.svg;
      },
      kUseSweep));
  t.push_back(format_row<R>({"table", "json", "csv"}, &R::format));
  return t;
}

}  // namespace

const OptionTable<SweepRequest>& sweep_options() {
  static const OptionTable<SweepRequest> table = build_sweep_table();
  return table;
}

SweepRequest sweep_request(const std::vector<OptionValue>& values) {
  SweepRequest r;
  std::vector<OptionValue> scen;
  for (const auto& v : values)
    if (find_option(scenario_options(), v.key)) scen.push_back(v);
  check_scenario_conflicts(scen);
  apply_options(sweep_options(), values, r);
  if (r.setup.base.model.empty()) throw InputError("--model is required (a built-in name or a model JSON path)");
  if (r.setup.gpus <= 0) throw InputError("--gpus is required (the number of GPUs to plan for)");
  check_train_run(r.run);
  if (r.run.tokens > 0) {
    r.options.tokens = r.run.tokens;
    r.options.price_per_gpu_hour = r.run.price_per_gpu_hour;
    r.options.goodput = r.run.goodput;
  }
  return r;
}

void apply_headroom(SweepReport& rep, double headroom_gib) {
  if (headroom_gib <= 0) return;
  const std::string reason = "out of memory (headroom " + fmt_fixed(headroom_gib, 1) + " GiB)";
  std::vector<PlanResult> kept;
  kept.reserve(rep.ranked.size());
  for (PlanResult& p : rep.ranked) {
    if (p.peak_gib <= p.capacity_gib - headroom_gib) {
      kept.push_back(std::move(p));
    } else {
      ++rep.rejected[reason];
      --rep.feasible;
    }
  }
  rep.ranked = std::move(kept);
  rep.pareto = pareto_front(rep.ranked);
}

SweepReport run_sweep(const SweepRequest& r) {
  SweepReport rep = parsim::run_sweep(r.setup, r.options);
  apply_headroom(rep, r.headroom_gib);
  if (!r.svg.empty()) write_text_file(r.svg, sweep_svg(rep, r.headroom_gib), "--svg");
  return rep;
}

json sweep(const json& request) {
  const SweepRequest r = sweep_request(option_values_from_json(sweep_options(), request, "sweep"));
  return parse_json_text(sweep_to_json(run_sweep(r), r.listing));
}

// ---- merge -------------------------------------------------------------------------------------------------------

const OptionTable<MergeRequest>& merge_options() {
  static const OptionTable<MergeRequest> table = [] {
    using R = MergeRequest;
    OptionTable<R> t;
    t.push_back(list<R>(
        "files", "", "sweep outputs (parsim sweep --shard i/N --format json|csv)",
        [](R& r, const std::string& v) { r.files.push_back(v); }, [](const R& r) { return r.files; }, kUseSweep, true));
    t.push_back(integer<R>(
        "top", "--top", "how many plans to list", "", "10", std::int64_t{1} << 30,
        [](R& r, std::int64_t v) { r.listing.top = static_cast<int>(v); },
        [](const R& r) -> std::optional<std::int64_t> { return r.listing.top; }, kUseSweep));
    t.push_back(flag<R>(
        "all", "--all", "list every plan the inputs hold", [](R& r) { r.listing.all = true; },
        [](const R& r) { return r.listing.all; }, kUseSweep));
    t.push_back(flag<R>(
        "partial", "--partial",
        "rank what the inputs hold even when shards of the sweep are missing or an input is CSV (without counts); "
        "the output then says complete: false / counts_known: false",
        [](R& r) { r.partial = true; }, [](const R& r) { return r.partial; }, kUseSweep));
    t.push_back(format_row<R>({"table", "json", "csv"}, &R::format));
    return t;
  }();
  return table;
}

MergeRequest merge_request(const std::vector<OptionValue>& values) {
  MergeRequest r;
  apply_options(merge_options(), values, r);
  if (r.files.empty()) throw InputError("merge needs the sweep files to combine (parsim merge a.json b.json …)");
  return r;
}

SweepReport run_merge(const MergeRequest& r) {
  std::vector<SweepReport> shards;
  for (const std::string& f : r.files) shards.push_back(read_sweep_file(f));
  return merge_sweeps(shards, r.files, r.partial);
}

json merge(const json& request) {
  const MergeRequest r = merge_request(option_values_from_json(merge_options(), request, "merge"));
  return parse_json_text(sweep_to_json(run_merge(r), r.listing));
}

// ---- profile -----------------------------------------------------------------------------------------------------

const OptionTable<ProfileRequest>& profile_options() {
  static const OptionTable<ProfileRequest> table = [] {
    using R = ProfileRequest;
    OptionTable<R> t;
    t.push_back(list<R>(
        "files", "", "Kineto Chrome-trace JSON files (plain or .gz), one per rank",
        [](R& r, const std::string& v) { r.files.push_back(v); }, [](const R& r) { return r.files; }, kUsePredict,
        true));
    t.push_back(flag<R>(
        "all_kernels", "--all-kernels", "also count GPU events that no CPU launch is linked to",
        [](R& r) { r.options.all_kernels = true; }, [](const R& r) { return r.options.all_kernels; }));
    t.push_back(flag<R>(
        "steps", "--steps", "measure only GPU work launched in the ProfilerStep windows (HTA's view)",
        [](R& r) { r.options.steps = true; }, [](const R& r) { return r.options.steps; }));
    t.push_back(text<R>(
        "svg", "--svg",
        "also write a picture of the ranks as a standalone SVG file: compute, exposed communication, exposed "
        "memcpy and idle per rank, the slowest rank marked",
        "", [](R& r, const std::string& v) { r.svg = v; },
        [](const R& r) -> std::optional<std::string> {
          if (r.svg.empty()) return std::nullopt;
          return r.svg;
        }));
    t.push_back(format_row<R>({"table", "json"}, &R::format));
    return t;
  }();
  return table;
}

ProfileRequest profile_request(const std::vector<OptionValue>& values) {
  ProfileRequest r;
  apply_options(profile_options(), values, r);
  if (r.files.empty()) throw InputError("profile needs trace files (parsim profile rank0.json.gz …)");
  return r;
}

RanksPicture ranks_picture(const ProfileReport& rep) {
  RanksPicture p;
  p.title = "parsim profile: " + std::to_string(rep.ranks.size()) + (rep.ranks.size() == 1 ? " rank" : " ranks");
  int most_compute = -1;
  for (std::size_t i = 0; i < rep.ranks.size(); ++i) {
    const RankProfile& r = rep.ranks[i];
    RankBar b;
    b.label = "rank " + std::to_string(r.rank);
    b.total_s = r.total_s;
    b.compute_s = r.compute_s;
    b.comm_s = r.comm_s;
    b.exposed_comm_s = r.exposed_comm_s;
    b.exposed_memcpy_s = r.exposed_memcpy_s;
    b.idle_s = r.idle_s;
    p.ranks.push_back(b);
    if (most_compute < 0 || r.compute_s > rep.ranks[static_cast<std::size_t>(most_compute)].compute_s)
      most_compute = static_cast<int>(i);
  }
  for (std::size_t i = 0; i < rep.ranks.size(); ++i)
    if (rep.straggler_rank >= 0 && rep.ranks[i].rank == rep.straggler_rank) p.straggler = static_cast<int>(i);
  if (p.straggler >= 0) {
    p.notes.push_back("slowest: rank " + std::to_string(rep.straggler_rank) +
                      ", the last to arrive at the collectives (mean lateness over the matched collectives)");
  } else if (rep.ranks.size() > 1) {
    p.straggler = most_compute;
    p.notes.push_back("slowest: rank " + std::to_string(rep.ranks[static_cast<std::size_t>(most_compute)].rank) +
                      ", the most compute (no collectives matched across ranks to time arrivals)");
  }
  if (!rep.ranks.empty()) {
    const RankProfile& r0 = rep.ranks.front();
    const std::string base = r0.file.substr(r0.file.find_last_of('/') == std::string::npos ? 0 : r0.file.find_last_of('/') + 1);
    std::string line = "files: " + base + (rep.ranks.size() > 1 ? ", …" : "");
    if (!r0.device.empty() && r0.device != "unknown") line += "  ·  " + r0.device;
    p.notes.push_back(line);
  }
  return p;
}

ProfileReport run_profile(const ProfileRequest& r) {
  ProfileReport rep = profile_traces(r.files, r.options);
  if (!r.svg.empty()) write_text_file(r.svg, ranks_svg(ranks_picture(rep)), "--svg");
  return rep;
}

json profile(const json& request) {
  return parse_json_text(
      profile_json(run_profile(profile_request(option_values_from_json(profile_options(), request, "profile")))));
}

// ---- calibrate ---------------------------------------------------------------------------------------------------

const OptionTable<CalibrateRequest>& calibrate_options() {
  static const OptionTable<CalibrateRequest> table = [] {
    using R = CalibrateRequest;
    auto str = [](const char* key, const char* flag_name, const char* help, std::string R::*m) {
      return text<R>(
          key, flag_name, help, "", [m](R& r, const std::string& v) { r.*m = v; },
          [m](const R& r) -> std::optional<std::string> {
            if ((r.*m).empty()) return std::nullopt;
            return r.*m;
          });
    };
    auto count = [](const char* key, const char* flag_name, const char* help, const char* def, int R::*m) {
      return integer<R>(
          key, flag_name, help, "", def, 1 << 24, [m](R& r, std::int64_t v) { r.*m = static_cast<int>(v); },
          [m](const R& r) -> std::optional<std::int64_t> {
            if (r.*m <= 0) return std::nullopt;
            return r.*m;
          });
    };
    OptionTable<R> t;
    t.push_back(str("file", "", "text output of all_reduce_perf & co. (as pasted, srun prefixes allowed)", &R::file));
    t.back().required = true;
    t.push_back(str("out", "--out", "write a hardware JSON file (for --gpu) with the fitted values in the measured tier",
                    &R::out));
    t.push_back(str("gpu", "--gpu", "preset or hardware file the --out file starts from (default: from the device list)",
                    &R::gpu));
    t.push_back(count("gpus_per_node", "--gpus-per-node", "GPUs per node", "the preset's, 8", &R::gpus_per_node));
    t.push_back(count("ranks", "--ranks", "ranks that ran the benchmark", "the device list or busbw/algbw", &R::ranks));
    t.push_back(count("nodes", "--nodes", "nodes the ranks ran on", "the device list's hosts", &R::nodes));
    t.push_back(str("device", "--device",
                    "GEMM table: which device's shapes to fit (XLA's device key, or the gpu column of a CSV)",
                    &R::device));
    t.push_back(number<R>(
        "min_gflop", "--min-gflop",
        "GEMM table: fit the shapes of at least this many GFLOP per call (smaller ones are their launch ramp)",
        "GFLOP", "30", [](R& r, double v) { r.min_gflop = v; },
        [](const R& r) -> std::optional<double> {
          if (r.min_gflop <= 0) return std::nullopt;
          return r.min_gflop;
        },
        kUsePredict));
    t.push_back(choice<R>(
        "precision", "--precision",
        "GEMM table: bf16 fits gemm_ceiling and gemm_k_half, fp8 fits gemm_ceiling_fp8 at the base's k_half",
        {"bf16", "fp8"}, "bf16", [](R& r, const std::string& v) { r.precision = v; },
        [](const R& r) -> std::optional<std::string> {
          if (r.precision.empty()) return std::nullopt;
          return r.precision;
        },
        kUsePredict));
    t.push_back(format_row<R>({"table", "json"}, &R::format));
    return t;
  }();
  return table;
}

CalibrateRequest calibrate_request(const std::vector<OptionValue>& values) {
  CalibrateRequest r;
  apply_options(calibrate_options(), values, r);
  if (r.file.empty()) throw InputError("calibrate needs the benchmark output file (parsim calibrate all_reduce.txt)");
  return r;
}

namespace {
// A GEMM table: fit the GPU's GEMM ceiling and k-loop constant (sim/measure/calibrate_gemm.hpp).
CalibrationResult run_calibrate_gemm(const CalibrateRequest& r, const std::string& text_body) {
  if (r.ranks > 0 || r.nodes > 0)
    throw InputError("--ranks and --nodes describe a collective benchmark; '" + r.file + "' is a GEMM table");
  const bool fp8 = r.precision == "fp8";
  const GemmTable table = parse_gemm_table(text_body, r.file, fp8);
  const std::string device = gemm_table_device(table, r.device);
  GemmFitOptions opt;
  opt.device = device;
  opt.fp8 = fp8;
  if (r.min_gflop > 0) opt.min_gflop = r.min_gflop;
  // The base hardware: --gpu, else the preset the device key names.
  std::string base = r.gpu;
  if (base.empty()) base = preset_for_gemm_device(device);
  if (base.empty())
    throw InputError("calibrate: cannot tell which GPU ran the GEMM table" +
                     (device.empty() ? std::string() : " (device '" + shown(device) + "')") +
                     "; pass --gpu with a preset name or hardware file (its peak, SMs and HBM are the model's)");
  const Hardware hw = resolve_hardware(base, r.gpus_per_node);
  CalibrationResult out;
  out.gemm = calibrate_gemm(table, hw, base, opt);
  out.gemm->file = r.file;
  if (!r.out.empty()) {
    write_output_file(r.out, gemm_calibration_hardware_json(*out.gemm, hw), "--out file");
    out.gemm->notes.push_back("wrote " + r.out);
  }
  return out;
}
}  // namespace

std::string calibration_result_text(const CalibrationResult& c, const std::string& format) {
  if (c.gemm) return format == "json" ? gemm_calibration_json(*c.gemm) : gemm_calibration_table(*c.gemm);
  return format == "json" ? calibration_json(c.fits, c.primary) : calibration_table(c.fits, c.primary);
}

CalibrationResult run_calibrate(const CalibrateRequest& r) {
  const std::string text_body = read_file_text(r.file, "benchmark file", kTextFileLimit);
  if (looks_like_gemm_table(text_body)) return run_calibrate_gemm(r, text_body);
  if (!r.device.empty() || r.min_gflop > 0 || !r.precision.empty())
    throw InputError("--device, --min-gflop and --precision apply to GEMM tables; '" + r.file +
                     "' reads as a collective benchmark");
  const NcclTestFile parsed = parse_nccl_tests(text_body, r.file);
  CalibrateOptions opt;
  opt.ranks = r.ranks;
  opt.nodes = r.nodes;
  opt.gpus_per_node = r.gpus_per_node > 0 ? r.gpus_per_node : 8;
  CalibrationResult out;
  for (std::size_t i = 0; i < parsed.blocks.size(); ++i) out.fits.push_back(calibrate_block(parsed, i, opt));
  out.primary = primary_block(parsed);
  if (!r.out.empty()) {
    Calibration& fit = out.fits[out.primary];
    const std::string hw = calibration_hardware_json(fit, r.gpu, r.gpus_per_node, fit.notes);
    write_output_file(r.out, hw, "--out file");  // directory, missing directory, full disk: one line naming the reason
    fit.notes.push_back("wrote " + r.out);
  }
  return out;
}

json calibrate(const json& request) {
  const CalibrationResult c =
      run_calibrate(calibrate_request(option_values_from_json(calibrate_options(), request, "calibrate")));
  return parse_json_text(calibration_result_text(c, "json"));
}

// ---- validate ----------------------------------------------------------------------------------------------------

const OptionTable<ValidateRequest>& validate_options() {
  static const OptionTable<ValidateRequest> table = [] {
    using R = ValidateRequest;
    OptionTable<R> t;
    t.push_back(list<R>(
        "profile", "--profile", "Kineto trace files of the run (one per rank)",
        [](R& r, const std::string& v) { r.profiles.push_back(v); }, [](const R& r) { return r.profiles; },
        kUsePredict, true));
    append(t, option::nested(scenario_options(), &R::scenario, kUsePredict));
    t.push_back(scenario_file_row(&R::scenario));
    t.push_back(flag<R>(
        "all_kernels", "--all-kernels", "count GPU events with no CPU launch in the measurement too",
        [](R& r) { r.all_kernels = true; }, [](const R& r) { return r.all_kernels; }));
    t.push_back(format_row<R>({"table", "json"}, &R::format));
    return t;
  }();
  return table;
}

ValidateRequest validate_request(std::vector<OptionValue> values) {
  ValidateRequest r;
  apply_request(validate_options(), values, r, &r.scenario);
  if (r.profiles.empty()) throw InputError("--profile is required (the Kineto trace files of the run)");
  return r;
}

ValidationResult run_validate(const ValidateRequest& r) {
  const Scenario sc = resolve_scenario(r.scenario);
  const StepReport rep = evaluate(sc);
  ProfileOptions popt;
  popt.steps = true;  // per-step figures: the ProfilerStep windows
  popt.all_kernels = r.all_kernels;
  const ProfileReport prof = profile_traces(r.profiles, popt);
  ValidationResult out;
  Validation& v = out.validation;
  v = measure_for_validation(prof);
  const auto stage = static_cast<std::size_t>(rep.critical_stage);
  if (stage >= rep.stages.size()) throw InputError("validate: the simulation reported no pipeline stage");
  const StageMetrics& st = rep.stages[stage];
  v.predicted.step_time_s = rep.step_time_s;
  v.predicted.compute_s = st.compute_s;
  v.predicted.comm_s = st.comm_s;
  v.predicted.exposed_comm_s = st.exposed_comm_s;
  v.predicted.idle_s = st.idle_s;
  v.predicted.memory_peak_gib = st.allocated_peak_gib > 0 ? st.allocated_peak_gib : rep.memory.allocated_peak_gib;
  const int world = sc.plan.world();
  for (const auto& pr : prof.ranks)
    if (pr.world_size > 0 && pr.world_size != world) {
      v.notes.push_back("the trace's world size is " + std::to_string(pr.world_size) + " but the plan uses " +
                        std::to_string(world) + " GPUs");
      break;
    }
  out.prediction["model"] = utf8_sanitize(r.scenario.model);  // flags may hold any bytes; JSON output must be UTF-8
  out.prediction["plan"] = utf8_sanitize(r.scenario.plan);
  out.prediction["gpu"] = utf8_sanitize(r.scenario.gpu);
  out.prediction["critical_stage"] = rep.critical_stage;
  out.prediction["mfu"] = rep.mfu;
  out.prediction["bubble_fraction"] = rep.bubble_fraction;
  // The step-time error beside what parsim typically misses a step of this regime by (sim/step/accuracy.hpp).
  const ExpectedError e = expected_error(sc);
  out.prediction["expected_error"] = expected_error_json(e);
  if (v.measured.step_time_s > 0) {
    const double err = 100 * (v.predicted.step_time_s - v.measured.step_time_s) / v.measured.step_time_s;
    v.notes.push_back("the step-time error " + fmt_fixed(err, 1) + " % is " +
                      (std::fabs(err) <= e.typical_pct ? "within" : "beyond") + " the ±" + fmt_fixed(e.typical_pct, 1) +
                      " % parsim typically misses a " + e.label + " by (out of sample; hardware/accuracy.json)");
  }
  return out;
}

json validate(const json& request) {
  const ValidationResult v =
      run_validate(validate_request(option_values_from_json(validate_options(), request, "validate")));
  return parse_json_text(validation_json(v.validation, dump_output(v.prediction, -1)));
}

}  // namespace parsim::api
