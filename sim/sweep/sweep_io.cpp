// parsim sim/sweep — sweep output (JSON per docs/cli.md, CSV, table), reading it back, merging shards.
#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"
#include "sim/sweep/sweep.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace parsim {

namespace {

using nlohmann::json;

constexpr const char* kKinds[kCommKinds] = {"tp", "cp", "pp", "dp"};

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

// Output keeps a reading order (ordered_json); input accepts any order.
using ojson = nlohmann::ordered_json;

ojson result_json(const SweepReport& rep, const PlanResult& r, std::size_t rank) {
  ojson kinds = ojson::object();
  for (int k = 0; k < kCommKinds; ++k) kinds[kKinds[k]] = r.exposed_by_kind_s[static_cast<std::size_t>(k)];
  ojson j = {{"rank", rank},
            {"plan", r.plan},
            {"mbs", r.mbs},
            {"recompute", r.recompute},
            {"sp", r.sp},
            {"schedule", r.schedule},
            {"precision", r.precision},
            {"seq", r.seq},
            {"gbs", r.gbs},
            {"step_time_s", r.step_time_s},
            {"mfu", r.mfu},
            {"hfu", r.hfu},
            {"tflops_per_gpu", r.tflops_per_gpu},
            {"tokens_per_s", r.tokens_per_s},
            {"bubble_fraction", r.bubble_fraction},
            {"exposed_comm_s", r.exposed_comm_s},
            {"exposed_comm_by_kind_s", kinds},
            {"memory",
             {{"peak_gib", r.peak_gib},
              {"allocated_peak_gib", r.allocated_peak_gib},
              {"capacity_gib", r.capacity_gib},
              {"fits", r.fits}}},
            {"main_loss", {{"kind", r.main_loss}, {"fraction", r.main_loss_fraction}}}};
  if (r.has_train) {
    ojson t = {{"days", r.train_days}, {"gpu_hours", r.gpu_hours}};
    if (r.has_cost) t["cost_usd"] = r.cost_usd;
    j["train"] = t;
  }
  std::vector<std::string> flags = rep.base_flags;
  const auto own = result_flags(r);
  flags.insert(flags.end(), own.begin(), own.end());
  j["predict"] = join_flags(flags);
  return j;
}

PlanResult result_from_json(const json& j, const std::string& where) {
  StrictObject o(j, where);
  PlanResult r;
  o.ignore("rank");
  o.ignore("predict");
  r.plan = o.req_str("plan");
  r.mbs = o.req_int_in("mbs", 1, INT32_MAX);
  r.recompute = o.req_str("recompute");
  r.sp = o.req_bool("sp");
  r.schedule = o.req_str("schedule");
  r.precision = o.req_str("precision");
  r.seq = o.req_int_in("seq", 1, INT64_MAX);
  r.gbs = o.req_int_in("gbs", 1, INT64_MAX);
  r.step_time_s = o.req_num("step_time_s");
  r.mfu = o.req_num("mfu");
  r.hfu = o.req_num("hfu");
  r.tflops_per_gpu = o.req_num("tflops_per_gpu");
  r.tokens_per_s = o.req_num("tokens_per_s");
  r.bubble_fraction = o.req_num("bubble_fraction");
  r.exposed_comm_s = o.req_num("exposed_comm_s");
  {
    StrictObject k(o.req_obj("exposed_comm_by_kind_s"), where + ".exposed_comm_by_kind_s");
    for (int i = 0; i < kCommKinds; ++i) r.exposed_by_kind_s[static_cast<std::size_t>(i)] = k.req_num(kKinds[i]);
    k.finish();
  }
  {
    StrictObject m(o.req_obj("memory"), where + ".memory");
    r.peak_gib = m.req_num("peak_gib");
    r.allocated_peak_gib = m.req_num("allocated_peak_gib");
    r.capacity_gib = m.req_num("capacity_gib");
    r.fits = m.req_bool("fits");
    m.finish();
  }
  {
    StrictObject l(o.req_obj("main_loss"), where + ".main_loss");
    r.main_loss = l.req_str("kind");
    r.main_loss_fraction = l.req_num("fraction");
    l.finish();
  }
  if (o.has("train")) {
    StrictObject t(o.req_obj("train"), where + ".train");
    r.has_train = true;
    r.train_days = t.req_num("days");
    r.gpu_hours = t.req_num("gpu_hours");
    r.has_cost = t.has("cost_usd");
    r.cost_usd = t.opt_num("cost_usd", 0);
    t.finish();
  }
  o.finish();
  parse_plan(r.plan);  // a corrupted plan string is an error here, not later
  return r;
}

std::string num17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // exact round trip
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> cols{
      "rank",          "plan",           "tp",          "pp",           "dp",           "cp",
      "vpp",           "sharding",       "mbs",         "recompute",    "sp",           "schedule",
      "precision",     "seq",            "gbs",         "step_time_s",  "mfu",          "hfu",
      "tflops_per_gpu", "tokens_per_s",  "bubble_fraction", "exposed_comm_s", "exposed_tp_s", "exposed_cp_s",
      "exposed_pp_s",  "exposed_dp_s",   "peak_gib",    "allocated_peak_gib", "capacity_gib", "fits",
      "main_loss",     "main_loss_fraction", "train_days", "gpu_hours",  "cost_usd",     "model",
      "gpu",           "gpus"};
  return cols;
}

std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

double csv_num(const std::string& s, const std::string& where) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;  // NaN would rank anywhere
  } catch (...) {
  }
  throw InputError(where + ": '" + shown(s) + "' is not a finite number");
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
    auto get = [&](const char* c) { return f[col.at(c)]; };
    auto num = [&](const char* c) { return csv_num(get(c), where + " column " + c); };
    auto integer = [&](const char* c, std::int64_t lo, std::int64_t hi) {  // no cast of 1e30 to an integer
      const auto v = exact_int64(num(c));
      if (!v || *v < lo || *v > hi)
        throw InputError(where + " column " + c + ": '" + shown(get(c)) + "' is not an integer from " +
                         std::to_string(lo) + " to " + std::to_string(hi));
      return *v;
    };
    PlanResult r;
    r.plan = get("plan");
    parse_plan(r.plan);
    r.mbs = integer("mbs", 1, INT32_MAX);
    r.recompute = get("recompute");
    r.sp = get("sp") == "true";
    r.schedule = get("schedule");
    r.precision = get("precision");
    r.seq = integer("seq", 1, INT64_MAX);
    r.gbs = integer("gbs", 1, INT64_MAX);
    r.step_time_s = num("step_time_s");
    r.mfu = num("mfu");
    r.hfu = num("hfu");
    r.tflops_per_gpu = num("tflops_per_gpu");
    r.tokens_per_s = num("tokens_per_s");
    r.bubble_fraction = num("bubble_fraction");
    r.exposed_comm_s = num("exposed_comm_s");
    r.exposed_by_kind_s = {num("exposed_tp_s"), num("exposed_cp_s"), num("exposed_pp_s"), num("exposed_dp_s")};
    r.peak_gib = num("peak_gib");
    r.allocated_peak_gib = num("allocated_peak_gib");
    r.capacity_gib = num("capacity_gib");
    r.fits = get("fits") == "true";
    r.main_loss = get("main_loss");
    r.main_loss_fraction = num("main_loss_fraction");
    if (!get("train_days").empty()) {
      r.has_train = true;
      r.train_days = num("train_days");
      r.gpu_hours = num("gpu_hours");
      if (!get("cost_usd").empty()) r.has_cost = true, r.cost_usd = num("cost_usd");
    }
    if (rep.ranked.empty()) {
      rep.model = get("model");
      rep.gpu = get("gpu");
      rep.gpus = static_cast<int>(integer("gpus", 1, INT32_MAX));
      rep.seq = r.seq;
      rep.gbs = r.gbs;
      rep.precision = r.precision;
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

void table_rows(std::ostringstream& o, const std::vector<PlanResult>& rows, std::size_t n, bool train) {
  o << pad("#", 4, true) << "  " << pad("plan", 24) << pad("mbs", 5, true) << "  " << pad("recompute", 10)
    << pad("sp", 4) << pad("schedule", 12) << pad("step s", 10, true) << pad("MFU", 8, true)
    << pad("tok/s/GPU", 11, true) << pad("peak/cap GiB", 15, true) << pad("bubble", 8, true)
    << pad("exp.comm s", 12, true) << "  " << pad("main loss", 18);
  if (train) o << pad("days", 9, true) << pad("GPU-hours", 12, true) << pad("cost $", 14, true);
  o << "\n";
  for (std::size_t i = 0; i < n; ++i) {
    const PlanResult& r = rows[i];
    const double gpus = static_cast<double>(parse_plan(r.plan).world());
    o << pad(std::to_string(i + 1), 4, true) << "  " << pad(r.plan, 24) << pad(std::to_string(r.mbs), 5, true)
      << "  " << pad(r.recompute, 10) << pad(r.sp ? "on" : "off", 4) << pad(r.schedule, 12)
      << pad(fmt_fixed(r.step_time_s, 3), 10, true) << pad(pct(r.mfu), 8, true)
      << pad(fmt_fixed(r.tokens_per_s / gpus, 0), 11, true)
      << pad(fmt_fixed(r.peak_gib, 1) + "/" + fmt_fixed(r.capacity_gib, 1), 15, true)
      << pad(pct(r.bubble_fraction), 8, true) << pad(fmt_fixed(r.exposed_comm_s, 3), 12, true) << "  "
      << pad(r.main_loss + " " + pct(r.main_loss_fraction), 18);
    if (train && r.has_train) {
      o << pad(fmt_fixed(r.train_days, 1), 9, true) << pad(fmt_fixed(r.gpu_hours, 0), 12, true)
        << pad(r.has_cost ? fmt_fixed(r.cost_usd, 0) : "-", 14, true);
    }
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
  return dump_output(j) + "\n";  // the flags echo the user's bytes
}

std::string sweep_to_csv(const SweepReport& r, const SweepListing& l) {
  std::string out;
  const auto& cols = csv_columns();
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (i) out += ',';
    out += cols[i];
  }
  out += "\n";
  const std::size_t n = listed_count(r, l);
  for (std::size_t i = 0; i < n; ++i) {
    const PlanResult& x = r.ranked[i];
    const Plan p = parse_plan(x.plan);
    const std::vector<std::string> f{
        std::to_string(i + 1), x.plan, std::to_string(p.tp), std::to_string(p.pp), std::to_string(p.dp),
        std::to_string(p.cp), std::to_string(p.vpp),
        p.sharding == Sharding::HSDP ? "hsdp" + std::to_string(p.hsdp_group) : to_string(p.sharding),
        std::to_string(x.mbs), x.recompute, x.sp ? "true" : "false", x.schedule, x.precision, std::to_string(x.seq),
        std::to_string(x.gbs), num17(x.step_time_s), num17(x.mfu), num17(x.hfu), num17(x.tflops_per_gpu),
        num17(x.tokens_per_s), num17(x.bubble_fraction), num17(x.exposed_comm_s), num17(x.exposed_by_kind_s[0]),
        num17(x.exposed_by_kind_s[1]), num17(x.exposed_by_kind_s[2]), num17(x.exposed_by_kind_s[3]),
        num17(x.peak_gib), num17(x.allocated_peak_gib), num17(x.capacity_gib), x.fits ? "true" : "false",
        x.main_loss, num17(x.main_loss_fraction), x.has_train ? num17(x.train_days) : "",
        x.has_train ? num17(x.gpu_hours) : "", x.has_cost ? num17(x.cost_usd) : "", r.model, r.gpu,
        std::to_string(r.gpus)};
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

SweepReport merge_sweeps(const std::vector<SweepReport>& shards, const std::vector<std::string>& names) {
  require(!shards.empty(), "merge needs at least one sweep file");
  SweepReport out;
  const SweepReport& first = shards.front();
  out.model = first.model, out.gpu = first.gpu, out.gpus = first.gpus, out.gpus_per_node = first.gpus_per_node;
  out.seq = first.seq, out.gbs = first.gbs, out.precision = first.precision, out.space = first.space;
  out.base_flags = first.base_flags;
  out.shard_count = first.shard_count;
  out.counts_known = true;
  out.complete = true;
  std::set<int> seen;
  std::vector<PlanResult> all, front;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const SweepReport& s = shards[i];
    const std::string name = i < names.size() ? names[i] : "input " + std::to_string(i + 1);
    auto differs = [&](const std::string& what, const std::string& a, const std::string& b) {
      if (a != b)
        throw InputError(name + " is from a different sweep: " + what + " '" + b + "' vs '" + a + "' in " +
                         (names.empty() ? std::string("the first input") : names[0]));
    };
    differs("model", first.model, s.model);
    differs("gpu", first.gpu, s.gpu);
    differs("GPU count", std::to_string(first.gpus), std::to_string(s.gpus));
    differs("sequence length", std::to_string(first.seq), std::to_string(s.seq));
    differs("global batch", std::to_string(first.gbs), std::to_string(s.gbs));
    differs("precision", first.precision, s.precision);
    if (s.counts_known && first.counts_known) {
      differs("filters", first.space, s.space);
      differs("shard count", std::to_string(first.shard_count), std::to_string(s.shard_count));
      std::string fa, fb;
      for (const auto& f : first.base_flags) fa += f + " ";
      for (const auto& f : s.base_flags) fb += f + " ";
      differs("options", fa, fb);
    }
    for (int idx : s.shards)
      if (!seen.insert(idx).second)
        throw InputError(name + ": shard " + std::to_string(idx) + "/" + std::to_string(s.shard_count) +
                         " appears twice among the inputs");
    out.counts_known = out.counts_known && s.counts_known;
    out.complete = out.complete && s.complete;
    auto add = [&](std::int64_t& sum, std::int64_t x) {  // no signed overflow, whatever the inputs hold
      const auto r = checked_add(sum, x);
      if (!r) throw InputError(name + ": the plan counts of the inputs add up beyond 2^63");
      sum = *r;
    };
    add(out.evaluated, s.evaluated);
    add(out.simulated, s.simulated);
    add(out.feasible, s.feasible);
    for (const auto& [reason, count] : s.rejected) add(out.rejected[reason], count);
    all.insert(all.end(), s.ranked.begin(), s.ranked.end());
    front.insert(front.end(), s.pareto.begin(), s.pareto.end());
  }
  out.shards.assign(seen.begin(), seen.end());
  std::sort(all.begin(), all.end(), ranks_before);
  out.ranked = std::move(all);
  if (!out.counts_known) out.feasible = static_cast<std::int64_t>(out.ranked.size());
  // The front of the union is the front of the shards' fronts (a plan beaten inside its shard stays beaten).
  front.insert(front.end(), out.ranked.begin(), out.ranked.end());
  std::sort(front.begin(), front.end(), ranks_before);
  out.pareto = pareto_front(front);
  return out;
}

}  // namespace parsim
