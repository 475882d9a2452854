#include "sim/measure/calibrate.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace parsim {
namespace {

constexpr std::int64_t kMaxRanks = std::int64_t{1} << 24;  // 16,777,216 ranks, far beyond any benchmark run
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 53;  // 8 PiB: sizes stay exact in a double and in JSON integers

// ---- text helpers ------------------------------------------------------------------------------------------------
std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string t;
  while (in >> t) out.push_back(t);
  return out;
}

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && std::isfinite(v);
}

// An all-digit token: Int with its value, TooLarge when it does not fit in int64 (a 19-digit count), else NotInt.
enum class IntToken { NotInt, Int, TooLarge };
IntToken parse_int(const std::string& s, std::int64_t& v) {
  if (s.empty()) return IntToken::NotInt;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return IntToken::NotInt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) return IntToken::TooLarge;
  return ec == std::errc() && end == s.data() + s.size() ? IntToken::Int : IntToken::NotInt;
}

// ---- a small scanner over one line ----------------------------------------------------------------------------
// No std::regex on input lines: libstdc++'s regex executor recurses once per character it matches, so one line of
// 50,000 spaces or digits overflowed the stack. The patterns these functions replace are quoted next to them.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

struct Scan {
  const std::string& s;
  std::size_t i = 0;
  bool end() const { return i >= s.size(); }
  std::size_t spaces() {  // \s*, returns how many
    const std::size_t from = i;
    while (!end() && is_space(s[i])) ++i;
    return i - from;
  }
  bool digits(std::string* out = nullptr) {  // \d+
    const std::size_t from = i;
    while (!end() && is_digit(s[i])) ++i;
    if (out) *out = s.substr(from, i - from);
    return i > from;
  }
  bool word(std::string* out = nullptr) {  // \S+
    const std::size_t from = i;
    while (!end() && !is_space(s[i])) ++i;
    if (out) *out = s.substr(from, i - from);
    return i > from;
  }
  bool lit(const char* w) {
    const std::size_t n = std::strlen(w);
    if (s.compare(i, n, w) != 0) return false;
    i += n;
    return true;
  }
  bool ch(char c) {
    if (end() || s[i] != c) return false;
    ++i;
    return true;
  }
  void optional_space() {  // \s?
    if (!end() && is_space(s[i])) ++i;
  }
};

// Strips what a paste adds around nccl-tests lines: srun/mpirun rank prefixes ("0: " = ^\s*\d+\s*:\s? and
// "[1,0]<stdout>:" = ^\s*\[\d+,\d+\]<std(out|err)>:\s?), markdown block quotes and code fences.
std::string strip_prefixes(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::size_t cut = 0;
  {
    Scan sc{line};
    sc.spaces();
    if (sc.digits()) {
      sc.spaces();
      if (sc.ch(':')) sc.optional_space(), cut = sc.i;
    }
  }
  if (cut == 0) {
    Scan sc{line};
    sc.spaces();
    if (sc.ch('[') && sc.digits() && sc.ch(',') && sc.digits() && sc.ch(']') && sc.ch('<') &&
        (sc.lit("stdout") || sc.lit("stderr")) && sc.ch('>') && sc.ch(':'))
      sc.optional_space(), cut = sc.i;
  }
  if (cut > 0) line.erase(0, cut);
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i < line.size() && line[i] == '>') line = line.substr(i + 1);
  return line;
}

// A device-list line, "#  Rank  0 Group  0 Pid 1234 on host-a device  0 [0x1b] NVIDIA H100 80GB HBM3":
// ^\s*#?\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*\S)\s*$
struct DeviceLine {
  std::string rank, host, name;
};
bool device_line(const std::string& line, DeviceLine& d) {
  Scan sc{line};
  sc.spaces();
  sc.ch('#');
  sc.spaces();
  auto sep = [&] { return sc.spaces() > 0; };
  if (!(sc.lit("Rank") && sep() && sc.digits(&d.rank) && sep() && sc.lit("Group") && sep() && sc.digits() && sep() &&
        sc.lit("Pid") && sep() && sc.digits() && sep() && sc.lit("on") && sep() && sc.word(&d.host) && sep() &&
        sc.lit("device") && sep() && sc.digits() && sep() && sc.ch('[')))
    return false;
  while (!sc.end() && line[sc.i] != ']') ++sc.i;
  if (!sc.ch(']') || !sep()) return false;
  d.name = trim(line.substr(sc.i));
  return !d.name.empty();
}

// "# Avg bus bandwidth    : 123.4" anywhere in the line: Avg bus bandwidth\s*:\s*([0-9.eE+-]+)
bool avg_busbw(const std::string& line, std::string& value) {
  const std::size_t at = line.find("Avg bus bandwidth");
  if (at == std::string::npos) return false;
  Scan sc{line, at + std::strlen("Avg bus bandwidth")};
  sc.spaces();
  if (!sc.ch(':')) return false;
  sc.spaces();
  const std::size_t from = sc.i;
  while (!sc.end() && (is_digit(line[sc.i]) || std::strchr(".eE+-", line[sc.i]) != nullptr)) ++sc.i;
  value = line.substr(from, sc.i - from);
  return !value.empty();
}

// A GPU model named as a word, not inside a hex hash such as "a759d54", case-insensitively:
// (?:^|[^A-Za-z0-9])(MI\d{3}X?|[ABH]\d{3}|GB\d{3}|V100|L40S?)(?![0-9A-Za-z]). Returns "" when there is none.
std::string gpu_hint(const std::string& line) {
  const std::size_t n = line.size();
  auto up = [&](std::size_t k) {
    return k < n ? static_cast<char>(std::toupper(static_cast<unsigned char>(line[k]))) : '\0';
  };
  auto digits3 = [&](std::size_t k) {
    return k + 3 <= n && is_digit(line[k]) && is_digit(line[k + 1]) && is_digit(line[k + 2]);
  };
  auto word_end = [&](std::size_t k) { return k >= n || !is_alnum(line[k]); };
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && is_alnum(line[i - 1])) continue;
    // The alternatives in the pattern's order; an optional letter is tried with, then without it (backtracking).
    std::size_t len = 0;
    if (up(i) == 'M' && up(i + 1) == 'I' && digits3(i + 2)) {
      if (up(i + 5) == 'X' && word_end(i + 6)) len = 6;
      else if (word_end(i + 5)) len = 5;
    }
    if (!len && (up(i) == 'A' || up(i) == 'B' || up(i) == 'H') && digits3(i + 1) && word_end(i + 4)) len = 4;
    if (!len && up(i) == 'G' && up(i + 1) == 'B' && digits3(i + 2) && word_end(i + 5)) len = 5;
    if (!len && up(i) == 'V' && line.compare(i + 1, 3, "100") == 0 && word_end(i + 4)) len = 4;
    if (!len && up(i) == 'L' && line.compare(i + 1, 2, "40") == 0) {
      if (up(i + 3) == 'S' && word_end(i + 4)) len = 4;
      else if (word_end(i + 3)) len = 3;
    }
    if (len) return line.substr(i, len);
  }
  return {};
}

// "all_reduce_perf", "allreduce", "all-reduce" … → canonical nccl-tests collective name, or "".
std::string collective_in(const std::string& line) {
  std::string s;
  for (char c : line)
    if (c != '_' && c != '-') s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (s.find("allreduce") != std::string::npos) return "all_reduce";
  if (s.find("reducescatter") != std::string::npos) return "reduce_scatter";
  if (s.find("allgather") != std::string::npos) return "all_gather";
  if (s.find("alltoall") != std::string::npos) return "alltoall";
  if (s.find("sendrecv") != std::string::npos) return "sendrecv";
  if (s.find("broadcastperf") != std::string::npos) return "broadcast";
  if (s.find("reduceperf") != std::string::npos) return "reduce";
  return "";
}

double nccl_tests_bus_factor(const std::string& collective, int n) {
  // nccl-tests doc/PERFORMANCE.md ("Bus bandwidth"): all_reduce 2(n−1)/n; reduce_scatter, all_gather, alltoall
  // (n−1)/n; broadcast, reduce, sendrecv 1.
  if (n <= 0) return 1;
  const double nn = n;
  if (collective == "all_reduce") return 2 * (nn - 1) / nn;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") return (nn - 1) / nn;
  return 1;
}

// "32KiB", "1MiB", "2GiB", "8 MB", "1024" → bytes (binary prefixes for KiB/MiB/GiB and for bare K/M/G as the
// ml-engineering tables use them; KB/MB/GB are decimal).
bool parse_size(std::string s, double& bytes) {
  s = trim(s);
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  double v = 0;
  if (!parse_double(s.substr(0, i), v)) return false;
  std::string unit = to_lower(trim(s.substr(i)));
  static const std::map<std::string, double> mult{
      {"", 1},           {"b", 1},         {"k", 1024.0},     {"kib", 1024.0},      {"m", 1024.0 * 1024},
      {"mib", 1024.0 * 1024}, {"g", 1024.0 * 1024 * 1024}, {"gib", 1024.0 * 1024 * 1024},
      {"kb", 1e3},       {"mb", 1e6},      {"gb", 1e9},       {"tib", 1024.0 * 1024 * 1024 * 1024}};
  auto it = mult.find(unit);
  if (it == mult.end()) return false;
  bytes = v * it->second;
  return true;
}

// "1.44GBps", "482 GB/s" → GB/s; "39.9us", "1.2 ms" → µs.
bool parse_with_unit(std::string s, double& v, bool time) {
  s = trim(s);
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' ||
                          s[i] == 'E' || s[i] == '+' || s[i] == '-'))
    ++i;
  if (!parse_double(s.substr(0, i), v)) return false;
  const std::string unit = to_lower(trim(s.substr(i)));
  if (time) {
    if (unit.empty() || unit == "us" || unit == "µs") return true;
    if (unit == "ms") return v *= 1e3, true;
    if (unit == "s") return v *= 1e6, true;
    return false;
  }
  return unit.empty() || unit == "gbps" || unit == "gb/s";
}

struct Table {                 // column positions of one nccl-tests header
  int size = -1, count = -1, type = -1;
  int time[2] = {-1, -1}, algbw[2] = {-1, -1}, busbw[2] = {-1, -1};
  std::size_t ncols = 0;
};

bool header_columns(const std::vector<std::string>& t, Table& tab) {
  int times = 0, algs = 0, buses = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string c = to_lower(t[i]);
    const int idx = static_cast<int>(i);
    if (c == "size" && tab.size < 0) tab.size = idx;
    else if (c == "count" && tab.count < 0) tab.count = idx;
    else if (c == "type" && tab.type < 0) tab.type = idx;
    else if (c == "time" && times < 2) tab.time[times++] = idx;
    else if (c == "algbw" && algs < 2) tab.algbw[algs++] = idx;
    else if (c == "busbw" && buses < 2) tab.busbw[buses++] = idx;
  }
  tab.ncols = t.size();
  return tab.size >= 0 && tab.time[0] >= 0;
}

}  // namespace

// ---- parsing ------------------------------------------------------------------------------------------------------
NcclTestFile parse_nccl_tests(const std::string& text, const std::string& what) {
  NcclTestFile f;
  std::set<int> ranks;
  std::vector<std::string> hosts;
  std::set<std::string> host_set;  // hosts in order of appearance; the set keeps a 100k-rank device list linear
  std::string last_collective;
  Table tab;
  bool in_table = false;
  bool markdown = false;
  int md_size = -1, md_busbw = -1, md_algbw = -1, md_time = -1;
  NcclTestBlock* block = nullptr;
  int lineno = 0;
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    ++lineno;
    const std::string line = strip_prefixes(raw);
    if (DeviceLine d; device_line(line, d)) {
      std::int64_t rank = 0;
      if (parse_int(d.rank, rank) != IntToken::Int || rank > kMaxRanks)
        throw InputError(what + " line " + std::to_string(lineno) + ": rank '" + shown(d.rank) +
                         "' in the device list is beyond " + std::to_string(kMaxRanks));
      ranks.insert(static_cast<int>(rank));
      if (host_set.insert(d.host).second) hosts.push_back(d.host);
      if (f.gpu_name.empty()) f.gpu_name = utf8_sanitize(d.name);  // goes to JSON output
      continue;
    }
    const std::string c = collective_in(line);
    const std::string t = trim(line);
    // Markdown tables: | payload | busbw | algbw |
    if (!t.empty() && t.front() == '|') {
      std::vector<std::string> cells;
      for (auto& cell : split(t.substr(1), '|')) cells.push_back(trim(cell));
      if (!cells.empty() && cells.back().empty()) cells.pop_back();
      bool is_header = false;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string cl = to_lower(cells[i]);
        if (cl.find("busbw") != std::string::npos || cl.find("algbw") != std::string::npos) is_header = true;
      }
      if (is_header) {
        md_size = md_busbw = md_algbw = md_time = -1;
        for (std::size_t i = 0; i < cells.size(); ++i) {
          const std::string cl = to_lower(cells[i]);
          const int idx = static_cast<int>(i);
          if (cl.find("busbw") != std::string::npos) md_busbw = idx;
          else if (cl.find("algbw") != std::string::npos) md_algbw = idx;
          else if (cl.find("time") != std::string::npos || cl.find("latency") != std::string::npos) md_time = idx;
          else if (cl.find("payload") != std::string::npos || cl.find("size") != std::string::npos ||
                   cl.find("bytes") != std::string::npos)
            md_size = idx;
        }
        if (md_size >= 0 && (md_algbw >= 0 || md_time >= 0)) {
          f.blocks.emplace_back();
          block = &f.blocks.back();
          block->first_line = lineno;
          block->collective = last_collective;
          markdown = true;
          in_table = true;
        }
        continue;
      }
      if (markdown && in_table && block) {
        NcclTestRow row;
        auto cell = [&](int i) { return i >= 0 && i < static_cast<int>(cells.size()) ? cells[static_cast<std::size_t>(i)] : std::string(); };
        double v = 0;
        if (!parse_size(cell(md_size), row.bytes)) continue;  // the |---:| separator line, or junk
        if (!(row.bytes <= static_cast<double>(kMaxBytes)))
          throw InputError(what + " line " + std::to_string(lineno) + ": message size '" + shown(cell(md_size)) +
                           "' is beyond 2^53 bytes");
        if (md_algbw >= 0 && parse_with_unit(cell(md_algbw), v, false)) row.oop_algbw_GBps = v;
        if (md_busbw >= 0 && parse_with_unit(cell(md_busbw), v, false)) row.oop_busbw_GBps = v;
        if (md_time >= 0 && parse_with_unit(cell(md_time), v, true)) row.oop_time_us = v;
        else if (row.oop_algbw_GBps > 0) row.oop_time_us = row.bytes / (row.oop_algbw_GBps * 1e9) * 1e6;  // t = S/algbw
        if (row.oop_time_us > 0) block->rows.push_back(row);
      }
      continue;
    }
    markdown = false;
    if (!t.empty() && t.front() == '#') {
      auto tk = tokens(t.substr(1));
      Table h;
      if (header_columns(tk, h) && tk.size() >= 4) {
        // The second header line "(B) (elements) … (us) (GB/s)" has no column names and is skipped below.
        tab = h;
        if (!in_table || (block && !block->rows.empty())) {
          f.blocks.emplace_back();
          block = &f.blocks.back();
          block->first_line = lineno;
          block->collective = last_collective;
        }
        in_table = true;
        continue;
      }
      if (std::string avg; avg_busbw(t, avg) && block) {
        double v = 0;
        if (parse_double(avg, v)) block->avg_busbw_GBps = v;
        in_table = false;
      }
      if (!c.empty()) last_collective = c;
      continue;
    }
    if (!c.empty()) last_collective = c;
    if (!in_table || !block) continue;
    auto tk = tokens(t);
    std::int64_t size = 0;
    if (tk.empty()) continue;
    const IntToken size_token = parse_int(tk[0], size);
    if (size_token == IntToken::TooLarge || (size_token == IntToken::Int && size > kMaxBytes))
      throw InputError(what + " line " + std::to_string(lineno) + ": message size '" + shown(tk[0]) +
                       "' is beyond 2^53 bytes");
    if (size_token != IntToken::Int) continue;
    if (static_cast<int>(tk.size()) <= tab.time[0]) continue;
    NcclTestRow row;
    row.bytes = static_cast<double>(size);
    std::int64_t cnt = 0;
    if (tab.count >= 0 && tab.count < static_cast<int>(tk.size())) {
      const std::string& count = tk[static_cast<std::size_t>(tab.count)];
      const IntToken ct = parse_int(count, cnt);
      if (ct == IntToken::TooLarge)
        throw InputError(what + " line " + std::to_string(lineno) + ": element count '" + shown(count) +
                         "' does not fit in 64 bits");
      if (ct == IntToken::Int) row.count = cnt;
    }
    if (tab.type >= 0 && tab.type < static_cast<int>(tk.size())) row.type = tk[static_cast<std::size_t>(tab.type)];
    auto col = [&](int i, double& out) {
      double v = 0;
      if (i >= 0 && i < static_cast<int>(tk.size()) && parse_double(tk[static_cast<std::size_t>(i)], v)) out = v;
    };
    col(tab.time[0], row.oop_time_us);
    col(tab.algbw[0], row.oop_algbw_GBps);
    col(tab.busbw[0], row.oop_busbw_GBps);
    col(tab.time[1], row.ip_time_us);
    col(tab.algbw[1], row.ip_algbw_GBps);
    col(tab.busbw[1], row.ip_busbw_GBps);
    if (row.oop_time_us > 0 || row.ip_time_us > 0) block->rows.push_back(row);
  }
  // Drop blocks without rows (a header followed by an error, say).
  f.blocks.erase(std::remove_if(f.blocks.begin(), f.blocks.end(), [](const auto& b) { return b.rows.empty(); }),
                 f.blocks.end());
  for (auto& b : f.blocks)
    if (b.collective.empty()) {
      b.collective = "all_reduce";
      b.collective_guessed = true;
    }
  if (f.blocks.empty())
    throw InputError(what + ": no nccl-tests result table found (expected a '#  size  count  type … time  algbw  busbw' "
                            "header followed by rows, or a markdown table with payload and algbw/busbw columns)");
  f.device_ranks = static_cast<int>(ranks.size());
  f.hosts = hosts;
  if (f.gpu_name.empty()) {
    std::istringstream again(text);
    while (std::getline(again, raw)) {
      const std::string hint = gpu_hint(raw);
      if (!hint.empty()) {
        f.text_gpu_hint = hint;
        break;
      }
    }
  }
  return f;
}

std::size_t primary_block(const NcclTestFile& file) {
  std::size_t best = 0;
  bool found = false;
  for (std::size_t i = 0; i < file.blocks.size(); ++i) {
    if (file.blocks[i].collective != "all_reduce") continue;
    if (!found || file.blocks[i].rows.size() > file.blocks[best].rows.size()) best = i;
    found = true;
  }
  return best;
}

std::string preset_for_gpu_name(const std::string& device_name) {
  const std::string n = to_lower(device_name);
  auto has = [&](const char* x) { return n.find(x) != std::string::npos; };
  if (has("h200")) return "h200";
  if (has("h100")) return "h100";
  if (has("b200")) return "b200";
  if (has("mi300x")) return "mi300x";
  if (has("a100")) return has("40gb") ? "a100-40gb" : "a100-80gb";
  return "";
}

// ---- fitting ------------------------------------------------------------------------------------------------------
std::pair<double, double> fit_relative_wls(const std::vector<std::pair<double, double>>& size_time) {
  // Minimise Σ ((α + S·x − t)/t)²: rows [1/t, S/t] · [α, x]ᵀ ≈ 1. Sizes are scaled to GiB to keep the columns of
  // comparable magnitude for the QR solve.
  const auto n = static_cast<Eigen::Index>(size_time.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  constexpr double scale = 1024.0 * 1024.0 * 1024.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& [s, t] = size_time[static_cast<std::size_t>(i)];
    A(i, 0) = 1.0 / t;
    A(i, 1) = (s / scale) / t;
  }
  const Eigen::Vector2d x = A.colPivHouseholderQr().solve(b);
  return {x(0), x(1) / scale};
}

namespace {

struct Line {
  double alpha = 0, slope = 0;  // t = alpha + S·slope (seconds, seconds per byte)
  std::size_t from = 0, to = 0; // points [from, to)
};

double model_time(const std::vector<Line>& lines, double s, int* which = nullptr) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const double t = lines[k].alpha + s * lines[k].slope;
    if (t < best) {
      best = t;
      if (which) *which = static_cast<int>(k);
    }
  }
  return best;
}

double rel_sse(const std::vector<Line>& lines, const std::vector<std::pair<double, double>>& pts) {
  double e = 0;
  for (const auto& [s, t] : pts) {
    const double r = (model_time(lines, s) - t) / t;
    e += r * r;
  }
  return e;
}

bool fit_segments(const std::vector<std::pair<double, double>>& pts, const std::vector<std::size_t>& cuts,
                  std::vector<Line>& lines) {
  lines.clear();
  std::size_t from = 0;
  for (std::size_t k = 0; k <= cuts.size(); ++k) {
    const std::size_t to = k < cuts.size() ? cuts[k] : pts.size();
    std::vector<std::pair<double, double>> seg(pts.begin() + static_cast<long>(from), pts.begin() + static_cast<long>(to));
    const auto [a, x] = fit_relative_wls(seg);
    if (!(x > 0) || !std::isfinite(a) || !std::isfinite(x)) return false;  // a regime needs a positive bandwidth
    lines.push_back({a, x, from, to});
    from = to;
  }
  return true;
}

}  // namespace

Calibration calibrate_block(const NcclTestFile& file, std::size_t index, const CalibrateOptions& opt) {
  if (index >= file.blocks.size()) throw InputError("calibrate: block " + std::to_string(index + 1) + " does not exist");
  const NcclTestBlock& b = file.blocks[index];
  Calibration c;
  c.collective = b.collective;
  c.gpu_name = file.gpu_name.empty() ? file.text_gpu_hint : file.gpu_name;
  c.avg_busbw_GBps = b.avg_busbw_GBps;
  if (b.collective_guessed)
    c.notes.push_back("the text does not name the collective: all_reduce assumed");

  // Points: out-of-place time (in-place when the out-of-place column is missing), sorted by size, one per size.
  std::map<double, double> by_size;
  std::map<double, std::pair<double, double>> bw_by_size;  // algbw, busbw
  for (const auto& r : b.rows) {
    const double t = r.oop_time_us > 0 ? r.oop_time_us : r.ip_time_us;
    if (!(t > 0)) continue;
    by_size[r.bytes] = t * 1e-6;
    bw_by_size[r.bytes] = r.oop_time_us > 0 ? std::make_pair(r.oop_algbw_GBps, r.oop_busbw_GBps)
                                            : std::make_pair(r.ip_algbw_GBps, r.ip_busbw_GBps);
  }
  std::vector<std::pair<double, double>> pts(by_size.begin(), by_size.end());
  if (pts.size() < 2)
    throw InputError("calibrate: the " + b.collective + " table at line " + std::to_string(b.first_line) +
                     " has fewer than 2 rows with a time; need at least 2 message sizes");

  // Ranks: flag > device list > the busbw/algbw ratio of the row with the largest algbw (ratio = bus factor).
  if (opt.ranks > kMaxRanks)
    throw InputError("--ranks " + std::to_string(opt.ranks) + " is beyond " + std::to_string(kMaxRanks) + " ranks");
  if (opt.nodes > kMaxRanks)
    throw InputError("--nodes " + std::to_string(opt.nodes) + " is beyond " + std::to_string(kMaxRanks) + " nodes");
  c.ranks = opt.ranks > 0 ? opt.ranks : file.device_ranks;
  if (c.ranks <= 0) {
    double best_alg = 0, ratio = 0;
    for (const auto& [s, bw] : bw_by_size)
      if (bw.first > best_alg && bw.second > 0) {
        best_alg = bw.first;
        ratio = bw.second / bw.first;
      }
    double estimate = 0;  // the n whose bus factor is the ratio
    if (b.collective == "all_reduce" && ratio > 1.0 && ratio < 2.0) estimate = 2.0 / (2.0 - ratio);
    else if ((b.collective == "all_gather" || b.collective == "reduce_scatter" || b.collective == "alltoall") &&
             ratio > 0.0 && ratio < 1.0)
      estimate = 1.0 / (1.0 - ratio);
    const int n = estimate >= 1.5 && estimate <= static_cast<double>(kMaxRanks) ? static_cast<int>(std::lround(estimate)) : 0;
    if (n < 2)
      throw InputError("calibrate: cannot tell how many ranks ran the benchmark (no device list, and busbw/algbw "
                       "gives no bus factor); pass --ranks N");
    c.ranks = n;
    c.notes.push_back("no device list: " + std::to_string(n) + " ranks inferred from busbw/algbw = " +
                      fmt_num(ratio, 5) + " (nccl-tests bus factor)");
  }
  const int gpn = opt.gpus_per_node > 0 ? opt.gpus_per_node : 8;
  if (opt.nodes > 0) c.nodes = opt.nodes;
  else if (!file.hosts.empty() && file.device_ranks > 0) c.nodes = static_cast<int>(file.hosts.size());
  else {
    c.nodes = static_cast<int>((std::int64_t{c.ranks} + gpn - 1) / gpn);  // int64: --ranks 2147483647 must not wrap
    c.notes.push_back("no host list: " + std::to_string(c.nodes) + " node(s) assumed (" + std::to_string(c.ranks) +
                      " ranks, " + std::to_string(gpn) + " GPUs per node)");
  }
  c.intra_node = c.nodes <= 1;
  c.bus_factor = nccl_tests_bus_factor(c.collective, c.ranks);
  // One rank: all-reduce, all-gather, reduce-scatter and all-to-all move nothing between ranks (bus factor 0, and
  // nccl-tests prints busbw 0), so no bus bandwidth can be fitted (found by fuzz_nccl: it printed "busbw = 0 GB/s"
  // and NaN errors).
  if (!(c.bus_factor > 0))
    throw InputError("calibrate: the " + b.collective + " table at line " + std::to_string(b.first_line) + " ran on " +
                     std::to_string(c.ranks) + " rank" + (c.ranks == 1 ? "" : "s") + (opt.ranks > 0 ? " (--ranks)" : " (device list)") +
                     ": a collective on one rank moves no data between ranks, so it has no bus bandwidth; pass "
                     "--ranks N with the number of ranks that ran it");

  // ---- protocol regimes: contiguous splits, 1..3 lines, chosen by BIC on relative error ----
  // Up to kExhaustiveSizes distinct sizes (every real nccl-tests table: ≤ ~40) every split is tried. Beyond, trying
  // all O(n²) pairs of splits at O(n) each was cubic (3,000 rows: 142 s), so the splits are found coarse-to-fine
  // instead: a grid of kGrid split positions, then the grid around the best narrowed until it is exhaustive, and for
  // two splits alternating such 1-D searches from the best coarse pair — O(n log n) fits in all.
  const std::size_t n = pts.size();
  double best_bic = std::numeric_limits<double>::infinity();
  std::vector<Line> best;
  std::vector<Line> lines;
  // Bayesian information criterion with Gaussian relative errors: n·ln(SSE/n) + p·ln(n), p = 2k + (k − 1).
  auto bic_of = [&](const std::vector<std::size_t>& cuts) {
    if (!fit_segments(pts, cuts, lines)) return std::numeric_limits<double>::infinity();
    const double sse = std::max(rel_sse(lines, pts), 1e-12);
    const double p = static_cast<double>(3 * (cuts.size() + 1) - 1);
    const double bic = static_cast<double>(n) * std::log(sse / static_cast<double>(n)) + p * std::log(static_cast<double>(n));
    if (bic < best_bic) {
      best_bic = bic;
      best = lines;
    }
    return std::isnan(bic) ? std::numeric_limits<double>::infinity() : bic;
  };
  const std::size_t max_k = std::min<std::size_t>(3, n / 2);
  constexpr std::size_t kExhaustiveSizes = 64;
  if (n <= kExhaustiveSizes) {
    for (std::size_t k = 1; k <= std::max<std::size_t>(1, max_k); ++k) {
      if (k == 1) bic_of({});
      else if (k == 2)
        for (std::size_t i = 2; i + 2 <= n; ++i) bic_of({i});
      else
        for (std::size_t i = 2; i + 4 <= n; ++i)
          for (std::size_t j = i + 2; j + 2 <= n; ++j) bic_of({i, j});
    }
  } else {
    constexpr std::size_t kGrid = 16;
    // The position in [lo, hi] where f is lowest, by narrowing a grid of kGrid + 1 points around the best one.
    auto zoom = [&](std::size_t lo, std::size_t hi, const auto& f) {
      std::size_t arg = lo;
      double low = std::numeric_limits<double>::infinity();
      auto try_at = [&](std::size_t i) {
        const double v = f(i);
        if (v < low) low = v, arg = i;
      };
      while (hi - lo + 1 > kGrid + 1) {
        const std::size_t step = (hi - lo) / kGrid;
        for (std::size_t m = 0; m <= kGrid; ++m) try_at(lo + m * step);
        try_at(hi);
        const std::size_t centre = arg;
        lo = centre > lo + step ? centre - step : lo;
        hi = centre + step < hi ? centre + step : hi;
      }
      for (std::size_t i = lo; i <= hi; ++i) try_at(i);
      return arg;
    };
    bic_of({});
    zoom(2, n - 2, [&](std::size_t i) { return bic_of({i}); });
    // Two splits i < j, each segment with at least 2 sizes: 2 ≤ i, i + 2 ≤ j ≤ n − 2.
    std::size_t bi = 2, bj = 4;
    double low = std::numeric_limits<double>::infinity();
    const std::size_t step = std::max<std::size_t>(1, (n - 4) / kGrid);
    for (std::size_t i = 2; i + 4 <= n; i += step)
      for (std::size_t j = i + 2; j + 2 <= n; j += step) {
        const double v = bic_of({i, j});
        if (v < low) low = v, bi = i, bj = j;
      }
    for (int round = 0; round < 4; ++round) {
      const std::size_t i = zoom(2, bj - 2, [&](std::size_t x) { return bic_of({x, bj}); });
      const std::size_t j = zoom(i + 2, n - 2, [&](std::size_t x) { return bic_of({i, x}); });
      if (i == bi && j == bj) break;
      bi = i, bj = j;
    }
  }
  if (best.empty())
    throw InputError("calibrate: the " + b.collective + " times do not grow with the message size; cannot fit a "
                     "bandwidth");
  for (const auto& l : best)
    c.regimes.push_back({l.alpha, c.bus_factor / l.slope, pts[l.from].first, pts[l.to - 1].first});
  c.alpha_s = best.front().alpha;
  c.busbw_Bps = c.bus_factor / best.back().slope;
  if (c.alpha_s <= 0) {
    // A regime fitted on a handful of sizes can put its intercept at or below zero; the latency floor is then the
    // smallest measured time.
    c.alpha_s = pts.front().second;
    c.notes.push_back("the first regime's intercept is not positive: alpha is the smallest message's time");
  }

  // ---- points, errors, R² ----
  double mean = 0;
  for (const auto& [s, t] : pts) mean += t;
  mean /= static_cast<double>(n);
  double ss_tot = 0, ss_res = 0, ss_res_ab = 0;
  for (const auto& [s, t] : pts) {
    CalibrationPoint p;
    p.bytes = s;
    p.measured_s = t;
    p.predicted_s = model_time(best, s, &p.regime);
    p.alpha_beta_s = c.alpha_s + s * c.bus_factor / c.busbw_Bps;  // the single α–β line
    ss_tot += (t - mean) * (t - mean);
    ss_res += (p.predicted_s - t) * (p.predicted_s - t);
    ss_res_ab += (p.alpha_beta_s - t) * (p.alpha_beta_s - t);
    const double err = std::fabs(p.predicted_s - t) / t;
    c.max_error = std::max(c.max_error, err);
    if (err > 0.15) c.failures_bytes.push_back(s);
    if (std::fabs(p.alpha_beta_s - t) / t > 0.15) c.alpha_beta_fails_bytes.push_back(s);
    c.points.push_back(p);
  }
  c.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  c.alpha_beta_r2 = ss_tot > 0 ? 1 - ss_res_ab / ss_tot : 1;
  for (const auto& [s, bw] : bw_by_size) c.peak_busbw_GBps = std::max(c.peak_busbw_GBps, bw.second);
  return c;
}

// ---- rendering ----------------------------------------------------------------------------------------------------
namespace {
using ojson = nlohmann::ordered_json;

ojson fit_json(const Calibration& c) {
  ojson j;
  j["collective"] = c.collective;
  j["ranks"] = c.ranks;
  j["alpha_us"] = c.alpha_s * 1e6;
  j["busbw_gbytes_per_s"] = c.busbw_Bps / 1e9;
  j["r2"] = c.r2;
  ojson pts = ojson::array();
  for (const auto& p : c.points) {
    pts.push_back({{"bytes", static_cast<std::int64_t>(std::llround(p.bytes))},
                   {"measured_us", p.measured_s * 1e6},
                   {"predicted_us", p.predicted_s * 1e6},
                   {"error", (p.predicted_s - p.measured_s) / p.measured_s},
                   {"regime", p.regime},
                   {"alpha_beta_us", p.alpha_beta_s * 1e6},
                   {"alpha_beta_error", (p.alpha_beta_s - p.measured_s) / p.measured_s}});
  }
  j["points"] = pts;
  j["nodes"] = c.nodes;
  j["tier"] = c.intra_node ? "intra" : "inter";
  j["gpu"] = c.gpu_name.empty() ? ojson(nullptr) : ojson(c.gpu_name);
  j["bus_factor"] = c.bus_factor;
  j["model"] = "t(S) = min over protocol regimes k of (alpha_k + S * bus_factor / busbw_k); alpha_us = alpha of the "
               "first (small-message) regime, busbw_gbytes_per_s = busbw of the last (large-message) regime";
  ojson regimes = ojson::array();
  for (const auto& r : c.regimes)
    regimes.push_back({{"alpha_us", r.alpha_s * 1e6},
                       {"busbw_gbytes_per_s", r.busbw_Bps / 1e9},
                       {"from_bytes", static_cast<std::int64_t>(std::llround(r.from_bytes))},
                       {"to_bytes", static_cast<std::int64_t>(std::llround(r.to_bytes))}});
  j["regimes"] = regimes;
  ojson switches = ojson::array();
  for (std::size_t k = 1; k < c.regimes.size(); ++k)
    switches.push_back(static_cast<std::int64_t>(std::llround(c.regimes[k].from_bytes)));
  j["protocol_switch_bytes"] = switches;
  j["max_error"] = c.max_error;
  auto bytes_list = [](const std::vector<double>& v) {
    ojson a = ojson::array();
    for (double x : v) a.push_back(static_cast<std::int64_t>(std::llround(x)));
    return a;
  };
  j["failures_bytes"] = bytes_list(c.failures_bytes);
  j["alpha_beta"] = {{"model", "t(S) = alpha_us + S * bus_factor / busbw_gbytes_per_s"},
                     {"r2", c.alpha_beta_r2},
                     {"fails_bytes", bytes_list(c.alpha_beta_fails_bytes)}};
  j["peak_measured_busbw_gbytes_per_s"] = c.peak_busbw_GBps >= 0 ? ojson(c.peak_busbw_GBps) : ojson(nullptr);
  j["avg_busbw_gbytes_per_s_footer"] = c.avg_busbw_GBps >= 0 ? ojson(c.avg_busbw_GBps) : ojson(nullptr);
  j["notes"] = c.notes;
  return j;
}

std::string size_str(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return fmt_num(b, 4) + " " + units[u];
}
}  // namespace

std::string calibration_json(const std::vector<Calibration>& fits, std::size_t primary) {
  ojson root = fit_json(fits.at(primary));
  if (fits.size() > 1) {
    ojson blocks = ojson::array();
    for (const auto& f : fits) blocks.push_back(fit_json(f));
    root["blocks"] = blocks;
  }
  return dump_output(root) + "\n";
}

std::string calibration_table(const std::vector<Calibration>& fits, std::size_t primary) {
  std::ostringstream o;
  for (std::size_t i = 0; i < fits.size(); ++i) {
    const auto& c = fits[i];
    if (fits.size() > 1) o << (i == primary ? "* " : "  ") << "block " << (i + 1) << "\n";
    o << c.collective << ", " << c.ranks << " ranks on " << c.nodes << " node(s) (" << (c.intra_node ? "intra" : "inter")
      << "-node tier)" << (c.gpu_name.empty() ? "" : ", " + c.gpu_name) << "\n";
    o << "alpha = " << fmt_num(c.alpha_s * 1e6, 4) << " us, busbw = " << fmt_num(c.busbw_Bps / 1e9, 4)
      << " GB/s, R^2 = " << fmt_fixed(c.r2, 4) << ", max error " << fmt_fixed(100 * c.max_error, 1) << " %\n";
    o << "model: t(S) = min_k (alpha_k + S*" << fmt_num(c.bus_factor, 4) << "/busbw_k) over " << c.regimes.size()
      << " protocol regime(s):\n";
    for (std::size_t k = 0; k < c.regimes.size(); ++k)
      o << "  regime " << k << ": alpha " << fmt_num(c.regimes[k].alpha_s * 1e6, 4) << " us, busbw "
        << fmt_num(c.regimes[k].busbw_Bps / 1e9, 4) << " GB/s (fitted on " << size_str(c.regimes[k].from_bytes)
        << " - " << size_str(c.regimes[k].to_bytes) << ")\n";
    o << std::right << std::setw(12) << "size" << std::setw(14) << "measured us" << std::setw(14) << "predicted us"
      << std::setw(9) << "error" << std::setw(8) << "regime" << std::setw(16) << "single a-b us" << std::setw(9)
      << "error" << "\n";
    for (const auto& p : c.points) {
      const double e = (p.predicted_s - p.measured_s) / p.measured_s;
      const double e1 = (p.alpha_beta_s - p.measured_s) / p.measured_s;
      o << std::setw(12) << size_str(p.bytes) << std::setw(14) << fmt_fixed(p.measured_s * 1e6, 2) << std::setw(14)
        << fmt_fixed(p.predicted_s * 1e6, 2) << std::setw(8) << fmt_fixed(100 * e, 1) << "%" << std::setw(8)
        << p.regime << std::setw(16) << fmt_fixed(p.alpha_beta_s * 1e6, 2) << std::setw(8) << fmt_fixed(100 * e1, 1)
        << "%" << (std::fabs(e1) > 0.15 ? "  <- single alpha-beta fails" : "") << "\n";
    }
    if (!c.failures_bytes.empty()) {
      o << "sizes still more than 15 % off:";
      for (double s : c.failures_bytes) o << " " << size_str(s);
      o << "\n";
    }
    for (const auto& n : c.notes) o << "note: " << n << "\n";
    if (i + 1 < fits.size()) o << "\n";
  }
  return o.str();
}

}  // namespace parsim
