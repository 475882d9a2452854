// parsim sim/present — the SVG builder, axes and legend shared by the pictures (svg.hpp).
#include "sim/present/svg.hpp"

#include "sim/core/error.hpp"
#include "sim/core/file_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parsim {

namespace svg {

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 (except tab, newline, carriage return).
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') o += ' ';
        else o += c;
    }
  }
  return o;
}

std::string num(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  std::string s = b;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> out;
  if (!(hi > lo) || target < 1) {
    out.push_back(lo);
    return out;
  }
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo)) return {lo};
  const int e0 = static_cast<int>(std::floor(std::log10(lo))), e1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool sparse = e1 - e0 > 4;
  for (int e = e0; e <= e1; ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      if (sparse && m != 1.0) continue;
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  if (out.size() < 2) {  // a narrow range: fall back to linear ticks inside it
    out = nice_ticks(lo, hi, 4);
    out.erase(std::remove_if(out.begin(), out.end(), [](double v) { return v <= 0; }), out.end());
  }
  return out;
}

TimeUnit time_unit(double max_s) {
  if (max_s >= 2.0) return {"s", 1.0};
  if (max_s >= 2e-3) return {"ms", 1e3};
  return {"µs", 1e6};
}

std::string tick_text(double v, double step) {
  int decimals = 0;
  if (step > 0)
    while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) >
                               1e-6 * std::pow(10.0, decimals))
      ++decimals;
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

double text_width(const std::string& s, double size) {
  // Average advance of a sans-serif font (DejaVu Sans / Helvetica / Arial): ≈ 0.55 em for lower case and digits,
  // wider for capitals; multibyte characters count once.
  double w = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    if (c >= 'A' && c <= 'Z') w += 0.68;
    else if (c == ' ' || c == '.' || c == ',' || c == ':' || c == 'i' || c == 'l' || c == '|') w += 0.3;
    else if (c == 'm' || c == 'w' || c == 'M' || c == 'W') w += 0.85;
    else w += 0.56;
  }
  return w * size;
}

Doc::Doc(double width, double height) : w_(width), h_(height) {}

namespace {
// Appends ` name="value"` (string building by append: GCC 12 warns falsely (-Wrestrict) on some operator+ chains).
void attr(std::string& out, const char* name, const std::string& value) {
  out.append(" ").append(name).append("=\"").append(value).append("\"");
}
void extra_attrs(std::string& out, const std::string& extra) {
  if (!extra.empty()) out.append(" ").append(extra);
}
}  // namespace

void Doc::rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra) {
  body_.append("<rect");
  attr(body_, "x", num(x, 2));
  attr(body_, "y", num(y, 2));
  attr(body_, "width", num(std::max(0.0, w), 2));
  attr(body_, "height", num(std::max(0.0, h), 2));
  attr(body_, "fill", fill);
  extra_attrs(body_, extra);
  body_.append("/>\n");
}

void Doc::line(double x1, double y1, double x2, double y2, const std::string& stroke, double width,
               const std::string& extra) {
  body_.append("<line");
  attr(body_, "x1", num(x1, 2));
  attr(body_, "y1", num(y1, 2));
  attr(body_, "x2", num(x2, 2));
  attr(body_, "y2", num(y2, 2));
  attr(body_, "stroke", stroke);
  attr(body_, "stroke-width", num(width, 2));
  extra_attrs(body_, extra);
  body_.append("/>\n");
}

void Doc::text(double x, double y, const std::string& s, double size, const std::string& fill,
               const std::string& anchor, const std::string& weight, const std::string& extra) {
  body_.append("<text");
  attr(body_, "x", num(x, 1));
  attr(body_, "y", num(y, 1));
  attr(body_, "font-size", num(size, 1));
  if (fill != kInk) attr(body_, "fill", fill);
  if (anchor != "start") attr(body_, "text-anchor", anchor);
  if (weight != "normal") attr(body_, "font-weight", weight);
  extra_attrs(body_, extra);
  body_.append(">").append(esc(s)).append("</text>\n");
}

void Doc::circle(double cx, double cy, double r, const std::string& fill, const std::string& extra) {
  body_.append("<circle");
  attr(body_, "cx", num(cx, 1));
  attr(body_, "cy", num(cy, 1));
  attr(body_, "r", num(r, 1));
  attr(body_, "fill", fill);
  extra_attrs(body_, extra);
  body_.append("/>\n");
}

void Doc::path(const std::string& d, const std::string& fill, const std::string& stroke, double width,
               const std::string& extra) {
  body_.append("<path");
  attr(body_, "d", d);
  attr(body_, "fill", fill);
  attr(body_, "stroke", stroke);
  attr(body_, "stroke-width", num(width, 2));
  extra_attrs(body_, extra);
  body_.append("/>\n");
}

void Doc::open_group(const std::string& attrs) {
  body_.append("<g");
  extra_attrs(body_, attrs);
  body_.append(">\n");
  ++open_;
}

void Doc::close_group() {
  if (open_ == 0) return;
  body_ += "</g>\n";
  --open_;
}

void Doc::raw(const std::string& s) { body_ += s; }

void Doc::set_title(const std::string& t) { title_ = t; }

std::string Doc::str() const {
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(w_, 0) + "\" height=\"" + num(h_, 0) +
       "\" viewBox=\"0 0 " + num(w_, 0) + " " + num(h_, 0) +
       "\" font-family=\"'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif\">\n";
  if (!title_.empty()) s += "<title>" + esc(title_) + "</title>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + num(w_, 0) + "\" height=\"" + num(h_, 0) + "\" fill=\"#ffffff\"/>\n";
  s += body_;
  for (int i = 0; i < open_; ++i) s += "</g>\n";
  s += "</svg>\n";
  return s;
}

void RectBatch::add(const std::string& style, double x, double y, double w, double h) {
  if (!(w > 0) || !(h > 0)) return;
  auto it = std::find_if(batches_.begin(), batches_.end(), [&](const auto& b) { return b.first == style; });
  if (it == batches_.end()) {
    batches_.emplace_back(style, std::string());
    it = std::prev(batches_.end());
  }
  std::string& d = it->second;
  // Round the corners, not the sizes, so that adjacent rectangles stay adjacent.
  const double x0 = std::round(x * 10) / 10, y0 = std::round(y * 10) / 10;
  const double x1 = std::round((x + w) * 10) / 10, y1 = std::round((y + h) * 10) / 10;
  d.append("M").append(num(x0)).append(" ").append(num(y0)).append("h").append(num(std::max(0.1, x1 - x0)));
  d.append("v").append(num(std::max(0.1, y1 - y0))).append("h").append(num(-std::max(0.1, x1 - x0))).append("z");
}

void RectBatch::flush(Doc& d) {
  for (const auto& [style, path] : batches_) {
    std::string s = "<path d=\"";
    s.append(path).append("\" ").append(style).append("/>\n");
    d.raw(s);
  }
  batches_.clear();
}

std::string idle_pattern_defs() {
  return "<defs><pattern id=\"idle\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/>"
         "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c4c4c4\" stroke-width=\"2\"/></pattern></defs>\n";
}

double legend(Doc& d, double x, double y, double max_width, const std::vector<LegendItem>& items) {
  const double sw = 14, gap = 18, size = 12, row_h = 20;
  double cx = x, cy = y;
  for (const LegendItem& it : items) {
    const double w = sw + 6 + text_width(it.label, size);
    if (cx > x && cx + w > x + max_width) {
      cx = x;
      cy += row_h;
    }
    d.rect(cx, cy, sw, sw, it.fill, it.stroke.empty() ? "" : "stroke=\"" + it.stroke + "\" stroke-width=\"1\"");
    d.text(cx + sw + 6, cy + sw - 2.5, it.label, size, kInk);
    cx += w + gap;
  }
  return cy + row_h - y;
}

}  // namespace svg

void write_text_file(const std::string& path, const std::string& content, const std::string& flag) {
  write_output_file(path, content, flag);  // "cannot write --svg 'x.svg': No such file or directory"
}

}  // namespace parsim
