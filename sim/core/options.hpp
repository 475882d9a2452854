// parsim — declarative option tables: one row per user-facing option (key, flag, kind, help, range, unit, default) with
// the code that parses its text into a target struct T and writes it back. One table drives every front end:
//   * the command line (sim/cli registers each row with CLI11 and feeds back what was given),
//   * JSON (a scenario file, the sim/api JSON-in/JSON-out functions, the Python module): option_values_from_json,
//   * flag strings (the validation CSV's `parsim_args`): option_values_from_tokens,
//   * writing a value back as flags (the sweep's reproduction command) or JSON (the settings echo).
// Every front end reduces its input to (key, text) pairs and applies them with apply_options, so a value is parsed —
// and a bad one reported — by one function whatever its origin. Keys are the flag without its dashes, '-' → '_'
// (`--bucket-mb` ↔ "bucket_mb"): the contract's rule for the Python keyword arguments (docs/cli.md "Additions").
#pragma once
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace parsim {

// Text: any string; Int/Number: a positive integer / number within [min, max]; Flag: present or not (JSON true/false);
// Choice: one of `choices` (case-insensitive); List: several values (a positional list or a repeated option; JSON
// array), the setter is called once per item.
enum class OptionKind { Text, Int, Number, Flag, Choice, List };

// Where an option is offered (bit mask): each command registers the rows carrying its bit.
enum OptionUse : unsigned {
  kUsePredict = 1u,    // parsim predict (and validate, which takes the predict flags)
  kUseSweep = 2u,      // parsim sweep registers it with the same meaning
  kUsePerRow = 4u,     // the sweep reports it per result (its reproduction command writes it for every row)
  kUseAlways = 8u,     // written by options_to_flags even at its default (identity: model, gpu)
  kUseCliOnly = 16u,   // command line only (output format): not a JSON/API key
};

template <class T>
struct Option {
  std::string key;      // JSON key and Python keyword
  std::string flag;     // command-line flag ("--bucket-mb"); empty = positional
  OptionKind kind = OptionKind::Text;
  std::string help;     // one line, without the default
  std::string unit;     // "MB (1e6 bytes)", "tokens", "sequences", … ("" when dimensionless)
  std::string default_text;  // how the default reads in help ("auto", "1", "h100"); "" = none / required
  std::vector<std::string> choices;  // Choice: the valid values, lower case
  unsigned use = kUsePredict;
  bool required = false;
  std::function<void(T&, const std::string&)> set;               // parse `text` into the target (throws InputError)
  std::function<std::optional<std::string>(const T&)> get;       // text that reproduces the value; nullopt = unset
};
template <class T>
using OptionTable = std::vector<Option<T>>;

// One given value: the option's key and its text (a flag's text is "true"); `origin` names where it came from for
// messages ("--seq", "scenario.json: seq", "parsim_args '…'").
struct OptionValue {
  std::string key;
  std::string text;
};

// Appends `x` to a separated list (`sep` between items).
inline void join_to(std::string& s, const char* sep, const std::string& x) {
  if (!s.empty()) s += sep;
  s += x;
}

// ---- row builders: the parsing of each kind lives here, once ----
namespace option {

inline std::string num_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // round-trips exactly
  return buf;
}

// A positive integer within [1, max].
template <class T>
Option<T> integer(std::string key, std::string flag, std::string help, std::string unit, std::string def,
                  std::int64_t max, std::function<void(T&, std::int64_t)> set,
                  std::function<std::optional<std::int64_t>(const T&)> get, unsigned use = kUsePredict) {
  Option<T> o;
  o.key = std::move(key), o.flag = std::move(flag), o.kind = OptionKind::Int, o.help = std::move(help);
  o.unit = std::move(unit), o.default_text = std::move(def), o.use = use;
  const std::string f = o.flag;
  o.set = [f, max, set](T& t, const std::string& text) {
    const std::int64_t v = parse_positive_int(trim(text), f);
    if (v > max) throw InputError(f + " " + text + " is too large (at most " + std::to_string(max) + ")");
    set(t, v);
  };
  o.get = [get](const T& t) -> std::optional<std::string> {
    const auto v = get(t);
    if (!v) return std::nullopt;
    return std::to_string(*v);
  };
  return o;
}

// A positive number.
template <class T>
Option<T> number(std::string key, std::string flag, std::string help, std::string unit, std::string def,
                 std::function<void(T&, double)> set, std::function<std::optional<double>(const T&)> get,
                 unsigned use = kUsePredict) {
  Option<T> o;
  o.key = std::move(key), o.flag = std::move(flag), o.kind = OptionKind::Number, o.help = std::move(help);
  o.unit = std::move(unit), o.default_text = std::move(def), o.use = use;
  const std::string what = o.flag + (o.unit.empty() ? std::string() : " (" + o.unit + ")");
  o.set = [what, set](T& t, const std::string& text) { set(t, parse_positive_number(trim(text), what)); };
  o.get = [get](const T& t) -> std::optional<std::string> {
    const auto v = get(t);
    if (!v) return std::nullopt;
    return num_text(*v);
  };
  return o;
}

// One of `choices`, case-insensitive; the setter receives the lower-case choice.
template <class T>
Option<T> choice(std::string key, std::string flag, std::string help, std::vector<std::string> choices,
                 std::string def, std::function<void(T&, const std::string&)> set,
                 std::function<std::optional<std::string>(const T&)> get, unsigned use = kUsePredict) {
  Option<T> o;
  o.key = std::move(key), o.flag = std::move(flag), o.kind = OptionKind::Choice, o.help = std::move(help);
  o.choices = std::move(choices), o.default_text = std::move(def), o.use = use, o.get = std::move(get);
  const std::string f = o.flag;
  const std::vector<std::string> valid = o.choices;
  o.set = [f, valid, set](T& t, const std::string& text) {
    const std::string l = to_lower(trim(text));
    std::string list;
    for (const std::string& c : valid) {
      if (l == c) return set(t, l);
      join_to(list, ", ", c);
    }
    throw InputError(f + " '" + text + "' is not valid (choose " + list + ")");
  };
  return o;
}

// A switch: present = on. `get` says whether it is set.
template <class T>
Option<T> flag(std::string key, std::string flag_name, std::string help, std::function<void(T&)> set,
               std::function<bool(const T&)> get, unsigned use = kUsePredict) {
  Option<T> o;
  o.key = std::move(key), o.flag = std::move(flag_name), o.kind = OptionKind::Flag, o.help = std::move(help);
  o.default_text = "off", o.use = use;
  const std::string f = o.flag;
  o.set = [f, set](T& t, const std::string& text) {
    const std::string l = to_lower(trim(text));
    if (l == "true") return set(t);
    if (l == "false") return;
    throw InputError(f + " takes no value (got '" + text + "')");
  };
  o.get = [get](const T& t) -> std::optional<std::string> {
    if (get(t)) return std::string("true");
    return std::nullopt;
  };
  return o;
}

// Free text (names, paths, comma lists parsed by the setter).
template <class T>
Option<T> text(std::string key, std::string flag, std::string help, std::string def,
               std::function<void(T&, const std::string&)> set,
               std::function<std::optional<std::string>(const T&)> get, unsigned use = kUsePredict,
               bool required = false) {
  Option<T> o;
  o.key = std::move(key), o.flag = std::move(flag), o.kind = OptionKind::Text, o.help = std::move(help);
  o.default_text = std::move(def), o.use = use, o.required = required, o.set = std::move(set), o.get = std::move(get);
  return o;
}

// Several values (files); the setter appends one.
template <class T>
Option<T> list(std::string key, std::string flag, std::string help, std::function<void(T&, const std::string&)> add,
               std::function<std::vector<std::string>(const T&)> all, unsigned use = kUsePredict,
               bool required = false) {
  Option<T> o;
  o.key = std::move(key), o.flag = std::move(flag), o.kind = OptionKind::List, o.help = std::move(help);
  o.use = use, o.required = required, o.set = std::move(add);
  o.get = [all](const T& t) -> std::optional<std::string> {
    const auto v = all(t);
    if (v.empty()) return std::nullopt;
    std::string s;
    for (const auto& x : v) join_to(s, ",", x);
    return s;
  };
  return o;
}

// The rows of `inner` acting on the member `m` of an outer struct (a command's request holds a ScenarioInput).
template <class Outer, class Inner>
OptionTable<Outer> nested(const OptionTable<Inner>& inner, Inner Outer::*m, unsigned use_mask = ~0u) {
  OptionTable<Outer> out;
  for (const Option<Inner>& r : inner) {
    if (!(r.use & use_mask)) continue;
    Option<Outer> o;
    o.key = r.key, o.flag = r.flag, o.kind = r.kind, o.help = r.help, o.unit = r.unit;
    o.default_text = r.default_text, o.choices = r.choices, o.use = r.use, o.required = r.required;
    auto set = r.set;
    auto get = r.get;
    o.set = [set, m](Outer& t, const std::string& text) { set(t.*m, text); };
    o.get = [get, m](const Outer& t) { return get(t.*m); };
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace option

// The help line a front end shows: help, unit and default.
template <class T>
std::string option_help(const Option<T>& o) {
  std::string h = o.help;
  if (o.kind == OptionKind::Choice) {
    std::string c;
    for (const auto& x : o.choices) join_to(c, " | ", x);
    h = c + ": " + h;
  }
  if (!o.unit.empty()) h += ", in " + o.unit;
  if (!o.default_text.empty() && o.kind != OptionKind::Flag) h += " (default " + o.default_text + ")";
  return h;
}

template <class T>
const Option<T>* find_option(const OptionTable<T>& table, const std::string& key) {
  for (const auto& o : table)
    if (o.key == key) return &o;
  return nullptr;
}

template <class T>
std::string option_keys(const OptionTable<T>& table, unsigned exclude = kUseCliOnly) {
  std::string s;
  for (const auto& o : table)
    if (!(o.use & exclude)) join_to(s, ", ", o.key);
  return s;
}

// Applies given values in order; every key must be in the table (an internal error otherwise: front ends check keys
// when they read their input). Pairs that contradict each other are the front end's to reject (conflicting_options).
template <class T>
void apply_options(const OptionTable<T>& table, const std::vector<OptionValue>& values, T& target) {
  for (const OptionValue& v : values) {
    const Option<T>* o = find_option(table, v.key);
    if (!o) throw InputError("unknown option '" + v.key + "' (valid: " + option_keys(table) + ")");
    o->set(target, v.text);
  }
}

// Required options that `values` lacks: the first one's message, or nullopt.
template <class T>
std::optional<std::string> missing_required(const OptionTable<T>& table, const std::vector<OptionValue>& values,
                                            const std::string& hint_for_first = "") {
  for (const auto& o : table) {
    if (!o.required) continue;
    bool given = false;
    for (const auto& v : values) given = given || v.key == o.key;
    if (!given) return (o.flag.empty() ? o.key : o.flag) + " is required" + hint_for_first;
  }
  return std::nullopt;
}

// A JSON object of options → (key, text) pairs. Types by kind: Flag a bool, Int an integer (or its text), Number a
// number (or its text, e.g. "2T" tokens), Choice/Text a string (Text also takes a number or an array, joined by
// commas, for list filters such as "tp": [1, 2, 4]), List an array of strings (or one string). Unknown keys, wrong
// types and null are errors naming `where` and the key.
template <class T>
std::vector<OptionValue> option_values_from_json(const OptionTable<T>& table, const nlohmann::json& j,
                                                 const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected a JSON object of options (keys: " + option_keys(table) + ")");
  std::vector<OptionValue> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const nlohmann::json& v = it.value();
    const Option<T>* o = find_option(table, key);
    if (!o || (o->use & kUseCliOnly))
      throw InputError(where + ": unknown key '" + key + "' (valid keys: " + option_keys(table) + ")");
    const std::string at = where + ": '" + key + "'";
    auto scalar_text = [&](const nlohmann::json& x) -> std::string {
      if (x.is_string()) return x.get<std::string>();
      // Unsigned first: 2^64 − 1 read as int64 would show as −1 (a wrapped number in the message).
      if (x.is_number_unsigned()) return std::to_string(x.get<std::uint64_t>());
      if (x.is_number_integer()) return std::to_string(x.get<std::int64_t>());
      if (x.is_number_float()) return option::num_text(x.get<double>());
      throw InputError(at + " must be a string or a number, got " + std::string(x.type_name()));
    };
    switch (o->kind) {
      case OptionKind::Flag:
        if (!v.is_boolean()) throw InputError(at + " must be true or false, got " + std::string(v.type_name()));
        if (v.get<bool>()) out.push_back({key, "true"});
        break;
      case OptionKind::Int:
        if (v.is_number_float() && std::floor(v.get<double>()) != v.get<double>())
          throw InputError(at + " must be a positive integer, got " + v.dump());
        out.push_back({key, scalar_text(v)});
        break;
      case OptionKind::Number: out.push_back({key, scalar_text(v)}); break;
      case OptionKind::Choice:
        if (!v.is_string()) throw InputError(at + " must be a string, got " + std::string(v.type_name()));
        out.push_back({key, v.get<std::string>()});
        break;
      case OptionKind::Text:
        if (v.is_array()) {
          std::string s;
          for (const auto& x : v) join_to(s, ",", scalar_text(x));
          out.push_back({key, s});
        } else {
          out.push_back({key, scalar_text(v)});
        }
        break;
      case OptionKind::List:
        if (v.is_array()) {
          for (const auto& x : v) {
            if (!x.is_string()) throw InputError(at + " must be an array of strings");
            out.push_back({key, x.get<std::string>()});
          }
        } else if (v.is_string()) {
          out.push_back({key, v.get<std::string>()});
        } else {
          throw InputError(at + " must be an array of strings, got " + std::string(v.type_name()));
        }
        break;
    }
  }
  return out;
}

// A flag string as a shell would split it on whitespace (`--plan tp8 --sp --seq=4096`) → (key, text) pairs. Value
// options take the next token or `=value`; switches take none. Unknown or repeated flags, a value without a flag, a
// missing value: InputError naming `where`. Flags in `forbidden` are rejected with `forbidden_why`.
template <class T>
std::vector<OptionValue> option_values_from_tokens(const OptionTable<T>& table, const std::vector<std::string>& tokens,
                                                   const std::string& where, const std::set<std::string>& forbidden = {},
                                                   const std::string& forbidden_why = "") {
  std::vector<OptionValue> out;
  std::set<std::string> seen;
  std::string valid;
  for (const auto& o : table)
    if (!o.flag.empty() && !forbidden.count(o.flag)) join_to(valid, " ", o.flag);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string flag = tokens[i], value;
    bool has_value = false;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    if (forbidden.count(flag)) throw InputError(where + ": " + flag + " is not allowed" + forbidden_why);
    const Option<T>* o = nullptr;
    for (const auto& r : table)
      if (!r.flag.empty() && r.flag == flag) o = &r;
    if (!o) throw InputError(where + ": unknown flag '" + tokens[i] + "' (valid: " + valid + ")");
    if (!seen.insert(flag).second) throw InputError(where + ": flag " + flag + " given twice");
    if (o->kind == OptionKind::Flag) {
      if (has_value) throw InputError(where + ": flag " + flag + " takes no value");
      out.push_back({o->key, "true"});
      continue;
    }
    if (!has_value) {
      if (i + 1 >= tokens.size() || tokens[i + 1].rfind("--", 0) == 0)
        throw InputError(where + ": flag " + flag + " needs a value");
      value = tokens[++i];
    }
    out.push_back({o->key, value});
  }
  return out;
}

// Rejects two given options that contradict each other (e.g. --tp-comm-overlap and --no-tp-comm-overlap).
inline void conflicting_options(const std::vector<OptionValue>& values, const std::string& a, const std::string& b,
                                const std::string& message) {
  bool ha = false, hb = false;
  for (const auto& v : values) ha = ha || (v.key == a && v.text != "false"), hb = hb || (v.key == b && v.text != "false");
  if (ha && hb) throw InputError(message);
}

// The value of every row (that carries a bit of `use_mask`) as JSON, typed by kind; unset values are left out.
template <class T>
nlohmann::ordered_json options_to_json(const OptionTable<T>& table, const T& t, unsigned use_mask = ~0u) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& o : table) {
    if (!(o.use & use_mask) || (o.use & kUseCliOnly)) continue;
    const auto v = o.get(t);
    switch (o.kind) {
      case OptionKind::Flag: j[o.key] = v.has_value(); break;
      case OptionKind::Int:
        if (v) j[o.key] = std::stoll(*v);
        break;
      case OptionKind::Number:
        if (v) j[o.key] = std::stod(*v);
        break;
      case OptionKind::List:
        if (v) j[o.key] = split(*v, ',');
        break;
      default:
        if (v) j[o.key] = *v;
        break;
    }
  }
  return j;
}

// Command-line flags that reproduce `t` for the rows carrying a bit of `use_mask` and none of `exclude_mask`: a row is
// written when it is set and differs from its default (or, with include_defaults or kUseAlways, whenever it is set).
// Table order.
template <class T>
std::vector<std::string> options_to_flags(const OptionTable<T>& table, const T& t, unsigned use_mask,
                                          unsigned exclude_mask = 0, bool include_defaults = false) {
  std::vector<std::string> out;
  for (const auto& o : table) {
    if (!(o.use & use_mask) || (o.use & exclude_mask) || o.flag.empty()) continue;
    const auto v = o.get(t);
    if (!v) continue;
    if (o.kind == OptionKind::Flag) {
      out.push_back(o.flag);
      continue;
    }
    if (!include_defaults && !(o.use & kUseAlways) && !o.required && *v == o.default_text) continue;
    out.push_back(o.flag);
    out.push_back(*v);
  }
  return out;
}

}  // namespace parsim
