// parsim sim/present — pictures as standalone SVG 1.1 (no scripts, no external fonts or files; any browser shows them):
//   step_svg     one simulated step: a lane per pipeline stage and one per communication axis it uses, passes coloured by
//                kind, idle time hatched (the bubble), exposed communication marked, a time axis, a legend and a title
//                block with the headline numbers (`parsim predict --svg`);
//   sweep_svg    a sweep: every feasible plan as a point (step time against peak memory per GPU), the Pareto front, the
//                GPU's capacity (and the headroom kept below it), the top plans labelled (`parsim sweep --svg`);
//   ranks_svg    a measured profile: per rank, compute / exposed communication / exposed memcpy / idle as stacked bars
//                with the communication below, the slowest rank marked (`parsim profile --svg`).
// Colours: the Okabe–Ito palette (Okabe & Ito 2008, "Color Universal Design"), distinguishable with the common colour
// vision deficiencies; hidden and exposed communication also differ in lightness, idle time by a hatch pattern.
// Dense pictures are aggregated so that a file stays small (a lane with more slices than pixels is drawn as the share
// of each kind per 2-pixel column).
#pragma once
#include "sim/step/evaluate.hpp"
#include "sim/sweep/sweep.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

namespace svg {

// Okabe–Ito colours.
inline constexpr const char* kBlack = "#000000";
inline constexpr const char* kOrange = "#E69F00";
inline constexpr const char* kSkyBlue = "#56B4E9";
inline constexpr const char* kGreen = "#009E73";    // bluish green
inline constexpr const char* kYellow = "#F0E442";
inline constexpr const char* kBlue = "#0072B2";
inline constexpr const char* kVermillion = "#D55E00";
inline constexpr const char* kPurple = "#CC79A7";   // reddish purple
// Neutrals.
inline constexpr const char* kInk = "#1a1a1a";
inline constexpr const char* kMuted = "#5a5a5a";
inline constexpr const char* kRule = "#d9d9d9";
inline constexpr const char* kCommHidden = "#9e9e9e";

// XML text escaping (&, <, >, ", ').
std::string esc(const std::string& s);
// A coordinate or length with at most `decimals` decimals and no trailing zeros ("12.5", "3").
std::string num(double v, int decimals = 1);
// "Nice" tick values covering [lo, hi] with about `target` ticks (steps 1, 2, 2.5, 5 × 10^k).
std::vector<double> nice_ticks(double lo, double hi, int target);
// Tick values of a log axis over [lo, hi] (lo > 0): 1, 2, 5 × 10^k inside the range (or only powers of ten when the
// range spans many decades).
std::vector<double> log_ticks(double lo, double hi);
// A time unit for an axis running to `max_s`: ("s", 1), ("ms", 1e3) or ("µs", 1e6).
struct TimeUnit {
  const char* name;
  double per_s;
};
TimeUnit time_unit(double max_s);
// Text of a tick value: as few decimals as the step between ticks needs.
std::string tick_text(double v, double step);
// Approximate rendered width of `s` in pixels at `size` px in a sans-serif font (for layout; UTF-8 aware).
double text_width(const std::string& s, double size);

// A small SVG builder: elements are appended in painting order.
class Doc {
public:
  Doc(double width, double height);
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1,
            const std::string& extra = "");
  // anchor: "start" | "middle" | "end"; weight: "normal" | "bold".
  void text(double x, double y, const std::string& s, double size, const std::string& fill = kInk,
            const std::string& anchor = "start", const std::string& weight = "normal", const std::string& extra = "");
  void circle(double cx, double cy, double r, const std::string& fill, const std::string& extra = "");
  void path(const std::string& d, const std::string& fill, const std::string& stroke, double width = 1,
            const std::string& extra = "");
  void open_group(const std::string& attrs);  // <g attrs>
  void close_group();
  void raw(const std::string& s);  // pre-built markup (defs)
  // <title> of the document (shown as the tab name) — set once.
  void set_title(const std::string& t);
  std::string str() const;
  double width() const { return w_; }
  double height() const { return h_; }
  void set_height(double h) { h_ = h; }

private:
  double w_, h_;
  std::string title_;
  std::string body_;
  int open_ = 0;
};

// Many rectangles in a few styles written as one <path> per style (a subpath per rectangle: about a third of the bytes
// of <rect> elements). Styles are painted in the order they were first used.
class RectBatch {
public:
  // `style`: the path's attributes besides d, e.g. `fill="#0072B2"`.
  void add(const std::string& style, double x, double y, double w, double h);
  void flush(Doc& d);  // writes the paths and clears the batch
  bool empty() const { return batches_.empty(); }

private:
  std::vector<std::pair<std::string, std::string>> batches_;
};

// The legend as a row (or rows) of swatches: returns the height used. `hatch` draws the idle pattern.
struct LegendItem {
  std::string label;
  std::string fill;         // a colour, or "url(#idle)" for the hatch
  std::string stroke = "";  // optional outline
};
double legend(Doc& d, double x, double y, double max_width, const std::vector<LegendItem>& items);

// The hatch pattern used for idle time (id "idle") inside <defs>.
std::string idle_pattern_defs();

}  // namespace svg

// ---- the pictures ----

// One simulated step (the evaluator's last run with EvalOptions::keep_timeline).
std::string step_svg(const Scenario& sc, const Evaluator& ev, const StepReport& r);

// A sweep: every feasible plan of `rep.ranked` (complete when the sweep ran here), `headroom_gib` below capacity
// drawn when > 0, the `label_top` fastest plans labelled.
std::string sweep_svg(const SweepReport& rep, double headroom_gib, int label_top = 5);

// A measured profile, one bar per rank.
struct RankBar {
  std::string label;  // "rank 3" (and the file or device when useful)
  double total_s = 0, compute_s = 0, comm_s = 0, exposed_comm_s = 0, exposed_memcpy_s = 0, idle_s = 0;
};
struct RanksPicture {
  std::string title;              // e.g. "parsim profile: 8 ranks"
  std::vector<std::string> notes; // shown under the title (straggler, linking)
  std::vector<RankBar> ranks;
  int straggler = -1;             // index into ranks of the rank that arrives last at collectives, or -1
};
std::string ranks_svg(const RanksPicture& p);

// Writes `content` to `path`; throws InputError naming `flag` when it cannot.
void write_text_file(const std::string& path, const std::string& content, const std::string& flag);

}  // namespace parsim
