// parsim sim/present — the picture of a measured profile (`parsim profile --svg FILE`): one horizontal bar per rank,
// its measured window split into compute, exposed communication, exposed memcpy and idle (they add up to the window:
// idle = window − compute − exposed communication − exposed memcpy, TraceLens's GPU timeline), and under it a thin bar
// of all communication time (hidden and exposed). The slowest rank is marked.
#include "sim/present/svg.hpp"

#include "sim/core/text.hpp"

#include <algorithm>

namespace parsim {

namespace {

std::string ms(double s) { return fmt_fixed(s * 1e3, s * 1e3 >= 100 ? 0 : 1) + " ms"; }

}  // namespace

std::string ranks_svg(const RanksPicture& p) {
  constexpr double W = 1280, L = 150, R = 250;
  const double PW = W - L - R;
  const std::size_t n = p.ranks.size();
  const double bar_h = std::clamp(420.0 / static_cast<double>(std::max<std::size_t>(1, n)), 5.0, 26.0);
  const double comm_h = std::max(2.0, std::round(bar_h * 0.3));
  const double row_h = bar_h + comm_h + std::clamp(bar_h * 0.5, 2.0, 12.0);
  double t_max = 0;
  for (const RankBar& b : p.ranks) t_max = std::max({t_max, b.total_s, b.comm_s});
  if (!(t_max > 0)) t_max = 1;
  const svg::TimeUnit unit = svg::time_unit(t_max);
  // The axis ends at the first tick at or past the longest window.
  auto ticks = svg::nice_ticks(0, t_max * unit.per_s, 10);
  if (ticks.size() > 1 && ticks.back() < t_max * unit.per_s) ticks.push_back(ticks.back() + (ticks[1] - ticks[0]));
  const double x_hi = std::max(t_max * unit.per_s, ticks.empty() ? 0.0 : ticks.back());
  auto X = [&](double s) { return L + s * unit.per_s / x_hi * PW; };

  svg::Doc d(W, 100);
  d.set_title(p.title);
  d.raw(svg::idle_pattern_defs());
  d.text(20, 32, p.title, 19, svg::kInk, "start", "bold");
  double y = 52;
  for (const std::string& note : p.notes) {
    d.text(20, y, note, 12, svg::kMuted);
    y += 17;
  }
  y += 4;
  y += svg::legend(d, 20, y, W - 40,
                   {{"compute (kernels and memsets)", svg::kBlue},
                    {"exposed communication (nothing computes)", svg::kVermillion},
                    {"exposed memcpy", svg::kYellow, "#b0a000"},
                    {"idle", "url(#idle)", "#bdbdbd"},
                    {"all communication, hidden or not (thin bar)", svg::kCommHidden}}) +
       10;
  const double top = y;
  // Grid.
  const double bottom = top + row_h * static_cast<double>(n);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double v : ticks) {
    const double x = L + v / x_hi * PW;
    d.line(x, top - 4, x, bottom, svg::kRule, 1);
    d.line(x, bottom, x, bottom + 5, svg::kInk, 1);
    d.text(x, bottom + 18, svg::tick_text(v, step), 11, svg::kInk, "middle");
  }
  d.line(L, bottom, L + PW, bottom, svg::kInk, 1);
  d.text(L + PW / 2, bottom + 36, std::string("time in the measured window (") + unit.name + ")", 12, svg::kMuted,
         "middle");
  svg::RectBatch batch;
  for (std::size_t i = 0; i < n; ++i) {
    const RankBar& b = p.ranks[i];
    const double by = top + row_h * static_cast<double>(i);
    const bool slow = static_cast<int>(i) == p.straggler;
    if (slow) d.rect(4, by - 3, W - 8, bar_h + comm_h + 6, svg::kVermillion, "fill-opacity=\"0.10\"");
    d.rect(L, by, X(b.total_s) - L, bar_h, "url(#idle)");
    double x = L;
    const std::pair<double, const char*> parts[] = {
        {b.compute_s, svg::kBlue}, {b.exposed_comm_s, svg::kVermillion}, {b.exposed_memcpy_s, svg::kYellow}};
    for (const auto& [s, colour] : parts) {
      const double w = X(s) - L;
      batch.add(std::string("fill=\"") + colour + "\"", x, by, w, bar_h);
      x += w;
    }
    batch.add(std::string("fill=\"") + svg::kCommHidden + "\"", L, by + bar_h + 1, X(b.comm_s) - L, comm_h);
    const double fs = std::clamp(bar_h * 0.6, 8.0, 12.0);
    d.text(L - 8, by + bar_h / 2 + fs * 0.35, b.label, fs, svg::kInk, "end", slow ? "bold" : "normal");
    std::string right = ms(b.total_s) + "  · exposed comm " + fmt_fixed(b.total_s > 0 ? 100 * b.exposed_comm_s / b.total_s : 0, 1) + " %";
    if (slow) right = "◀ slowest  " + right;
    d.text(X(b.total_s) + 6, by + bar_h / 2 + fs * 0.35, right, std::min(fs, 10.5), slow ? svg::kVermillion : svg::kMuted,
           "start", slow ? "bold" : "normal");
  }
  batch.flush(d);
  d.text(20, bottom + 58, "Measured by parsim profile " + std::string(PARSIM_VERSION) +
                               " from the PyTorch-profiler traces (TraceLens GPU-timeline definitions).",
         10, svg::kMuted);
  d.set_height(bottom + 72);
  return d.str();
}

}  // namespace parsim
