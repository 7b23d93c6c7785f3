#include "agent/provenance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <regex>

#include "agent/job_events.hpp"
#include "runs/job_files.hpp"
#include "base/files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// Printed one "key value" line each; any failure past `python` is a line of its own.
constexpr const char* kPythonProbe =
    "import sys\n"
    "print('python', sys.version.split()[0])\n"
    "try:\n"
    "    import torch\n"
    "    print('torch', torch.__version__)\n"
    "    print('torch_cuda', torch.version.cuda or '')\n"
    "    if torch.version.cuda:\n"
    "        v = torch.cuda.nccl.version()\n"
    "        print('nccl', '.'.join(map(str, v)) if isinstance(v, tuple) else v)\n"
    "except ImportError:\n"
    "    pass\n"
    "except Exception as e:\n"
    "    print('error', 'torch: %s: %s' % (type(e).__name__, str(e).splitlines()[0] if str(e) else ''))\n";

// A file named relative to the working directory (or absolute); "" if there is none.
std::string resolve_file(const std::string& word, const std::string& cwd) {
  fs::path p = fs::path(word).is_absolute() ? fs::path(word) : fs::path(cwd) / word;
  std::error_code ec;
  if (!fs::exists(p, ec)) return "";
  return p.lexically_normal().string();
}

// A program as exec would find it: on PATH when the word has no '/'.
std::string resolve(const std::string& word, const std::string& cwd, const Environment& env) {
  return word.find('/') == std::string::npos ? env.find_program(word) : resolve_file(word, cwd);
}

// The interpreter named by a script's "#!" line, if it is a Python.
std::string python_of_script(const std::string& path, const Environment& env) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  if (!in || !std::getline(in, first) || first.rfind("#!", 0) != 0) return "";
  std::vector<std::string> words = split_ws(first.substr(2));
  if (words.empty()) return "";
  // "#!/usr/bin/env python3" or "#!/usr/bin/env -S python3 -u"
  size_t i = 0;
  if (fs::path(words[0]).filename() == "env") {
    i = 1;
    while (i < words.size() && words[i][0] == '-') i++;
  }
  if (i >= words.size() || fs::path(words[i]).filename().string().rfind("python", 0) != 0) return "";
  return i == 0 ? words[0] : env.find_program(words[i]);
}

bool is_python_name(const std::string& path) {
  static const std::regex re("python[0-9.]*");
  return std::regex_match(fs::path(path).filename().string(), re);
}

// A Python command's script: the first word that is not an option ("-m
// module" for a module), or, for a launcher such as torchrun, the first
// word ending in .py.
std::string script_of(const std::vector<std::string>& argv, bool interpreter, const std::string& cwd) {
  for (size_t i = 1; i < argv.size(); i++) {
    const std::string& w = argv[i];
    if (interpreter) {
      if (w == "-m" || w == "-c") return i + 1 < argv.size() && w == "-m" ? "-m " + argv[i + 1] : w;
      if (w == "-W" || w == "-X") {
        i++;
        continue;
      }
      if (!w.empty() && w[0] == '-') continue;
      std::string r = resolve_file(w, cwd);
      return r.empty() ? w : r;
    }
    if (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0 && w[0] != '-') {
      std::string r = resolve_file(w, cwd);
      return r.empty() ? w : r;
    }
  }
  return "";
}

std::string first_line(const std::string& s) { return trim(s.substr(0, s.find('\n'))); }

void probe_python(const std::vector<std::string>& prefix, const std::string& python, Provenance& e,
                  const ProvenanceOptions& o, CommandRunner& runner) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {python, "-c", kPythonProbe});
  // Through a container the image is started too (a SIF mounted, its Python
  // and torch read from squashfs): on a node busy starting the job's own
  // ranks that took over 30 s; it runs beside the training, so waiting is cheap.
  auto limit = prefix.empty() ? o.python_timeout : 4 * o.python_timeout;
  CommandResult r = runner.run(argv, limit);
  if (!r.ok()) {
    e.notes.push_back(fmt::format("{} could not report its versions: {}", python, r.describe()));
    return;
  }
  for (const auto& line : split(r.out, '\n')) {
    size_t sp = line.find(' ');
    std::string key = line.substr(0, sp), value = sp == std::string::npos ? "" : trim(line.substr(sp + 1));
    if (key == "python") e.python = value;
    else if (key == "torch") e.torch = value;
    else if (key == "torch_cuda") e.torch_cuda = value;
    else if (key == "nccl") e.nccl = value;
    else if (key == "error") e.notes.push_back(value);
  }
}

void probe_gpus(Provenance& e, CommandRunner& runner, const Environment& env) {
  if (env.find_program("nvidia-smi").empty()) return;  // a CPU node: nothing to say
  CommandResult q = runner.run({"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"},
                               std::chrono::seconds(15));
  if (!q.ok()) {
    e.notes.push_back("nvidia-smi could not list the GPUs: " + q.describe());
    return;
  }
  std::string line = first_line(q.out);
  size_t comma = line.rfind(',');
  if (comma != std::string::npos) {
    e.gpu = trim(line.substr(0, comma));
    e.driver = trim(line.substr(comma + 1));
  }
  // The CUDA version the driver supports is only in the plain table's header.
  CommandResult t = runner.run({"nvidia-smi"}, std::chrono::seconds(15));
  static const std::regex cuda("CUDA Version: *([0-9.]+)");
  std::smatch m;
  if (t.ok() && std::regex_search(t.out, m, cuda)) e.cuda_driver = m[1];
}

}  // namespace

Provenance collect_provenance(const ProvenanceOptions& o, CommandRunner& runner, const Environment& env,
                                   Clock& clock) {
  Provenance e;
  auto get = [&](const std::string& name) { return env.get(name); };
  e.job_id = get("SLURM_JOB_ID").value_or("");
  e.attempt = std::max(0, std::atoi(get("SLURM_RESTART_COUNT").value_or("0").c_str()));
  e.t = std::round(clock.wall() * 1000) / 1000;
  e.nodes = o.nodes;
  e.container = o.container;
  e.image = o.image;
  // In a container, the program and its Python are the image's: looked up
  // and asked through the runtime's own words.
  size_t skip = std::min(o.container_words, o.argv.size());
  std::vector<std::string> prefix(o.argv.begin(), o.argv.begin() + static_cast<std::ptrdiff_t>(skip));
  std::vector<std::string> argv(o.argv.begin() + static_cast<std::ptrdiff_t>(skip), o.argv.end());
  if (!o.container.empty() && prefix.empty()) {
    if (!argv.empty()) e.program = argv[0];
    e.notes.push_back(fmt::format("the program runs in a {} container ({}), which this recorder cannot enter: its "
                                  "Python and torch are not recorded",
                                  o.container, o.image));
  } else if (!prefix.empty() && !argv.empty()) {
    bool shell_line = argv.size() == 3 && argv[0] == "bash" && argv[1] == "-c";
    e.program = shell_line ? argv[2] : argv[0];
    if (!shell_line) {
      std::vector<std::string> lookup = prefix;
      lookup.insert(lookup.end(), {"sh", "-c", "command -v \"$1\"", "sh", argv[0]});
      CommandResult r = runner.run(lookup, 4 * o.python_timeout);  // the image starts too (probe_python)
      e.program_path = r.ok() ? first_line(r.out) : "";
      if (e.program_path.empty())
        e.notes.push_back(fmt::format("{} is not found in the {} image {}{}", printable(argv[0]), o.container, o.image,
                                      r.ok() ? "" : ": " + r.describe()));
      std::string python;
      if (is_python_name(argv[0])) {
        python = e.program_path.empty() ? argv[0] : e.program_path;
        e.script = script_of(argv, true, o.cwd);
      } else if (!e.program_path.empty()) {
        // The submit folder is bound at its own path: a script there is read here.
        python = python_of_script(e.program_path, env);
        if (!python.empty()) e.script = script_of(argv, false, o.cwd);
      }
      if (!python.empty() && !e.program_path.empty()) probe_python(prefix, python, e, o, runner);
    }
  } else if (!o.argv.empty()) {
    // `bash -c LINE`: the line is the program; its words are not resolved.
    bool shell_line = o.argv.size() == 3 && o.argv[0] == "bash" && o.argv[1] == "-c";
    e.program = shell_line ? o.argv[2] : o.argv[0];
    if (!shell_line) {
      e.program_path = resolve(o.argv[0], o.cwd, env);
      if (e.program_path.empty()) e.notes.push_back(fmt::format("{} is not found from {}", printable(o.argv[0]), o.cwd));
      std::string python;
      if (is_python_name(o.argv[0])) {
        python = e.program_path;
        e.script = script_of(o.argv, true, o.cwd);
      } else if (!e.program_path.empty()) {
        python = python_of_script(e.program_path, env);
        if (!python.empty()) {
          e.script = script_of(o.argv, false, o.cwd);
          if (e.script.empty()) e.script = e.program_path;
        }
      }
      if (!python.empty()) probe_python({}, python, e, o, runner);
    }
  }
  probe_gpus(e, runner, env);
  if (auto loaded = get("LOADEDMODULES"))
    for (const auto& m : split(*loaded, ':'))
      if (!m.empty()) e.modules.push_back(m);
  for (const auto& name : o.env_names)
    if (auto v = get(name)) e.env.emplace_back(name, *v);
  return e;
}

Provenance record_provenance(const std::string& log_base, const ProvenanceOptions& o, Context& ctx) {
  // The attempt started: its first step (an in-job restart's is `restarted`).
  const JobEventSource events = job_event_source(ctx.env);
  job_event_once(events, fmt::format("started.{}.{}", events.keys.value("job", ""), events.keys.value("attempt", 0)),
                 EventType::Started, {{"nodes", o.nodes}});
  Provenance e = collect_provenance(o, ctx.runner, ctx.env, ctx.clock);
  write_file_atomic(provenance_path(log_base, e.attempt), provenance_json(e).dump(2) + "\n");
  return e;
}

}  // namespace ddpctl
