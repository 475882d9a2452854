// parsim sim/present — sweep output (JSON per docs/cli.md, CSV, table) and reading it back. One field table,
// result_fields(), is the schema of a result row: its JSON keys, CSV columns, types, and how each is read back;
// per-axis columns come from kAxes.
#include "sim/present/sweep_io.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"
#include "sim/present/fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>

namespace parsim {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;  // output keeps a reading order; input accepts any order

std::size_t listed_count(const SweepReport& r, const SweepListing& l) {
  if (l.all) return r.ranked.size();
  return std::min(r.ranked.size(), static_cast<std::size_t>(std::max(0, l.top)));
}

std::string join_flags(const std::vector<std::string>& flags) {
  std::string s = "parsim predict";
  for (const std::string& f : flags) {
    const bool quote = f.empty() || f.find_first_of(" \t'\"$\\") != std::string::npos;
    s += ' ';
    if (quote) s.append("'").append(f).append("'");
    else s += f;
  }
  return s;
}

// The schema of one result row.
const FieldTable<PlanResult>& result_fields() {
  static const FieldTable<PlanResult> table = [] {
    using R = PlanResult;
    using T = FieldType;
    FieldTable<R> t;
    auto add = [&](std::string path, std::string csv, T type, std::function<ojson(const R&)> get,
                   std::function<void(R&, const json&)> set, bool optional = false) {
      t.push_back(Field<R>{std::move(path), std::move(csv), type, optional, std::move(get), std::move(set)});
    };
    auto num = [&](std::string path, std::string csv, double R::*m) {
      add(std::move(path), std::move(csv), T::Num, [m](const R& r) { return ojson(r.*m); },
          [m](R& r, const json& v) { r.*m = v.get<double>(); });
    };
    add("plan", "plan", T::Text, [](const R& r) { return ojson(r.plan.to_string()); },
        [](R& r, const json& v) { r.plan = parse_plan(v.get<std::string>()); });
    // CSV only: the plan's degrees by axis, etp, vpp and the sharding term (derived from the plan).
    for (Axis a : kAxes)
      add("", axis_name(a), T::Int, [a](const R& r) { return ojson(r.plan.degree(a)); }, nullptr);
    add("", "etp", T::Int, [](const R& r) { return ojson(r.plan.expert_tp()); }, nullptr);
    add("", "vpp", T::Int, [](const R& r) { return ojson(r.plan.vpp); }, nullptr);
    add("", "sharding", T::Text, [](const R& r) {
      const ShardingTraits& st = sharding_traits(r.plan.sharding);
      return ojson(st.term + (st.term_takes_group ? std::to_string(r.plan.hsdp_group) : std::string()));
    }, nullptr);
    add("mbs", "mbs", T::Int, [](const R& r) { return ojson(r.mbs); }, [](R& r, const json& v) { r.mbs = v.get<std::int64_t>(); });
    add("recompute", "recompute", T::Text, [](const R& r) { return ojson(to_string(r.recompute)); },
        [](R& r, const json& v) { r.recompute = parse_recompute(v.get<std::string>()); });
    add("sp", "sp", T::Bool, [](const R& r) { return ojson(r.sp); }, [](R& r, const json& v) { r.sp = v.get<bool>(); });
    add("schedule", "schedule", T::Text, [](const R& r) { return ojson(to_string(r.schedule)); },
        [](R& r, const json& v) { r.schedule = parse_schedule(v.get<std::string>()); });
    add("precision", "precision", T::Text, [](const R& r) { return ojson(to_string(r.precision)); },
        [](R& r, const json& v) { r.precision = parse_precision(v.get<std::string>()); });
    add("stack", "stack", T::Text, [](const R& r) { return ojson(to_string(r.stack)); },
        [](R& r, const json& v) { r.stack = parse_stack(v.get<std::string>()); });
    add("seq", "seq", T::Int, [](const R& r) { return ojson(r.seq); }, [](R& r, const json& v) { r.seq = v.get<std::int64_t>(); });
    add("gbs", "gbs", T::Int, [](const R& r) { return ojson(r.gbs); }, [](R& r, const json& v) { r.gbs = v.get<std::int64_t>(); });
    num("step_time_s", "step_time_s", &R::step_time_s);
    num("mfu", "mfu", &R::mfu);
    num("hfu", "hfu", &R::hfu);
    num("tflops_per_gpu", "tflops_per_gpu", &R::tflops_per_gpu);
    num("tokens_per_s", "tokens_per_s", &R::tokens_per_s);
    num("bubble_fraction", "bubble_fraction", &R::bubble_fraction);
    num("exposed_comm_s", "exposed_comm_s", &R::exposed_comm_s);
    for (Axis a : kAxes)
      add(std::string("exposed_comm_by_kind_s.") + axis_name(a), std::string("exposed_") + axis_name(a) + "_s", T::Num,
          [a](const R& r) { return ojson(r.exposed_by_kind_s[a]); },
          [a](R& r, const json& v) { r.exposed_by_kind_s[a] = v.get<double>(); });
    num("memory.peak_gib", "peak_gib", &R::peak_gib);
    num("memory.allocated_peak_gib", "allocated_peak_gib", &R::allocated_peak_gib);
    num("memory.required_gib", "required_gib", &R::required_gib);
    num("memory.capacity_gib", "capacity_gib", &R::capacity_gib);
    add("memory.fits", "fits", T::Bool, [](const R& r) { return ojson(r.fits); }, [](R& r, const json& v) { r.fits = v.get<bool>(); });
    add("main_loss.kind", "main_loss", T::Text, [](const R& r) { return ojson(r.main_loss); },
        [](R& r, const json& v) { r.main_loss = v.get<std::string>(); });
    num("main_loss.fraction", "main_loss_fraction", &R::main_loss_fraction);
    add("train.days", "train_days", T::Num, [](const R& r) { return r.has_train ? ojson(r.train_days) : ojson(); },
        [](R& r, const json& v) { r.has_train = true, r.train_days = v.get<double>(); }, true);
    add("train.gpu_hours", "gpu_hours", T::Num, [](const R& r) { return r.has_train ? ojson(r.gpu_hours) : ojson(); },
        [](R& r, const json& v) { r.gpu_hours = v.get<double>(); }, true);
    add("train.cost_usd", "cost_usd", T::Num, [](const R& r) { return r.has_cost ? ojson(r.cost_usd) : ojson(); },
        [](R& r, const json& v) { r.has_cost = true, r.cost_usd = v.get<double>(); }, true);
    return t;
  }();
  return table;
}

ojson result_json(const SweepReport& rep, const PlanResult& r, std::size_t rank) {
  ojson j;
  j["rank"] = rank;
  fields_to_json(result_fields(), r, j);
  std::vector<std::string> flags = rep.base_flags;
  const auto own = result_flags(r);
  flags.insert(flags.end(), own.begin(), own.end());
  j["predict"] = join_flags(flags);
  return j;
}

PlanResult result_from_json(const json& j, const std::string& where) {
  PlanResult r;
  fields_from_json(result_fields(), j, r, where, {"rank", "predict"});
  return r;
}

// CSV: rank, the result fields, then the sweep's identity on every row.
std::vector<std::string> csv_columns() {
  std::vector<std::string> cols{"rank"};
  for (const auto& c : csv_header(result_fields())) cols.push_back(c);
  for (const char* c : {"model", "gpu", "gpus"}) cols.push_back(c);
  return cols;
}

SweepReport read_csv(const std::string& text, const std::string& path) {
  if (std::size_t bad = 0; !is_valid_utf8(text, &bad))  // its text goes to JSON output, which must be UTF-8
    throw InputError(path + " line " + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n')) +
                     ": not valid UTF-8 text (byte " + std::to_string(bad) + ")");
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": empty CSV (expected a parsim sweep --format csv file)");
  const auto header = csv_split(line);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const std::string& c : csv_columns())
    if (!col.count(c)) throw InputError(path + ": CSV column '" + c + "' is missing (not a parsim sweep CSV)");
  SweepReport rep;
  rep.complete = false;
  rep.counts_known = false;
  rep.shard_count = 0;
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (trim(line).empty()) continue;
    const auto f = csv_split(line);
    const std::string where = path + " line " + std::to_string(n);
    if (f.size() != header.size())
      throw InputError(where + ": " + std::to_string(f.size()) + " fields, expected " + std::to_string(header.size()));
    PlanResult r;
    fields_from_csv(result_fields(), col, f, r, where);
    if (rep.ranked.empty()) {
      rep.model = f[col.at("model")];
      rep.gpu = f[col.at("gpu")];
      const auto gpus = field_value(FieldType::Int, f[col.at("gpus")], where + " column gpus").get<std::int64_t>();
      if (gpus < 1 || gpus > INT32_MAX)
        throw InputError(where + " column gpus: " + std::to_string(gpus) + " is not a GPU count from 1 to 2^31-1");
      rep.gpus = static_cast<int>(gpus);
      rep.seq = r.seq;
      rep.gbs = r.gbs;
      rep.precision = to_string(r.precision);
    }
    rep.ranked.push_back(std::move(r));
  }
  rep.feasible = static_cast<std::int64_t>(rep.ranked.size());
  std::sort(rep.ranked.begin(), rep.ranked.end(), ranks_before);
  rep.pareto = pareto_front(rep.ranked);
  return rep;
}

std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * f);
  return buf;
}

std::string pad(const std::string& s, std::size_t w, bool right = false) {
  // Width in characters, not bytes (the table holds ASCII only except for the header rule).
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

// The table's columns: header, width, alignment and the cell of a row.
struct TableColumn {
  const char* header;
  std::size_t width;
  bool right;
  std::function<std::string(const PlanResult&)> cell;
};

const std::vector<TableColumn>& table_columns(bool train) {
  static const std::vector<TableColumn> base = {
      {"plan", 24, false, [](const PlanResult& r) { return r.plan.to_string(); }},
      {"mbs", 5, true, [](const PlanResult& r) { return std::to_string(r.mbs); }},
      {"", 2, false, [](const PlanResult&) { return std::string(); }},
      {"recompute", 10, false, [](const PlanResult& r) { return to_string(r.recompute); }},
      {"sp", 4, false, [](const PlanResult& r) { return std::string(r.sp ? "on" : "off"); }},
      {"schedule", 12, false, [](const PlanResult& r) { return to_string(r.schedule); }},
      {"stack", 16, false, [](const PlanResult& r) { return to_string(r.stack); }},
      {"step s", 10, true, [](const PlanResult& r) { return fmt_fixed(r.step_time_s, 3); }},
      {"MFU", 8, true, [](const PlanResult& r) { return pct(r.mfu); }},
      {"tok/s/GPU", 11, true,
       [](const PlanResult& r) { return fmt_fixed(r.tokens_per_s / static_cast<double>(r.plan.world()), 0); }},
      // What the fit verdict compares: live tensors + context + communication buffers (the predict table's "needs"),
      // not the reserved peak with the allocator's cache, which may exceed the capacity of a plan that fits.
      {"need/cap GiB", 15, true,
       [](const PlanResult& r) { return fmt_fixed(r.required_gib, 1) + "/" + fmt_fixed(r.capacity_gib, 1); }},
      {"bubble", 8, true, [](const PlanResult& r) { return pct(r.bubble_fraction); }},
      {"exp.comm s", 12, true, [](const PlanResult& r) { return fmt_fixed(r.exposed_comm_s, 3); }},
      {"", 2, false, [](const PlanResult&) { return std::string(); }},
      {"main loss", 18, false, [](const PlanResult& r) { return r.main_loss + " " + pct(r.main_loss_fraction); }},
  };
  static const std::vector<TableColumn> with_train = [] {
    std::vector<TableColumn> t = base;
    t.push_back({"days", 9, true, [](const PlanResult& r) { return r.has_train ? fmt_fixed(r.train_days, 1) : ""; }});
    t.push_back({"GPU-hours", 12, true, [](const PlanResult& r) { return r.has_train ? fmt_fixed(r.gpu_hours, 0) : ""; }});
    t.push_back({"cost $", 14, true, [](const PlanResult& r) {
                   return r.has_train ? (r.has_cost ? fmt_fixed(r.cost_usd, 0) : std::string("-")) : std::string();
                 }});
    return t;
  }();
  return train ? with_train : base;
}

void table_rows(std::ostringstream& o, const std::vector<PlanResult>& rows, std::size_t n, bool train) {
  const auto& cols = table_columns(train);
  o << pad("#", 4, true) << "  ";
  for (const auto& c : cols) o << pad(c.header, c.width, c.right);
  o << "\n";
  for (std::size_t i = 0; i < n; ++i) {
    o << pad(std::to_string(i + 1), 4, true) << "  ";
    for (const auto& c : cols) o << pad(c.cell(rows[i]), c.width, c.right);
    o << "\n";
  }
}

std::string identity_text(const SweepReport& r) {
  return r.model + " on " + std::to_string(r.gpus) + " × " + r.gpu + " (" + std::to_string(r.gpus_per_node) +
         " per node), seq " + std::to_string(r.seq) + ", global batch " + std::to_string(r.gbs) + ", " + r.precision +
         (r.space.empty() ? std::string() : ", filters: " + r.space);
}

}  // namespace

std::string sweep_to_json(const SweepReport& r, const SweepListing& l) {
  ojson j;
  j["evaluated"] = r.evaluated;
  j["simulated"] = r.simulated;
  j["feasible"] = r.feasible;
  j["rejected"] = r.rejected;
  const std::size_t n = listed_count(r, l);
  j["complete"] = r.complete && n == r.ranked.size();
  j["counts_known"] = r.counts_known;
  ojson results = ojson::array();
  for (std::size_t i = 0; i < n; ++i) results.push_back(result_json(r, r.ranked[i], i + 1));
  j["results"] = results;
  ojson pareto = ojson::array();
  for (std::size_t i = 0; i < r.pareto.size(); ++i) pareto.push_back(result_json(r, r.pareto[i], i + 1));
  j["pareto_front"] = pareto;
  j["sweep"] = {{"model", r.model},
                {"gpu", r.gpu},
                {"gpus", r.gpus},
                {"gpus_per_node", r.gpus_per_node},
                {"seq", r.seq},
                {"gbs", r.gbs},
                {"precision", r.precision},
                {"space", r.space},
                {"predict_flags", r.base_flags},
                {"shard_count", r.shard_count},
                {"shards", r.shards}};
  j["timing"] = {{"wall_s", r.wall_s},
                 {"cpu_s", r.cpu_s},
                 {"threads", r.threads},
                 {"plans_per_s", r.wall_s > 0 ? static_cast<double>(r.evaluated) / r.wall_s : 0.0},
                 {"simulated_per_cpu_s", r.cpu_s > 0 ? static_cast<double>(r.simulated) / r.cpu_s : 0.0}};
  return dump_output(j) + "\n";  // the flags echo the user's bytes, which need not be UTF-8
}

std::string sweep_to_csv(const SweepReport& r, const SweepListing& l) {
  std::string out;
  const auto cols = csv_columns();
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (i) out += ',';
    out += cols[i];
  }
  out += "\n";
  const std::size_t n = listed_count(r, l);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> f{std::to_string(i + 1)};
    for (auto& c : fields_to_csv(result_fields(), r.ranked[i])) f.push_back(std::move(c));
    f.insert(f.end(), {r.model, r.gpu, std::to_string(r.gpus)});
    for (std::size_t k = 0; k < f.size(); ++k) {
      if (k) out += ',';
      out += csv_field(f[k]);
    }
    out += "\n";
  }
  return out;
}

std::string sweep_to_table(const SweepReport& r, const SweepListing& l) {
  std::ostringstream o;
  o << "parsim sweep: " << identity_text(r) << "\n";
  if (r.shard_count > 1 || r.shards.size() > 1)
    o << "shards: " << r.shards.size() << " of " << r.shard_count << "\n";
  if (r.counts_known) {
    o << "evaluated " << r.evaluated << " plans: " << r.evaluated - r.simulated
      << " rejected by the memory pre-check, " << r.simulated << " simulated, " << r.feasible << " fit in memory\n";
    for (const auto& [reason, count] : r.rejected) o << "  rejected, " << reason << ": " << count << "\n";
  } else {
    o << r.ranked.size() << " feasible plans read back from CSV (no counts)\n";
  }
  const std::size_t n = listed_count(r, l);
  const bool train = !r.ranked.empty() && r.ranked.front().has_train;
  if (n == 0) {
    o << "\nno plan fits in memory: try more GPUs, a smaller --gbs, or allow recompute / sharding\n";
  } else {
    o << "\n" << (l.all ? "every feasible plan" : "fastest " + std::to_string(n)) << ", fastest first:\n";
    table_rows(o, r.ranked, n, train);
    o << "\nPareto front, step time vs peak memory (" << r.pareto.size() << " plans):\n";
    table_rows(o, r.pareto, r.pareto.size(), train);
    std::vector<std::string> flags = r.base_flags;
    const auto own = result_flags(r.ranked.front());
    flags.insert(flags.end(), own.begin(), own.end());
    o << "\nreproduce #1: " << join_flags(flags) << "\n";
  }
  if (r.wall_s > 0)
    o << "time: " << fmt_fixed(r.wall_s, 2) << " s wall, " << fmt_fixed(r.cpu_s, 2) << " s CPU, " << r.threads
      << " threads: " << fmt_fixed(static_cast<double>(r.evaluated) / r.wall_s, 0) << " plans/s, "
      << fmt_fixed(r.cpu_s > 0 ? static_cast<double>(r.simulated) / r.cpu_s : 0.0, 0)
      << " simulated plans per CPU-second\n";
  return o.str();
}

SweepReport read_sweep_file(const std::string& path) {
  const std::string text = read_file_text(path, "sweep file");
  const std::string t = trim(text);
  if (t.empty() || t.front() != '{') return read_csv(text, path);
  const json j = parse_json_text(text, "sweep file '" + path + "'");  // repeated keys, depth, 1e400 (sim/core)
  if (!j.is_object()) throw InputError(path + ": not a parsim sweep JSON object");
  StrictObject o(j, path);
  SweepReport r;
  {
    StrictObject s(o.req_obj("sweep"), path + ": sweep");
    r.model = s.req_str("model");
    r.gpu = s.req_str("gpu");
    r.gpus = static_cast<int>(s.req_int_in("gpus", 1, INT32_MAX));
    r.gpus_per_node = static_cast<int>(s.req_int_in("gpus_per_node", 1, INT32_MAX));
    r.seq = s.req_int_in("seq", 1, INT64_MAX);
    r.gbs = s.req_int_in("gbs", 1, INT64_MAX);
    r.precision = s.req_str("precision");
    r.space = s.req_str("space");
    r.shard_count = static_cast<int>(s.req_int_in("shard_count", 0, INT32_MAX));
    // at(), not operator[]: on a const json, operator[] of a missing key is undefined behaviour (found by fuzz_merge).
    const json& sweep = j.at("sweep");
    if (!sweep.contains("predict_flags") || !sweep.contains("shards") || !sweep.at("predict_flags").is_array() ||
        !sweep.at("shards").is_array())
      throw InputError(path + ": sweep.predict_flags and sweep.shards must be arrays");
    const json& flags = sweep.at("predict_flags");
    const json& shards = sweep.at("shards");
    s.ignore("predict_flags");
    s.ignore("shards");
    for (const auto& f : flags) {
      if (!f.is_string()) throw InputError(path + ": sweep.predict_flags must hold strings");
      r.base_flags.push_back(f.get<std::string>());
    }
    for (const auto& x : shards) {
      const auto idx = json_int64(x);
      if (!idx || *idx < 0 || *idx > INT32_MAX) throw InputError(path + ": sweep.shards must hold shard indices");
      r.shards.push_back(static_cast<int>(*idx));
    }
    s.finish();
  }
  // Counts are never negative and stay far from int64 overflow when the shards are summed (at most 10^15 each).
  constexpr std::int64_t kMaxCount = 1'000'000'000'000'000;
  r.evaluated = o.req_int_in("evaluated", 0, kMaxCount);
  r.simulated = o.req_int_in("simulated", 0, kMaxCount);
  r.feasible = o.req_int_in("feasible", 0, kMaxCount);
  r.counts_known = o.req_bool("counts_known");
  r.complete = o.req_bool("complete");
  const json& rejected = o.req_obj("rejected");
  for (const auto& [reason, count] : rejected.items()) {
    const auto c = json_int64(count);
    if (!c || *c < 0 || *c > kMaxCount)
      throw InputError(path + ": rejected['" + shown(reason) + "'] must be an integer from 0 to 10^15");
    r.rejected[reason] = *c;
  }
  o.ignore("timing");
  for (const char* list : {"results", "pareto_front"}) {
    if (!j.contains(list) || !j.at(list).is_array()) throw InputError(path + ": '" + list + "' must be an array");
    o.ignore(list);
    std::size_t i = 0;
    for (const auto& x : j.at(list)) {
      auto res = result_from_json(x, path + ": " + list + "[" + std::to_string(i++) + "]");
      (std::string(list) == "results" ? r.ranked : r.pareto).push_back(std::move(res));
    }
  }
  o.finish();
  std::sort(r.ranked.begin(), r.ranked.end(), ranks_before);
  std::sort(r.pareto.begin(), r.pareto.end(), ranks_before);
  return r;
}

}  // namespace parsim
