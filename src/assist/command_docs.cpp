#include "assist/command_docs.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "ddpctl_version.hpp"
#include "explain/experiments.hpp"
#include "base/files.hpp"
#include "base/paths.hpp"
#include "script/resolve.hpp"
#include "runs/run_store.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

const OptionDoc* find_option(const CommandDoc& sub, const std::string& word) {
  for (const OptionDoc& o : sub.options)
    for (const auto& n : o.names)
      if (n == word) return &o;
  return nullptr;
}

std::vector<std::string> with_prefix(const std::vector<std::string>& all, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& s : all)
    if (s.rfind(prefix, 0) == 0) out.push_back(s);
  return out;
}

// The runs folder the words name (--runs DIR), else $DDPCTL_RUNS or ./runs.
std::string runs_folder(const std::vector<std::string>& words) {
  for (size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == "--runs") return words[i + 1];
  return runs_root("");
}

std::vector<std::string> run_names(const std::string& root) {
  std::set<std::string> names;
  for (const Run& r : list_runs(root)) names.insert(r.name), names.insert(r.id);
  for (const Experiment& e : list_experiments(root)) names.insert(e.name);
  return {names.begin(), names.end()};
}

std::vector<std::string> cluster_names() {
  std::set<std::string> names;
  for (const auto& dir : cluster_search_path()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

// The shape labels of the first spec on the line.
std::vector<std::string> shape_labels(const std::vector<std::string>& words) {
  for (const auto& w : words) {
    if (w.size() < 6 || (w.compare(w.size() - 5, 5, ".yaml") != 0 && w.compare(w.size() - 4, 4, ".yml") != 0)) continue;
    try {
      std::vector<std::string> labels;
      for (const auto& s : load_and_resolve(w, {}).shapes) labels.push_back(s.label);
      return labels;
    } catch (const std::exception&) {
      return {};
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> complete(const ProgramDoc& program, std::vector<std::string> words, size_t cword) {
  // Join bash's "=" splits back, remembering the part of the current word
  // bash will replace.
  std::string replaced_prefix;
  {
    std::vector<std::string> joined;
    size_t new_cword = 0;
    for (size_t i = 0; i < words.size(); ++i) {
      bool glue = !joined.empty() && (words[i] == "=" || (i > 0 && words[i - 1] == "="));
      if (glue) {
        if (i == cword) replaced_prefix = joined.back() + (words[i] == "=" ? "=" : "");
        joined.back() += words[i];
      } else {
        joined.push_back(words[i]);
      }
      if (i == cword) new_cword = joined.size() - 1;
    }
    if (cword >= words.size()) new_cword = joined.size();
    words = joined;
    cword = new_cword;
  }
  std::string cur = cword < words.size() ? words[cword] : "";
  if (words[cword < words.size() ? cword : words.size() - 1] == "=" ) cur = replaced_prefix;
  auto strip = [&](std::vector<std::string> v) {  // bash replaces only what follows "="
    if (!replaced_prefix.empty())
      for (auto& s : v) s = s.substr(std::min(s.size(), replaced_prefix.size()));
    return v;
  };
  if (cword <= 1) {
    std::vector<std::string> names;
    for (const CommandDoc& s : program.commands)
      if (!s.hidden) names.push_back(s.name);
    if (cur.rfind("-", 0) == 0) names = {"--help", "--version"};
    return with_prefix(names, cur);
  }
  const CommandDoc* sub = nullptr;
  for (const CommandDoc& s : program.commands)
    if (s.name == words[1]) sub = &s;
  if (!sub) return {};
  const std::string prev = words[cword - 1];
  if (const OptionDoc* o = find_option(*sub, prev); o && o->takes_value) {
    const std::string& name = o->long_name;
    if (name == "shape" || name == "only") return with_prefix(shape_labels(words), cur);
    if (name == "format") return with_prefix({"table", "markdown", "csv", "json"}, cur);
    if (name == "set") {
      if (cur.rfind("cluster=", 0) == 0) {
        std::vector<std::string> values;
        for (const auto& c : cluster_names()) values.push_back("cluster=" + c);
        return strip(with_prefix(values, cur));
      }
      return with_prefix({"cluster=", "nodes=", "gpus_per_node=", "procs_per_node=", "partition=", "gpu_type=",
                          "account=", "time=", "trainer.epochs=", "trainer.batch_size=", "trainer.lr="},
                         cur);
    }
    if (name == "runs" || name == "templates" || name == "output" || name == "plot") return {":files:"};
    if (name == "from") return with_prefix(run_names(runs_folder(words)), cur);
    return {};
  }
  if (cur.rfind("-", 0) == 0) {
    std::vector<std::string> names;
    for (const OptionDoc& o : sub->options)
      if (!o.positional())
        for (const auto& n : o.names)
          if (n.rfind("--", 0) == 0) names.push_back(n);
    return with_prefix(names, cur);
  }
  const std::string& s = sub->name;
  if (s == "gen" || s == "submit" || s == "race" || s == "sweep" || s == "plan" || s == "import") return {":files:yaml"};
  if (s == "status" || s == "cancel" || s == "logs" || s == "report" || s == "diff") return with_prefix(run_names(runs_folder(words)), cur);
  if (s == "completion") return with_prefix({"bash", "zsh"}, cur);
  return {};
}

namespace {

const char* kBash = R"SH(# bash completion for ddpctl, from `ddpctl completion bash`: candidates come
# from ddpctl itself (subcommands, flags, spec files, runs, profiles, shapes).
_ddpctl() {
  local IFS=$'\n' cur=${COMP_WORDS[COMP_CWORD]} first ext
  local -a out
  out=($(ddpctl __complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null))
  first=${out[0]-}
  if [[ $first == :files:* ]]; then
    ext=${first#:files:}
    compopt -o filenames 2>/dev/null
    if [[ -n $ext ]]; then
      COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X "!*.$ext" -- "$cur"))
    else
      COMPREPLY=($(compgen -f -- "$cur"))
    fi
  else
    COMPREPLY=("${out[@]}")
  fi
}
complete -F _ddpctl ddpctl
)SH";

const char* kZsh = R"SH(#compdef ddpctl
# zsh completion for ddpctl, from `ddpctl completion zsh`: candidates come
# from ddpctl itself (subcommands, flags, spec files, runs, profiles, shapes).
_ddpctl() {
  local -a out
  out=(${(f)"$(ddpctl __complete $((CURRENT - 1)) ${words[@]} 2>/dev/null)"})
  if [[ ${out[1]} == :files:* ]]; then
    local ext=${out[1]#:files:}
    if [[ -n $ext ]]; then _files -g "*.$ext"; else _files; fi
  else
    compadd -- $out
  fi
}
compdef _ddpctl ddpctl
)SH";

// Man pages: roff escapes for text.
std::string roff(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string header(const std::string& name, int section, const std::string& title, std::time_t now) {
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return fmt::format(".TH {} {} {} \"ddpctl {}\" \"{}\"\n", name, section, date, DDPCTL_VERSION, title);
}

std::string option_lines(const CommandDoc& sub) {
  std::string out;
  for (const OptionDoc& o : sub.options) {
    if (o.positional()) continue;
    std::string synopsis;
    for (const auto& n : o.names) synopsis += (synopsis.empty() ? "" : ", ") + ("\\fB" + roff(n) + "\\fR");
    if (o.takes_value) synopsis += " \\fI" + roff(o.type_name) + "\\fR";
    out += ".TP\n" + synopsis + "\n" + roff(o.description) + "\n";
  }
  return out;
}

std::string usage(const CommandDoc& sub) {
  std::string positional;
  for (const OptionDoc& o : sub.options)
    if (o.positional())
      positional += " " + std::string(o.required ? "" : "[") + "\\fI" + roff(o.positional_name) + "\\fR" +
                    (o.many ? "..." : "") + (o.required ? "" : "]");
  return fmt::format("\\fBddpctl {}\\fR [\\fIOPTIONS\\fR]{}", roff(sub.name), positional);
}

}  // namespace

void write_man_pages(const ProgramDoc& program, const std::string& dir, Context& ctx) {
  std::time_t now = static_cast<std::time_t>(ctx.clock.now());
  if (auto epoch = ctx.env.get("SOURCE_DATE_EPOCH")) now = std::atoll(epoch->c_str());  // reproducible builds
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string main = header("DDPCTL", 1, "ddpctl manual", now);
  const std::string& d = program.description;
  main += ".SH NAME\nddpctl \\- " + roff(d.substr(std::min(d.size(), d.find(':') + 2))) + "\n";
  main += ".SH SYNOPSIS\n\\fBddpctl\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n.br\n\\fBddpctl --version\\fR\n";
  main += ".SH DESCRIPTION\nddpctl renders correct sbatch scripts for a site from one YAML run spec "
          "(\\fBddpctl-spec\\fR(5)), submits them without ever making a second job for the same run, races "
          "several shapes of one run (the first to start trains), follows jobs and their logs, explains how they "
          "ended, and turns runs into scaling tables. \\fBddp-train\\fR is its LibTorch DDP trainer.\n";
  main += ".SH COMMANDS\n";
  std::vector<std::string> see = {"\\fBddpctl-spec\\fR(5)"};
  for (const CommandDoc& s : program.commands) {
    if (s.hidden) continue;
    main += fmt::format(".TP\n\\fBddpctl-{}\\fR(1)\n{}\n", roff(s.name), roff(s.description));
    see.push_back(fmt::format("\\fBddpctl-{}\\fR(1)", roff(s.name)));
  }
  main += ".SH ENVIRONMENT\n"
          ".TP\n\\fBDDPCTL_RUNS\\fR\nthe folder of run records (default ./runs)\n"
          ".TP\n\\fBDDPCTL_CLUSTERS\\fR, \\fBDDPCTL_SITE_CLUSTERS\\fR\ncolon-separated folders of cluster profiles, "
          "searched before ~/.config/ddpctl/clusters (the first) and after it (the site's)\n"
          ".TP\n\\fBDDPCTL_TRAINER\\fR\nthe trainer a spec that names none runs\n"
          ".TP\n\\fBDDPCTL_TEMPLATES\\fR\na folder of template files (sbatch.sh.mustache or any of its parts), each used instead of the bundled one\n"
          ".TP\n\\fBDDPCTL_POLL_INTERVAL\\fR, \\fBDDPCTL_SLURM_TIMEOUT\\fR, \\fBDDPCTL_SBATCH_TIMEOUT\\fR\n"
          "seconds between polls, and the time limits of Slurm's commands\n"
          ".TP\n\\fBNO_COLOR\\fR\nno colour on a terminal\n";
  main += ".SH FILES\n"
          ".TP\n\\fI~/.config/ddpctl/clusters/\\fR\nthe user's cluster profiles\n"
          ".TP\n\\fI/etc/ddpctl/clusters/\\fR, \\fIPREFIX/etc/ddpctl/clusters/\\fR\nthe site's cluster profiles "
          "(e.g. the output of \\fBddpctl doctor -o\\fR)\n"
          ".TP\n\\fIPREFIX/share/ddpctl/\\fR\nthe bundled templates and profiles\n";
  main += ".SH EXIT STATUS\n0 success; 1 a problem with the input or the environment, printed as "
          "\\fBddpctl: error:\\fR FILE:LINE:COL: FIELD: MESSAGE; 2 a usage error; 3 an internal error.\n";
  main += ".SH SEE ALSO\n" + join(see, ", ") + ", \\fBsbatch\\fR(1), \\fBsqueue\\fR(1)\n";
  write_file_atomic(dir + "/ddpctl.1", main);
  for (const CommandDoc& s : program.commands) {
    if (s.hidden) continue;
    std::string upper = s.name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    std::string page = header("DDPCTL-" + upper, 1, "ddpctl manual", now);
    page += fmt::format(".SH NAME\nddpctl\\-{} \\- {}\n", roff(s.name), roff(s.description));
    page += ".SH SYNOPSIS\n" + usage(s) + "\n";
    page += ".SH OPTIONS\n" + option_lines(s);
    page += ".SH SEE ALSO\n\\fBddpctl\\fR(1), \\fBddpctl-spec\\fR(5)\n";
    write_file_atomic(fmt::format("{}/ddpctl-{}.1", dir, s.name), page);
  }
}

const char* completion_script(const std::string& shell) { return shell == "zsh" ? kZsh : kBash; }

}  // namespace ddpctl
