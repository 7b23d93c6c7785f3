// ddpctl tune SPEC --space FILE [--metric M --trials N --parallel K
// --storage URL ...]: an Optuna study whose trials are runs of SPEC
// (docs/tune.md). The space (YAML, as the user writes it) is read here, its
// errors with file and line; the study runs in python3 -m ddpctl.tune, the
// package installed beside this binary (share/ddpctl/python), which drives
// this ddpctl through its JSON.
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/paths.hpp"
#include "base/yaml_document.hpp"
#include "cli/app.hpp"
#include "cli/common.hpp"

namespace ddpctl::cli {

namespace {

// A YAML value as JSON: a plain scalar that reads as a number is one.
nlohmann::json json_of(const YamlDocument& doc, const YAML::Node& n, const std::string& path) {
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      o[key] = json_of(doc, kv.second, path.empty() ? key : path + "." + key);
    }
    return o;
  }
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& v : n) a.push_back(json_of(doc, v, path));
    return a;
  }
  if (!n.IsScalar()) throw UserError(doc.locate(path, n), path, "a value, a list or a mapping");
  const std::string s = n.Scalar();
  if (n.Tag() != "!") {  // not quoted
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && *end == '\0' && errno == 0) return i;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return d;
    if (s == "true" || s == "false") return s == "true";
  }
  return s;
}

}  // namespace

void setup_tune(CLI::App& app, Context&) {
  struct Options {
    std::string spec, space;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "An Optuna study whose trials are runs of SPEC: K in flight, pruned by their metrics (docs/tune.md)");
  cmd->add_option("spec", o->spec, "The run spec each trial runs")->required();
  cmd->add_option("--space", o->space, "The search space (YAML): field paths to {log_uniform|uniform|int: [lo, hi]} "
                                       "or {choice: [...]}")
      ->required();
  cmd->allow_extras();
  cmd->footer("The study's options (--metric, --direction, --trials, --parallel, --storage, --study, --pruner, --poll, "
              "--on, --remote-dir, --no-preflight) go to python3 -m ddpctl.tune; docs/tune.md.");
  cmd->callback([o, cmd] {
    const YamlDocument doc = load_yaml_file(o->space, "search space");
    const std::string space = json_of(doc, doc.root, "").dump();
    // Debian's python3, whose python3-optuna the study needs ($DDPCTL_PYTHON: another).
    std::string python = "python3";
    if (const char* p = std::getenv("DDPCTL_PYTHON"); p && *p) python = p;
    else if (::access("/usr/bin/python3", X_OK) == 0) python = "/usr/bin/python3";
    std::vector<std::string> words = {python, "-m", "ddpctl.tune", o->spec, "--space", space};
    for (const auto& w : cmd->remaining()) words.push_back(w);
    const std::string python_dir = data_dir() + "/python";
    const char* old = std::getenv("PYTHONPATH");
    ::setenv("PYTHONPATH", (python_dir + (old && *old ? std::string(":") + old : "")).c_str(), 1);
    ::setenv("DDPCTL", executable_path().c_str(), 1);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    std::cout.flush();
    ::execvp(python.c_str(), argv.data());
    throw UserError(Location{python}, "",
                    fmt::format("cannot be run ({}): ddpctl tune runs its study in python3 with Optuna "
                                "(apt install python3 python3-optuna)",
                                std::strerror(errno)));
  });
}

}  // namespace ddpctl::cli
