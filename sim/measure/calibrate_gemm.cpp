// `parsim calibrate` on a GEMM table: reading XLA's GemmPerfTable textproto or a CSV, and fitting the GPU's GEMM
// ceiling and k-loop constant to it (the model and the method: calibrate_gemm.hpp).
#include "sim/measure/calibrate_gemm.hpp"

#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

namespace parsim {
namespace {

using ojson = nlohmann::ordered_json;

constexpr const char* kXlaBf16Key = "bf16xbf16->bf16";
constexpr const char* kXlaFp8Key = "f8e4m3fnxf8e4m3fn->bf16";
constexpr int kMaxDepth = 64;             // nesting of a textproto, as for JSON (README: 64 levels)
constexpr std::size_t kMaxPoints = 1000000;
constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;

// ---- XLA GemmPerfTable textproto: a tokenizer and a recursive reader of `name: scalar` / `name { … }` fields ----

struct Token {
  enum Kind { Ident, String, Number, Colon, Open, Close, End } kind = End;
  std::string text;
  int line = 0;
};

class TextProto {
public:
  TextProto(const std::string& text, const std::string& what) : s_(text), what_(what) { next(); }

  // A message body up to `}` (or the end at depth 0), calling on_scalar / on_message for each field.
  template <class Scalar, class Message>
  void message(int depth, Scalar&& on_scalar, Message&& on_message) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    while (tok_.kind != Token::End && tok_.kind != Token::Close) {
      if (tok_.kind != Token::Ident) fail("expected a field name, got '" + shown(tok_.text) + "'");
      const std::string name = tok_.text;
      const int line = tok_.line;
      next();
      if (tok_.kind == Token::Colon) next();
      if (tok_.kind == Token::Open) {
        next();
        on_message(name, line, depth + 1);
        if (tok_.kind != Token::Close) fail("'" + shown(name) + " {' is not closed");
        next();
      } else if (tok_.kind == Token::String || tok_.kind == Token::Number || tok_.kind == Token::Ident) {
        on_scalar(name, tok_, line);
        next();
      } else {
        fail("field '" + shown(name) + "' has no value");
      }
    }
  }
  // Skips a message body whose fields are not read (on_message's default).
  void skip(int depth) {
    message(depth, [](const std::string&, const Token&, int) {}, [this](const std::string&, int, int d) { skip(d); });
  }
  bool at_end() const { return tok_.kind == Token::End; }
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(what_ + ":" + std::to_string(tok_.line) + ": not a GEMM table textproto: " + why);
  }

private:
  void next() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
    tok_ = Token{};
    tok_.line = line_;
    if (pos_ >= s_.size()) return;
    const char c = s_[pos_];
    if (c == ':' || c == '{' || c == '}') {
      tok_.kind = c == ':' ? Token::Colon : c == '{' ? Token::Open : Token::Close;
      tok_.text = std::string(1, c);
      ++pos_;
      return;
    }
    if (c == '"' || c == '\'') {
      const std::size_t start = ++pos_;
      while (pos_ < s_.size() && s_[pos_] != c && s_[pos_] != '\n') ++pos_;
      if (pos_ >= s_.size() || s_[pos_] != c) fail("a string is not closed");
      tok_.kind = Token::String;
      tok_.text = s_.substr(start, pos_ - start);
      ++pos_;
      return;
    }
    const std::size_t start = pos_;
    while (pos_ < s_.size()) {
      const char d = s_[pos_];
      if (std::isalnum(static_cast<unsigned char>(d)) || d == '_' || d == '.' || d == '-' || d == '+') ++pos_;
      else break;
    }
    if (pos_ == start) {
      tok_.text = std::string(1, c);
      fail("unexpected character '" + shown(tok_.text) + "'");
    }
    tok_.text = s_.substr(start, pos_ - start);
    const char f = tok_.text[0];
    tok_.kind = (std::isdigit(static_cast<unsigned char>(f)) || f == '-' || f == '+' || f == '.') ? Token::Number
                                                                                                  : Token::Ident;
  }

  const std::string& s_;
  const std::string& what_;
  std::size_t pos_ = 0;
  int line_ = 1;
  Token tok_;
};

// A GEMM dimension or batch (parse_positive_int, at most 2^31) and a throughput or FLOP/s figure
// (parse_positive_number), named by file and line in the error.
std::string field_at(const std::string& what, int line, const std::string& name) {
  return what + ":" + std::to_string(line) + ": " + name;
}
std::int64_t dim_value(const std::string& text, int line, const std::string& what, const std::string& name) {
  const std::int64_t v = parse_positive_int(text, field_at(what, line, name));
  if (v > kMaxDim)
    throw InputError(field_at(what, line, name) + " must be at most 2^31, got '" + shown(text) + "'");
  return v;
}
double positive_value(const std::string& text, int line, const std::string& what, const std::string& name) {
  return parse_positive_number(text, field_at(what, line, name));
}

void add_point(GemmTable& t, GemmPoint p, const std::string& what) {
  if (t.points.size() >= kMaxPoints)
    throw InputError(what + ": more than " + std::to_string(kMaxPoints) + " GEMM measurements");
  if (std::find(t.devices.begin(), t.devices.end(), p.device) == t.devices.end()) t.devices.push_back(p.device);
  t.points.push_back(std::move(p));
}

GemmTable parse_xla(const std::string& text, const std::string& what, bool fp8) {
  const std::string wanted = fp8 ? kXlaFp8Key : kXlaBf16Key;
  GemmTable out;
  out.format = "xla";
  TextProto tp(text, what);
  auto no_scalar = [](const std::string&, const Token&, int) {};
  // entries { key: "<device>" value { entries { b m n k flops { key value } } } }
  tp.message(
      0, no_scalar,
      [&](const std::string& name, int, int d1) {
        if (name != "entries") return tp.skip(d1);
        std::string device;
        std::vector<GemmPoint> pending;
        tp.message(
            d1,
            [&](const std::string& f, const Token& v, int) {
              if (f == "key") device = v.text;
            },
            [&](const std::string& f, int, int d2) {
              if (f != "value") return tp.skip(d2);
              tp.message(d2, no_scalar, [&](const std::string& g, int line, int d3) {
                if (g != "entries") return tp.skip(d3);
                GemmPoint p;
                p.line = line;
                bool has_m = false, has_n = false, has_k = false;
                tp.message(
                    d3,
                    [&](const std::string& h, const Token& v, int at) {
                      if (h == "b") p.b = dim_value(v.text, at, what, "b");
                      else if (h == "m") p.m = dim_value(v.text, at, what, "m"), has_m = true;
                      else if (h == "n") p.n = dim_value(v.text, at, what, "n"), has_n = true;
                      else if (h == "k") p.k = dim_value(v.text, at, what, "k"), has_k = true;
                    },
                    [&](const std::string& h, int, int d4) {
                      if (h != "flops") return tp.skip(d4);
                      std::string key;
                      double value = 0;
                      bool has_value = false;
                      tp.message(
                          d4,
                          [&](const std::string& q, const Token& v, int at) {
                            if (q == "key") key = v.text;
                            else if (q == "value") value = positive_value(v.text, at, what, "flops value"), has_value = true;
                          },
                          [&](const std::string&, int, int d5) { tp.skip(d5); });
                      if (key == wanted && has_value) p.measured_tflops = value / 1e12;
                    });
                if (!(has_m && has_n && has_k))
                  throw InputError(what + ":" + std::to_string(line) + ": a GEMM entry without m, n and k");
                if (p.measured_tflops > 0) pending.push_back(p);
              });
            });
        for (GemmPoint& p : pending) {
          p.device = device;
          add_point(out, std::move(p), what);
        }
      });
  if (!tp.at_end()) tp.fail("a '}' closes nothing");
  return out;
}

// A CSV line's fields, each trimmed (split of sim/core/text.hpp).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f = split(line, ',');
  for (std::string& x : f) x = trim(x);
  return f;
}

GemmTable parse_csv(const std::string& text, const std::string& what) {
  GemmTable out;
  out.format = "csv";
  std::istringstream in(text);
  std::string line;
  int ln = 0;
  int cb = -1, cm = -1, cn = -1, ck = -1, ct = -1, cd = -1;
  std::size_t columns = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++ln;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> f = csv_fields(t);
    const std::string at = what + ":" + std::to_string(ln);
    if (!header) {
      header = true;
      columns = f.size();
      for (std::size_t i = 0; i < f.size(); ++i) {
        const std::string c = to_lower(f[i]);
        const int idx = static_cast<int>(i);
        if (c == "b" || c == "batch") cb = idx;
        else if (c == "m") cm = idx;
        else if (c == "n") cn = idx;
        else if (c == "k") ck = idx;
        else if (c == "gpu" || (c == "device" && cd < 0)) cd = idx;  // both: the gpu column names the device
        else if (c == "tflops" || c == "tflop/s" || (c.size() > 7 && c.compare(c.size() - 7, 7, "_tflops") == 0)) {
          if (ct >= 0) throw InputError(at + ": two TFLOP/s columns ('" + f[static_cast<std::size_t>(ct)] + "', '" + f[i] + "'); keep one");
          ct = idx;
        }
      }
      if (cm < 0 || cn < 0 || ck < 0 || ct < 0)
        throw InputError(at + ": a GEMM table's header needs the columns m, n, k and a TFLOP/s column (tflops, or a name "
                              "ending in _tflops), got '" + shown(t, 120) + "'");
      continue;
    }
    if (f.size() != columns)
      throw InputError(at + ": " + std::to_string(f.size()) + " fields where the header has " + std::to_string(columns));
    auto field = [&](int c) -> const std::string& { return f[static_cast<std::size_t>(c)]; };
    GemmPoint p;
    p.line = ln;
    p.b = cb >= 0 ? dim_value(field(cb), ln, what, "b") : 1;
    p.m = dim_value(field(cm), ln, what, "m");
    p.n = dim_value(field(cn), ln, what, "n");
    p.k = dim_value(field(ck), ln, what, "k");
    p.measured_tflops = positive_value(field(ct), ln, what, "TFLOP/s");
    if (cd >= 0) p.device = field(cd);
    add_point(out, std::move(p), what);
  }
  return out;
}

// Kernel level: the GEMM model as a microbenchmark sees it (no in-training sustained fraction).
Hardware kernel_level(const Hardware& base) {
  Hardware h = base;
  h.gpu.compute.sustained_override = 1.0;
  h.calib.fp8_training_fraction = 1.0;  // fp8 GEMMs at their measured ceiling, as a microbenchmark runs them
  return h;
}

double gflop(const GemmPoint& p) {
  return 2.0 * static_cast<double>(p.b) * static_cast<double>(p.m) * static_cast<double>(p.n) *
         static_cast<double>(p.k) / 1e9;
}

double model_tflops(const Hardware& h, const GemmPoint& p, Precision prec) {
  if (p.b > std::numeric_limits<int>::max()) throw InputError("a GEMM batch of " + std::to_string(p.b) + " is too large");
  return gflop(p) * 1e9 / grouped_gemm_time_s(h, static_cast<int>(p.b), p.m, p.n, p.k, prec) / 1e12;
}

GemmFitSummary summarise(Hardware& h, const std::vector<const GemmPoint*>& used, double ceiling, double k_half,
                         Precision prec) {
  (prec == Precision::FP8 ? h.gpu.compute.gemm_ceiling_fp8 : h.gpu.compute.gemm_ceiling) = ceiling;
  h.gpu.compute.gemm_k_half = k_half;
  GemmFitSummary s;
  s.ceiling = ceiling;
  s.k_half = k_half;
  s.min_ln = std::numeric_limits<double>::infinity();
  s.max_ln = -s.min_ln;
  for (const GemmPoint* p : used) {
    const double e = std::log(model_tflops(h, *p, prec) / p->measured_tflops);
    s.mean_abs_ln += std::fabs(e);
    s.bias_ln += e;
    s.min_ln = std::min(s.min_ln, e);
    s.max_ln = std::max(s.max_ln, e);
  }
  s.mean_abs_ln /= static_cast<double>(used.size());
  s.bias_ln /= static_cast<double>(used.size());
  return s;
}

// For one k_half: the ceiling in (0, 1] that minimises the mean |ln| (golden section on ln ceiling).
GemmFitSummary best_ceiling(Hardware& h, const std::vector<const GemmPoint*>& used, double k_half, Precision prec) {
  double lo = std::log(0.01), hi = 0.0;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  double fa = summarise(h, used, std::exp(a), k_half, prec).mean_abs_ln, fb = summarise(h, used, std::exp(b), k_half, prec).mean_abs_ln;
  for (int it = 0; it < 48; ++it) {
    if (fa <= fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - g * (hi - lo);
      fa = summarise(h, used, std::exp(a), k_half, prec).mean_abs_ln;
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + g * (hi - lo);
      fb = summarise(h, used, std::exp(b), k_half, prec).mean_abs_ln;
    }
  }
  return summarise(h, used, std::exp(0.5 * (lo + hi)), k_half, prec);
}

// " for device 'X'" in a message, or nothing for a table without devices.
std::string for_device(const std::string& device) { return device.empty() ? "" : " for device '" + shown(device) + "'"; }

std::string pct(double ln) {
  std::string s(ln >= 0 ? "+" : "");
  s += fmt_fixed(100 * (std::exp(ln) - 1), 1);
  s += " %";
  return s;
}

// The first line that is not blank or a '#' comment.
std::string first_content_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (!t.empty() && t[0] != '#') return t;
  }
  return "";
}
// A CSV whose header names m, n and k.
bool csv_gemm_header(const std::string& first) {
  if (first.find(',') == std::string::npos) return false;
  bool m = false, n = false, k = false;
  for (const std::string& c : csv_fields(first)) {
    const std::string l = to_lower(c);
    m = m || l == "m";
    n = n || l == "n";
    k = k || l == "k";
  }
  return m && n && k;
}
// A textproto that opens with a repeated `entries` message (XLA's GemmPerfTable).
bool xla_table(const std::string& first) { return first.rfind("entries", 0) == 0 && first.find('{') != std::string::npos; }
}  // namespace

bool looks_like_gemm_table(const std::string& text) {
  const std::string first = first_content_line(text);
  return csv_gemm_header(first) || xla_table(first);
}

GemmTable parse_gemm_table(const std::string& text, const std::string& what, bool fp8) {
  const std::string first = first_content_line(text);
  const bool xla = !csv_gemm_header(first);
  GemmTable t = xla ? parse_xla(text, what, fp8) : parse_csv(text, what);
  if (t.points.empty())
    throw InputError(what + ": no GEMM measurement found" +
                     (xla ? std::string(" (XLA table: no flops entry with key \"") + (fp8 ? kXlaFp8Key : kXlaBf16Key) +
                                "\")"
                          : std::string()));
  return t;
}

std::string gemm_table_device(const GemmTable& table, const std::string& requested) {
  std::string list;
  for (const auto& d : table.devices) list += (list.empty() ? "" : ", ") + (d.empty() ? std::string("(none)") : shown(d));
  if (requested.empty()) {
    if (table.devices.size() > 1)
      throw InputError("the GEMM table holds " + std::to_string(table.devices.size()) + " devices (" + list +
                       "); pick one with --device");
    return table.devices.front();
  }
  if (std::find(table.devices.begin(), table.devices.end(), requested) == table.devices.end())
    throw InputError("--device '" + shown(requested) + "' is not in the GEMM table; it holds: " + list);
  return requested;
}

std::string preset_for_gemm_device(const std::string& key) {
  static const std::map<std::string, std::string> known = {
      {"sm_80", "a100-80gb"}, {"sm_90", "h100"}, {"sm_100", "b200"}, {"sm_100_b200", "b200"},
      {"gfx942", "mi300x"},   {"gfx950", "mi355x"}};
  const auto it = known.find(to_lower(key));
  if (it != known.end()) return it->second;
  for (const std::string& name : hardware_preset_names())
    if (to_lower(key) == name) return name;
  return "";
}

GemmCalibration calibrate_gemm(const GemmTable& table, const Hardware& base, const std::string& base_name,
                               const GemmFitOptions& opt) {
  GemmCalibration c;
  c.format = table.format;
  c.gpu = base_name;
  c.gpu_name = base.gpu.name;
  c.min_gflop = opt.min_gflop;
  if (!(opt.min_gflop >= 0) || !std::isfinite(opt.min_gflop))
    throw InputError("--min-gflop must be a finite number ≥ 0, got " + fmt_num(opt.min_gflop));
  const std::string device = gemm_table_device(table, opt.device);
  c.device = device;

  c.fp8 = opt.fp8;
  const Precision prec = opt.fp8 ? Precision::FP8 : Precision::BF16;
  if (opt.fp8 && !base.gpu.has_fp8())
    throw InputError("--precision fp8: the base hardware '" + base_name + "' has no fp8 tensor cores");
  Hardware h = kernel_level(base);
  std::vector<const GemmPoint*> used;
  for (const GemmPoint& p : table.points) {
    if (p.device != device) continue;
    ++c.points_total;
    GemmResidual r;
    r.point = p;
    r.used = gflop(p) >= opt.min_gflop;
    r.before_tflops = model_tflops(h, p, prec);
    c.points.push_back(r);
  }
  for (const GemmResidual& r : c.points)
    if (r.used) used.push_back(&r.point);
  c.points_used = static_cast<int>(used.size());
  // The fit evaluates the model ≈ 20,000 times per shape (385 k_half values × a golden-section search): past this
  // many shapes it would run for minutes. A sweep has hundreds; a brute-force search's log, thinned, fits.
  constexpr std::size_t kMaxFitted = 20000;
  if (used.size() > kMaxFitted)
    throw InputError("the GEMM table has " + std::to_string(used.size()) + " shapes of at least " +
                     fmt_num(opt.min_gflop) + " GFLOP" + for_device(device) + "; the fit takes at most " +
                     std::to_string(kMaxFitted) + " (raise --min-gflop or thin the table)");
  if (used.size() < 3)
    throw InputError("the GEMM table has " + std::to_string(used.size()) + " shape(s) of at least " +
                     fmt_num(opt.min_gflop) + " GFLOP" + for_device(device) + "; the fit needs 3 or more (lower --min-gflop)");

  const double base_ceiling = opt.fp8 ? base.gpu.compute.gemm_ceiling_fp8 : base.gpu.compute.gemm_ceiling;
  c.before = summarise(h, used, base_ceiling, base.gpu.compute.gemm_k_half, prec);
  GemmFitSummary best;
  if (opt.fp8) {
    best = best_ceiling(h, used, base.gpu.compute.gemm_k_half, prec);  // k_half is the bf16 sweep's
  } else {
    // k_half on a geometric grid 1 … 4096 (32 steps per factor 2), the ceiling for each; the best pair wins (ties:
    // the smaller k_half, the grid's first).
    best.mean_abs_ln = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 12 * 32; ++i) {
      const double kh = std::exp2(i / 32.0);
      const GemmFitSummary s = best_ceiling(h, used, kh, prec);
      if (s.mean_abs_ln < best.mean_abs_ln - 1e-12) best = s;
    }
  }
  c.fitted = summarise(h, used, best.ceiling, best.k_half, prec);
  for (GemmResidual& r : c.points) r.fitted_tflops = model_tflops(h, r.point, prec);

  if (c.fitted.ceiling > 0.999)
    c.notes.push_back("the fitted ceiling is at its bound 1: the measurements beat the base hardware's peak — check "
                      "--gpu (peak, SM count) or the table's units (TFLOP/s)");
  if (!opt.fp8 && c.fitted.k_half >= 4095)
    c.notes.push_back("the fitted k_half is at its bound 4096: the sweep's times hardly fall with k");
  c.notes.push_back("kernel level: the fit describes a microbenchmark's GEMMs; a training step runs them at the "
                    "stack's sustained fraction of this (hardware/calibration.json)");
  return c;
}

std::string gemm_calibration_hardware_json(const GemmCalibration& c, const Hardware& base) {
  Hardware hw = base;
  const std::string provenance = "parsim calibrate on the GEMM table " + c.file + " (" + c.format + ", device '" +
                                 c.device + "', " + (c.fp8 ? "fp8" : "bf16") + ", " + std::to_string(c.points_used) +
                                 " shapes of at least " +
                                 fmt_num(c.min_gflop) + " GFLOP): mean |ln(model/measured)| " +
                                 fmt_fixed(c.before.mean_abs_ln, 3) + " -> " + fmt_fixed(c.fitted.mean_abs_ln, 3);
  if (c.fp8) {
    hw.gpu.compute.gemm_ceiling_fp8 = c.fitted.ceiling;
    hw.sources["gpu.compute.gemm_ceiling_fp8"] = provenance;
  } else {
    hw.gpu.compute.gemm_ceiling = c.fitted.ceiling;
    hw.gpu.compute.gemm_k_half = c.fitted.k_half;
    hw.sources["gpu.compute.gemm_ceiling"] = provenance;
    hw.sources["gpu.compute.gemm_k_half"] = provenance;
  }
  hw.name = hw.name + "-gemm-calibrated";
  try {
    validate_hardware(hw);
  } catch (const InputError& e) {
    throw InputError(std::string("calibrate --out: the fitted values do not make a valid hardware file: ") + e.what());
  }
  return hardware_to_json(hw);
}

std::string gemm_calibration_json(const GemmCalibration& c) {
  auto summary = [](const GemmFitSummary& s) {
    ojson j;
    j["gemm_ceiling"] = s.ceiling;
    j["gemm_k_half"] = s.k_half;
    j["mean_abs_log_error"] = s.mean_abs_ln;
    j["mean_log_error"] = s.bias_ln;
    j["min_log_error"] = s.min_ln;
    j["max_log_error"] = s.max_ln;
    return j;
  };
  ojson root;
  root["kind"] = "gemm";
  root["file"] = c.file;
  root["format"] = c.format;
  root["device"] = c.device;
  root["gpu"] = c.gpu;
  root["gpu_name"] = c.gpu_name;
  root["precision"] = c.fp8 ? "fp8" : "bf16";
  root["min_gflop"] = c.min_gflop;
  root["points_total"] = c.points_total;
  root["points_used"] = c.points_used;
  root["before"] = summary(c.before);
  root["fitted"] = summary(c.fitted);
  ojson pts = ojson::array();
  for (const GemmResidual& r : c.points) {
    ojson p;
    p["b"] = r.point.b;
    p["m"] = r.point.m;
    p["n"] = r.point.n;
    p["k"] = r.point.k;
    p["gflop"] = gflop(r.point);
    p["measured_tflops"] = r.point.measured_tflops;
    p["before_tflops"] = r.before_tflops;
    p["fitted_tflops"] = r.fitted_tflops;
    p["used"] = r.used;
    pts.push_back(p);
  }
  root["points"] = pts;
  root["notes"] = c.notes;
  return dump_output(root) + "\n";
}

std::string gemm_calibration_table(const GemmCalibration& c) {
  std::ostringstream o;
  o << "GEMM sweep " << c.file << " (" << (c.format == "xla" ? "XLA GemmPerfTable" : "CSV")
    << (c.device.empty() ? "" : ", device " + c.device) << "), " << (c.fp8 ? "fp8 (k_half held)" : "bf16") << ": "
    << c.points_used << " of " << c.points_total
    << " shapes of at least " << fmt_num(c.min_gflop) << " GFLOP fitted\n";
  o << "model at kernel level on '" << c.gpu << "' (" << c.gpu_name
    << "): time = 2bmnk / (peak x gemm_ceiling x tiling(m, n, k; SMs, gemm_k_half)), memory floor, launch overhead\n";
  auto line = [&](const char* label, const GemmFitSummary& s) {
    o << std::left << std::setw(8) << label << std::right << (c.fp8 ? "gemm_ceiling_fp8 " : "gemm_ceiling ")
      << fmt_fixed(s.ceiling, 4)
      << "  gemm_k_half " << std::setw(7) << fmt_num(s.k_half, 4) << "  mean |ln(model/measured)| "
      << fmt_fixed(s.mean_abs_ln, 3) << "  mean " << pct(s.bias_ln) << "  range " << pct(s.min_ln) << " ... "
      << pct(s.max_ln) << "\n";
  };
  line("base", c.before);
  line("fitted", c.fitted);
  std::vector<const GemmResidual*> used;
  for (const GemmResidual& r : c.points)
    if (r.used) used.push_back(&r);
  std::stable_sort(used.begin(), used.end(), [](const GemmResidual* a, const GemmResidual* b) {
    return std::fabs(std::log(a->fitted_tflops / a->point.measured_tflops)) >
           std::fabs(std::log(b->fitted_tflops / b->point.measured_tflops));
  });
  o << "largest errors after the fit:\n";
  o << std::right << std::setw(4) << "b" << std::setw(7) << "m" << std::setw(7) << "n" << std::setw(7) << "k"
    << std::setw(10) << "GFLOP" << std::setw(11) << "measured" << std::setw(9) << "base" << std::setw(9) << "fitted"
    << std::setw(9) << "error" << "   (TFLOP/s)\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(8, used.size()); ++i) {
    const GemmResidual& r = *used[i];
    o << std::setw(4) << r.point.b << std::setw(7) << r.point.m << std::setw(7) << r.point.n << std::setw(7)
      << r.point.k << std::setw(10) << fmt_fixed(gflop(r.point), 1) << std::setw(11)
      << fmt_fixed(r.point.measured_tflops, 1) << std::setw(9) << fmt_fixed(r.before_tflops, 1) << std::setw(9)
      << fmt_fixed(r.fitted_tflops, 1) << std::setw(9) << pct(std::log(r.fitted_tflops / r.point.measured_tflops))
      << "\n";
  }
  for (const auto& n : c.notes) o << "note: " << n << "\n";
  return o.str();
}

}  // namespace parsim
