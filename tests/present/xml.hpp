// A strict reader for the subset of XML 1.0 that parsim's SVG pictures use (a test helper): prolog, elements,
// attributes in double quotes, character data, the five predefined entities and numeric character references. It
// fails (throws std::runtime_error with the offset) on what a browser's XML parser rejects: unbalanced or crossed
// tags, an unquoted or repeated attribute, a bare '&' or '<' in text or attributes, text after the root element.
#pragma once
#include <cctype>
#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace parsim::testing {

struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<std::unique_ptr<XmlNode>> children;
  std::string text;  // character data directly inside, entities decoded

  // Every descendant (self included) named `n`, in document order.
  void collect(const std::string& n, std::vector<const XmlNode*>& out) const {
    if (name == n) out.push_back(this);
    for (const auto& c : children) c->collect(n, out);
  }
  std::vector<const XmlNode*> all(const std::string& n) const {
    std::vector<const XmlNode*> out;
    collect(n, out);
    return out;
  }
  std::string attr(const std::string& k) const {
    auto it = attrs.find(k);
    return it == attrs.end() ? std::string() : it->second;
  }
};

class XmlReader {
public:
  explicit XmlReader(const std::string& s) : s_(s) {}
  std::unique_ptr<XmlNode> parse() {
    skip_ws();
    if (s_.compare(i_, 5, "<?xml") == 0) {
      const auto e = s_.find("?>", i_);
      if (e == std::string::npos) fail("unterminated XML declaration");
      i_ = e + 2;
    }
    skip_misc();
    if (i_ >= s_.size() || s_[i_] != '<') fail("no root element");
    auto root = element();
    skip_misc();
    if (i_ != s_.size()) fail("content after the root element");
    return root;
  }

private:
  const std::string& s_;
  std::size_t i_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("XML: " + why + " at offset " + std::to_string(i_));
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  void skip_misc() {
    for (;;) {
      skip_ws();
      if (s_.compare(i_, 4, "<!--") == 0) {
        const auto e = s_.find("-->", i_);
        if (e == std::string::npos) fail("unterminated comment");
        i_ = e + 3;
      } else {
        return;
      }
    }
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  }
  std::string name() {
    const std::size_t b = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    if (i_ == b) fail("expected a name");
    return s_.substr(b, i_ - b);
  }
  // Decodes character data up to `stop` (not consumed); rejects '<' inside attribute values and bare '&'.
  std::string chars(char stop) {
    std::string out;
    while (i_ < s_.size() && s_[i_] != stop) {
      const char c = s_[i_];
      if (c == '<') fail("'<' inside an attribute value");
      if (c == '&') {
        const auto e = s_.find(';', i_);
        if (e == std::string::npos || e - i_ > 10) fail("bare '&'");
        const std::string ent = s_.substr(i_ + 1, e - i_ - 1);
        if (ent == "amp") out += '&';
        else if (ent == "lt") out += '<';
        else if (ent == "gt") out += '>';
        else if (ent == "quot") out += '"';
        else if (ent == "apos") out += '\'';
        else if (!ent.empty() && ent[0] == '#') out += '?';
        else fail("unknown entity &" + ent + ";");
        i_ = e + 1;
      } else {
        out += c;
        ++i_;
      }
    }
    return out;
  }
  std::unique_ptr<XmlNode> element() {
    ++i_;  // '<'
    auto n = std::make_unique<XmlNode>();
    n->name = name();
    for (;;) {
      const std::size_t before = i_;
      skip_ws();
      if (i_ >= s_.size()) fail("unterminated start tag");
      if (s_.compare(i_, 2, "/>") == 0) {
        i_ += 2;
        return n;
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      if (i_ == before) fail("attributes must be separated by white space");
      const std::string k = name();
      if (i_ >= s_.size() || s_[i_] != '=') fail("attribute " + k + " without '='");
      ++i_;
      if (i_ >= s_.size() || s_[i_] != '"') fail("attribute " + k + " not in double quotes");
      ++i_;
      std::string v = chars('"');
      if (i_ >= s_.size()) fail("unterminated attribute " + k);
      ++i_;
      if (!n->attrs.emplace(k, std::move(v)).second) fail("repeated attribute " + k);
    }
    for (;;) {
      if (i_ >= s_.size()) fail("element <" + n->name + "> not closed");
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        const std::string close = name();
        if (close != n->name) fail("</" + close + "> closes <" + n->name + ">");
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != '>') fail("malformed end tag");
        ++i_;
        return n;
      }
      if (s_.compare(i_, 4, "<!--") == 0) {
        const auto e = s_.find("-->", i_);
        if (e == std::string::npos) fail("unterminated comment");
        i_ = e + 3;
        continue;
      }
      if (s_[i_] == '<') {
        n->children.push_back(element());
        continue;
      }
      // Character data up to the next '<' ('&' decoded; '>' is allowed in text).
      const std::size_t e = s_.find('<', i_);
      if (e == std::string::npos) fail("element <" + n->name + "> not closed");
      std::string seg;
      while (i_ < e) {
        if (s_[i_] == '&') {
          std::string t = chars('<');
          seg += t;
          break;
        }
        seg += s_[i_++];
      }
      n->text += seg;
    }
  }
};

inline std::unique_ptr<XmlNode> parse_xml(const std::string& s) { return XmlReader(s).parse(); }

// Number of subpaths ("M" commands) of a path's d attribute: RectBatch writes one per rectangle.
inline std::size_t subpaths(const std::string& d) {
  std::size_t n = 0;
  for (char c : d) n += c == 'M';
  return n;
}

}  // namespace parsim::testing
