// parsim — entry point. A thin layer over the libraries: parse, dispatch, turn errors into the contract's one line.
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

namespace {

int fail(const std::string& message) {
  std::cerr << "parsim: error: " << message << "\n";
  return 2;
}

// CLI11 messages sometimes span lines; the contract wants one.
std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"parsim — predict the step time, memory and bottlenecks of a parallel LLM training plan", "parsim"};
  app.set_version_flag("--version", std::string("parsim ") + PARSIM_VERSION);
  app.require_subcommand(0, 1);
  app.footer("`parsim --model M --plan P` is `parsim predict --model M --plan P`. See README.md and docs in the repo.");

  parsim::cli::Action action;
  parsim::cli::add_predict(app, action);
  parsim::cli::add_sweep(app, action);
  parsim::cli::add_merge(app, action);
  parsim::cli::add_profile(app, action);
  parsim::cli::add_calibrate(app, action);
  parsim::cli::add_validate(app, action);
  parsim::cli::add_compare(app, action);

  // `predict` is the default subcommand: insert it when the first argument is an option that is not global.
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  static const std::set<std::string> subcommands{"predict", "sweep",    "merge",  "profile",
                                                 "calibrate", "validate", "compare"};
  static const std::set<std::string> global{"--help", "-h", "--version"};
  if (!args.empty() && !subcommands.count(args[0]) && !global.count(args[0])) args.insert(args.begin(), "predict");
  // `predict` with several plans (--plan repeated, or a comma list) is `compare`.
  if (!args.empty() && args[0] == "predict") {
    int plans = 0;
    for (std::size_t i = 1; i < args.size(); ++i) {
      std::string v;
      if (args[i] == "--plan" && i + 1 < args.size()) v = args[i + 1];
      else if (args[i].rfind("--plan=", 0) == 0) v = args[i].substr(7);
      else continue;
      plans += 1 + static_cast<int>(std::count(v.begin(), v.end(), ','));
    }
    if (plans > 1) args[0] = "compare";
  }
  if (args.empty()) {
    std::cout << app.help();
    return 0;
  }

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(one_line(e.what()));
  } catch (const parsim::InputError& e) {
    return fail(one_line(e.what()));
  }
  if (!action) {
    std::cout << app.help();
    return 0;
  }
  try {
    return action();
  } catch (const parsim::InputError& e) {
    return fail(one_line(e.what()));
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {
    std::cerr << "parsim: internal error: " << one_line(e.what()) << "\n";
    return 3;
  }
}
