// parsim sim/cli — registers an option table (sim/core/options.hpp) on a CLI11 sub-app and hands back, after parsing,
// the (key, text) pairs that were given, in table order. Every command's options are rows of a table in sim/api or
// plans/ (scenario_options); the command line only spells them.
#pragma once
#include "sim/core/options.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace parsim::cli {

template <class T>
class Registered {
public:
  Registered(CLI::App* app, const OptionTable<T>& table) : table_(table) {
    text_.resize(table.size());
    lists_.resize(table.size());
    opts_.resize(table.size(), nullptr);
    for (std::size_t i = 0; i < table.size(); ++i) {
      const Option<T>& o = table[i];
      const std::string name = o.flag.empty() ? o.key : o.flag;
      const std::string help = option_help(o);
      switch (o.kind) {
        case OptionKind::Flag: opts_[i] = app->add_flag(name, help); break;
        case OptionKind::List: opts_[i] = app->add_option(name, lists_[i], help); break;
        default: opts_[i] = app->add_option(name, text_[i], help); break;
      }
      if (o.kind == OptionKind::Int) opts_[i]->type_name("INT");
      if (o.kind == OptionKind::Number) opts_[i]->type_name("NUM");
      if (o.kind == OptionKind::Choice) opts_[i]->type_name("CHOICE");
    }
  }
  // The given options, in table order.
  std::vector<OptionValue> values() const {
    std::vector<OptionValue> out;
    for (std::size_t i = 0; i < table_.size(); ++i) {
      if (opts_[i]->count() == 0) continue;
      const Option<T>& o = table_[i];
      if (o.kind == OptionKind::Flag) out.push_back({o.key, "true"});
      else if (o.kind == OptionKind::List)
        for (const auto& v : lists_[i]) out.push_back({o.key, v});
      else out.push_back({o.key, text_[i]});
    }
    return out;
  }

private:
  const OptionTable<T>& table_;
  std::vector<std::string> text_;
  std::vector<std::vector<std::string>> lists_;
  std::vector<CLI::Option*> opts_;
};

template <class T>
std::shared_ptr<Registered<T>> register_options(CLI::App* app, const OptionTable<T>& table) {
  return std::make_shared<Registered<T>>(app, table);
}

}  // namespace parsim::cli
