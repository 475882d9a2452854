// parsim sim/present — the picture of a sweep (`parsim sweep --svg FILE`): every feasible plan as a point, peak memory
// per GPU across, step time up (log scale when the times span more than a factor 3), coloured by where the plan
// loses most time (the sweep's main_loss: the bubble or one kind of exposed communication); the Pareto front of
// (step time, memory) drawn as a staircase and named; the GPU's capacity (and the headroom kept below it) as vertical
// lines; the fastest plans numbered on the plot and listed beside it with their numbers.
#include "sim/present/svg.hpp"

#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>

namespace parsim {

namespace {

using svg::Doc;

struct LossStyle {
  const char* key;     // PlanResult::main_loss
  const char* label;   // legend
  const char* colour;
};
// Okabe–Ito, one hue per cause of lost time.
constexpr LossStyle kLoss[] = {
    {"bubble", "pipeline bubble", svg::kSkyBlue},
    {"tp comm", "exposed TP communication", svg::kVermillion},
    {"cp comm", "exposed CP communication", svg::kYellow},
    {"ep comm", "exposed EP communication", svg::kPurple},
    {"dp comm", "exposed DP communication", svg::kBlue},
    {"pp comm", "exposed PP communication", svg::kGreen},
};
const char* loss_colour(const std::string& k) {
  for (const auto& l : kLoss)
    if (k == l.key) return l.colour;
  return svg::kMuted;
}

std::string plan_label(const PlanResult& r) {
  std::string s = r.plan.to_string() + "  mbs " + std::to_string(r.mbs);
  if (r.recompute != Recompute::None) s += "  " + to_string(r.recompute);
  if (r.sp) s += "  sp";
  return s;
}

}  // namespace

std::string sweep_svg(const SweepReport& rep, double headroom_gib, int label_top) {
  constexpr double W = 1280, H = 760;
  constexpr double L = 92, T = 112, PW = 780, PH = 540;  // plot area
  constexpr double listX = L + PW + 36;
  Doc d(W, H);
  d.set_title("parsim sweep: " + rep.model + " on " + std::to_string(rep.gpus) + " × " + rep.gpu);
  const auto& pts = rep.ranked;
  // Title block.
  d.text(20, 32,
         "parsim sweep  ·  " + rep.model + "  ·  " + std::to_string(rep.gpus) + " × " + rep.gpu + " (" +
             std::to_string(rep.gpus_per_node) + " per node)",
         19, svg::kInk, "start", "bold");
  std::string sub = "seq " + std::to_string(rep.seq) + "  ·  global batch " + std::to_string(rep.gbs) + "  ·  " +
                    rep.precision + "  ·  ";
  if (rep.counts_known)
    sub += std::to_string(rep.feasible) + " feasible plans of " + std::to_string(rep.evaluated) + " evaluated (" +
           std::to_string(rep.simulated) + " simulated)";
  else
    sub += std::to_string(pts.size()) + " plans";
  if (!rep.complete) sub += "  ·  only the listed top plans (the file holds no others)";
  d.text(20, 54, sub, 12.5, svg::kMuted);
  if (!rep.space.empty()) d.text(20, 72, "space: " + rep.space, 11, svg::kMuted);

  if (pts.empty()) {
    d.text(W / 2, H / 2, "no plan fits", 20, svg::kVermillion, "middle", "bold");
    return d.str();
  }
  // Axes ranges.
  double cap = 0, mem_max = 0, t_min = 1e300, t_max = 0;
  for (const auto& p : pts) {
    cap = std::max(cap, p.capacity_gib);
    mem_max = std::max(mem_max, p.peak_gib);
    t_min = std::min(t_min, p.step_time_s);
    t_max = std::max(t_max, p.step_time_s);
  }
  const double x_hi = std::max(cap, mem_max) * 1.04;
  auto X = [&](double gib) { return L + gib / x_hi * PW; };
  const bool log_y = t_max > 3 * t_min;
  double y_lo = t_min, y_hi = t_max;
  if (log_y) {
    y_lo = t_min / 1.12;
    y_hi = t_max * 1.12;
  } else {
    const double pad = std::max((t_max - t_min) * 0.08, t_max * 0.02);
    y_lo = std::max(0.0, t_min - pad);
    y_hi = t_max + pad;
  }
  auto Y = [&](double s) {
    const double f = log_y ? (std::log(s) - std::log(y_lo)) / (std::log(y_hi) - std::log(y_lo))
                           : (s - y_lo) / (y_hi - y_lo);
    return T + PH - f * PH;
  };
  // Frame, grid, ticks.
  d.rect(L, T, PW, PH, "#fcfcfc", "stroke=\"#bdbdbd\" stroke-width=\"1\"");
  const auto xt = svg::nice_ticks(0, x_hi, 10);
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;
  for (double v : xt) {
    d.line(X(v), T, X(v), T + PH, svg::kRule, 1);
    d.line(X(v), T + PH, X(v), T + PH + 5, svg::kInk, 1);
    d.text(X(v), T + PH + 19, svg::tick_text(v, xstep), 11, svg::kInk, "middle");
  }
  const auto yt = log_y ? svg::log_ticks(y_lo, y_hi) : svg::nice_ticks(y_lo, y_hi, 8);
  for (double v : yt) {
    const double step = log_y ? v / 10 : (yt.size() > 1 ? yt[1] - yt[0] : 1);
    d.line(L, Y(v), L + PW, Y(v), svg::kRule, 1);
    d.line(L - 5, Y(v), L, Y(v), svg::kInk, 1);
    d.text(L - 8, Y(v) + 4, svg::tick_text(v, step), 11, svg::kInk, "end");
  }
  d.text(L + PW / 2, T + PH + 40, "peak memory per GPU (GiB = 2^30 bytes)", 12.5, svg::kInk, "middle");
  d.text(0, 0, std::string("step time (s") + (log_y ? ", log scale)" : ")"), 12.5, svg::kInk, "middle", "normal",
         "transform=\"translate(" + svg::num(L - 58) + " " + svg::num(T + PH / 2) + ") rotate(-90)\"");
  // Capacity and headroom.
  d.line(X(cap), T, X(cap), T + PH, svg::kVermillion, 1.5, "stroke-dasharray=\"6 4\"");
  d.text(X(cap) - 4, T + 14, "GPU capacity " + fmt_fixed(cap, 1) + " GiB", 11, svg::kVermillion, "end");
  if (headroom_gib > 0) {
    const double hx = X(std::max(0.0, cap - headroom_gib));
    d.rect(hx, T, X(cap) - hx, PH, svg::kVermillion, "fill-opacity=\"0.07\"");
    d.line(hx, T, hx, T + PH, svg::kVermillion, 1, "stroke-dasharray=\"2 3\"");
    d.text(hx - 4, T + 30, "headroom " + fmt_fixed(headroom_gib, 1) + " GiB", 11, svg::kVermillion, "end");
  }
  // Points, slowest first so that the fast ones stay on top.
  d.open_group("id=\"plans\" fill-opacity=\"0.75\" stroke=\"#000000\" stroke-opacity=\"0.3\" stroke-width=\"0.5\"");
  for (auto it = pts.rbegin(); it != pts.rend(); ++it)
    d.circle(X(it->peak_gib), Y(it->step_time_s), 4, loss_colour(it->main_loss));
  d.close_group();
  // Pareto front: a staircase through the front (fastest first, memory falling): from each point right... the set of
  // (memory, time) pairs no plan beats on both is the lower-left envelope.
  const auto& front = rep.pareto;
  if (!front.empty()) {
    std::string path;
    for (std::size_t i = 0; i < front.size(); ++i) {
      const double x = X(front[i].peak_gib), y = Y(front[i].step_time_s);
      // Down-left in memory, up in time: horizontal to the new memory at the old time, then up. (Appends, not
      // operator+ chains: GCC 12 warns falsely (-Wrestrict) on those.)
      if (i == 0) path.append("M").append(svg::num(x)).append(" ").append(svg::num(y));
      else path.append("H").append(svg::num(x)).append("V").append(svg::num(y));
    }
    d.path(path, "none", svg::kInk, 1.6);
    d.open_group("id=\"pareto\" fill=\"none\" stroke=\"#1a1a1a\" stroke-width=\"1.6\"");
    for (const auto& p : front) d.circle(X(p.peak_gib), Y(p.step_time_s), 6, "none");
    d.close_group();
    const auto& last = front.back();
    d.text(X(last.peak_gib) + 4, Y(last.step_time_s) - 10, "Pareto front", 12, svg::kInk, "start", "bold");
  }
  // The fastest plans: numbered on the plot, listed on the right.
  const int n = std::min<int>(label_top, static_cast<int>(pts.size()));
  d.text(listX, T + 4, "fastest plans", 13, svg::kInk, "start", "bold");
  for (int i = 0; i < n; ++i) {
    const PlanResult& p = pts[static_cast<std::size_t>(i)];
    const double x = X(p.peak_gib), y = Y(p.step_time_s);
    // Markers fan out to the upper left of their point so that numbers of nearby plans do not sit on each other.
    const double mx = x - 14 - 12 * i, my = y - 14 - 10 * i;
    d.line(x, y, mx, my, svg::kInk, 0.8);
    d.circle(mx, my, 8, svg::kInk);
    d.text(mx, my + 4, std::to_string(i + 1), 10.5, "#ffffff", "middle", "bold");
    const double ly = T + 28 + 46.0 * i;
    d.circle(listX + 9, ly - 4, 8, svg::kInk);
    d.text(listX + 9, ly, std::to_string(i + 1), 10.5, "#ffffff", "middle", "bold");
    d.text(listX + 24, ly, plan_label(p), 12, svg::kInk, "start", "bold");
    d.text(listX + 24, ly + 16,
           fmt_fixed(p.step_time_s, 3) + " s  ·  MFU " + fmt_fixed(100 * p.mfu, 1) + " %  ·  " +
               fmt_fixed(p.peak_gib, 1) + " GiB  ·  " + to_string(p.schedule),
           11, svg::kMuted);
    d.text(listX + 24, ly + 30,
           "most time lost: " + (p.main_loss.empty() ? std::string("—") : p.main_loss) + " (" +
               fmt_fixed(100 * p.main_loss_fraction, 1) + " % of the step)",
           11, svg::kMuted);
  }
  // Legend: colours by main loss (those present), the front, the capacity.
  std::vector<svg::LegendItem> items;
  for (const auto& l : kLoss) {
    const bool present = std::any_of(pts.begin(), pts.end(), [&](const PlanResult& p) { return p.main_loss == l.key; });
    if (present) items.push_back({std::string("most time lost: ") + l.label, l.colour});
  }
  const double ly = T + 28 + 46.0 * n + 8;
  d.text(listX, ly, "points (one per feasible plan)", 13, svg::kInk, "start", "bold");
  svg::legend(d, listX, ly + 10, W - listX - 16, items);
  d.text(20, H - 14,
         "Simulated by parsim " + std::string(PARSIM_VERSION) +
             " (not measured). Pareto front: plans that no other plan beats on both step time and memory.",
         10, svg::kMuted);
  return d.str();
}

}  // namespace parsim
