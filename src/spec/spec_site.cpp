#include "spec/spec_site.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>

#include "slurm/sbatch_options.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

bool all_of_chars(const std::string& s, std::string_view extra) {
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && extra.find(c) == std::string_view::npos) return false;
  return !s.empty();
}

// Node names and host lists: g1,g[2-4],a[1,3].
std::optional<std::string> check_hostlist(const std::string& s) {
  if (all_of_chars(s, "._-,[]") && s[0] != '-') return std::nullopt;
  return "must be a Slurm host list such as g1,g[2-4] (letters, digits, '.', '_', '-', ',' and [ ])";
}

const std::vector<std::string>& dependency_types() {
  static const std::vector<std::string> types = {"after",     "afterany", "afterburstbuffer", "aftercorr",
                                                 "afternotok", "afterok", "singleton"};
  return types;
}

// after:123[+10], afterok:123:124, singleton; joined by ',' (all) or '?' (any).
std::optional<std::string> check_dependency(const std::string& s) {
  if (s.find(',') != std::string::npos && s.find('?') != std::string::npos)
    return "joins conditions with both ',' (all of them) and '?' (any of them); Slurm takes one kind";
  for (const auto& item : split(s, s.find('?') != std::string::npos ? '?' : ',')) {
    auto parts = split(item, ':');
    const std::string& type = parts.front();
    bool known = false;
    for (const auto& t : dependency_types()) known = known || t == type;
    if (!known)
      return fmt::format("'{}' is not a Slurm dependency type{}; types: {}", printable(type),
                         did_you_mean(type, dependency_types()), join(dependency_types(), ", "));
    if (type == "singleton") {
      if (parts.size() > 1) return "singleton takes no job ids";
      continue;
    }
    if (parts.size() < 2) return fmt::format("{} needs job ids: {}:JOBID[:JOBID...]", type, type);
    for (size_t i = 1; i < parts.size(); ++i)
      if (!all_of_chars(parts[i], "_+") || !std::isdigit(static_cast<unsigned char>(parts[i][0])))
        return fmt::format("'{}' is not a job id (digits, with _N for an array task and +MINUTES for after)",
                           printable(parts[i]));
  }
  return std::nullopt;
}

// now+1hour, 16:00, 2026-11-25T10:00:00, midnight, tomorrow ...
std::optional<std::string> check_begin(const std::string& s) {
  if (all_of_chars(s, ":+-/.T") && s.size() <= 40) return std::nullopt;
  return "must be a time sbatch --begin reads, e.g. now+1hour, 16:00, 2026-11-25T10:00:00 or tomorrow";
}

const std::vector<std::string>& mail_types() {
  static const std::vector<std::string> types = {
      "NONE",  "BEGIN",        "END",           "FAIL",          "REQUEUE",       "ALL",        "INVALID_DEPEND",
      "STAGE_OUT", "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"};
  return types;
}

std::optional<std::string> check_mail_type(const std::string& s) {
  for (const auto& t : mail_types())
    if (t == s) return std::nullopt;
  return fmt::format("must be one of {}{}", join(mail_types(), ", "), did_you_mean(s, mail_types()));
}

std::optional<std::string> check_mail_user(const std::string& s) {
  if (all_of_chars(s, "@._-+") && s[0] != '-') return std::nullopt;
  return "must be a mail address or user name (no spaces or quotes)";
}

std::optional<std::string> check_hint(const std::string& s) {
  static const std::vector<std::string> hints = {"compute_bound", "memory_bound", "multithread", "nomultithread"};
  for (const auto& h : hints)
    if (h == s) return std::nullopt;
  return fmt::format("must be one of {}{}", join(hints, ", "), did_you_mean(s, hints));
}

std::optional<std::string> check_comment(const std::string& s) {
  if (s.size() > 200) return "is longer than 200 characters";
  return std::nullopt;  // on sbatch's command line, never in a script; control characters are refused by the reader
}

// What `sbatch:` may not set, and why: options ddpctl computes from the shape
// or records by itself, and options a spec field already says.
const std::map<std::string, std::string>& refused_options() {
  static const std::map<std::string, std::string> refused = [] {
    std::map<std::string, std::string> m;
    auto computed = [&m](std::initializer_list<const char*> names, const std::string& why) {
      for (const char* n : names) m[n] = "ddpctl computes it " + why;
    };
    computed({"nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "cpus-per-gpu", "ntasks-per-gpu",
              "ntasks-per-tres", "tres-per-task"},
             "from the shape (nodes:, gpus_per_node:, procs_per_node:, cpus_per_gpu:, cpus_per_task:)");
    computed({"gres", "gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket"},
             "from gpus_per_node: and gpu_type: in the cluster's GPU dialect");
    computed({"job-name"}, "from name: (and the shape's label in a race or sweep)");
    computed({"output", "error", "open-mode"}, "from output_dir: (status and logs read those files)");
    computed({"signal", "requeue", "no-requeue"}, "from requeue: (the requeue trap depends on it)");
    computed({"chdir"}, "as the folder you submit from (with a code snapshot, the run's view of it: docs/runs.md)");
    computed({"parsable", "test-only", "wrap", "array"}, "or does not support it with a generated script");
    auto field = [&m](const char* option, const char* key) {
      m[option] = fmt::format("the spec has a field for it: {}:", key);
    };
    field("partition", "partition");
    field("account", "account");
    field("qos", "qos");
    field("time", "time");
    field("mem", "mem");
    field("constraint", "constraint");
    field("exclusive", "exclusive");
    field("reservation", "reservation");
    field("exclude", "exclude");
    field("nodelist", "nodelist");
    field("dependency", "dependency");
    field("begin", "begin");
    field("hold", "hold");
    field("mail-type", "mail_type");
    field("mail-user", "mail_user");
    field("hint", "hint");
    field("comment", "comment");
    // The same things under other names, and options that keep sbatch from
    // submitting the job or from returning.
    for (const char* n : {"mem-per-cpu", "mem-per-gpu"})
      m[n] = "it restates the memory under another name: the spec has a field for it: mem: (sbatch takes one of "
             "--mem, --mem-per-cpu and --mem-per-gpu)";
    m["nodefile"] = "it names nodes beside nodelist:, the spec's field for them (a Slurm host list such as g[1-4])";
    for (const char* n : {"help", "usage", "version", "autocomplete"})
      m[n] = "sbatch prints it and exits 0 without submitting a job, and ddpctl would wait for a job that never came";
    m["wait"] = "sbatch would not return until the job ends, long past the time ddpctl waits for its answer (status "
                "--watch follows a job)";
    for (const char* n : {"export", "export-file"})
      m[n] = "it sets the ranks' environment: NONE or a list of names cuts the variables the job script sets "
             "(MASTER_ADDR, WORLD_SIZE, NCCL_*), NAME=value sets what env: refuses; set variables with env: (or "
             "container.env)";
    for (const char* n : {"clusters", "cluster"})
      m[n] = "status, logs and cancel ask this cluster's Slurm about the job, and one sent to another cluster would "
             "never be found; use a cluster profile for that cluster";
    return m;
  }();
  return refused;
}

// An `sbatch:` name as each version's sbatch reads it (getopt_long takes a
// prefix of a long option as the option: `job` is --job-name): the full name
// to write, or why it cannot be used. A name no version knows is left to
// preflight, which asks the cluster's own sbatch (plugins add options).
struct OptionName {
  std::string name, problem;
};
OptionName resolve_option_name(const std::string& name) {
  std::vector<std::string> full;  // what it is to the versions that know it
  std::string ambiguous;          // the first version that finds it ambiguous, in words
  bool exact = false;
  for (const auto& set : sbatch_option_sets()) {
    SbatchName n = resolve_sbatch_name(name, set.names);
    if (n.kind == SbatchNameKind::Exact || n.kind == SbatchNameKind::Prefix) {
      std::string option = sbatch_canonical_option(n.option);
      if (auto why = sbatch_option_refusal(option)) {
        std::string is;
        if (option != name)
          is = n.kind == SbatchNameKind::Prefix
                   ? fmt::format("{} is --{} to sbatch {} (it takes the beginning of an option's name as the "
                                 "option): ", name, option, set.version)
                   : fmt::format("{} is sbatch's other name for --{}: ", name, option);
        return {"", fmt::format("{}--{} cannot be set through sbatch: because {}", is, option, *why)};
      }
      exact = exact || n.kind == SbatchNameKind::Exact;
      if (std::find(full.begin(), full.end(), n.option) == full.end()) full.push_back(n.option);
    } else if (n.kind == SbatchNameKind::Ambiguous && ambiguous.empty()) {
      std::vector<std::string> options;
      for (const auto& c : n.candidates) options.push_back("--" + c);
      ambiguous = fmt::format("sbatch {} reads it as any of {}", set.version, join(options, ", "));
    }
  }
  if (exact) return {name, ""};
  if (!ambiguous.empty())
    return {"", fmt::format("{} is ambiguous: {} and refuses the script; write the option's full name", name,
                            ambiguous)};
  if (full.size() > 1)
    return {"", fmt::format("{} begins {} in different Slurm versions; write the option's full name", name,
                            join(full, " and "))};
  // The full name goes into the script: a prefix that is one option today
  // may be ambiguous to a later sbatch.
  return {full.empty() ? name : full.front(), ""};
}

void read_sbatch_map(MapReader& top, RunSpec& spec) {
  YAML::Node node = top.node("sbatch");
  if (!node.IsMap()) {
    top.error("sbatch", fmt::format("expected a mapping of sbatch options to values (e.g. gpu-bind: closest), got {}",
                                    describe_node(node)));
    return;
  }
  MapReader r(top.document(), node, "sbatch", top.diagnostics());
  std::vector<std::string> names;
  for (const auto& entry : node) names.push_back(entry.first.as<std::string>(""));
  for (const auto& raw : names) {
    std::string name = raw.rfind("--", 0) == 0 ? raw.substr(2) : raw;
    YAML::Node value = r.node(raw);
    if (name.size() < 2 || !all_of_chars(name, "-") || name[0] == '-') {
      r.error(raw, "must be sbatch's long option name, e.g. gpu-bind (single-letter options: use the long name)");
      continue;
    }
    auto option = resolve_option_name(name);
    if (!option.problem.empty()) {
      r.error(raw, option.problem);
      continue;
    }
    name = option.name;
    if (!value.IsScalar()) {
      r.error(raw, fmt::format("expected a value (true for a flag), got {}", describe_node(value)));
      continue;
    }
    auto text = r.string(raw, [](const std::string& v) -> std::optional<std::string> {
      if (v.empty()) return "must not be empty (true for a flag without a value)";
      for (char c : v)
        if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'')
          return "must not contain spaces or quotes (sbatch splits #SBATCH lines at spaces and does not unquote)";
      return std::nullopt;
    });
    if (!text) continue;
    // true: a flag; false: not given. Other words (yes, no, 1) are values:
    // sbatch has options that take them (--kill-on-invalid-dep=yes).
    if (*text == "false") continue;
    spec.site.sbatch.emplace_back(name, *text == "true" ? "" : *text);
    spec.site.where["sbatch." + name] = r.where(raw);
  }
  r.finish();
}

}  // namespace

void read_shape_site_fields(MapReader& r, Shape& s) {
  auto note = [&](const char* key) { s.where[key] = r.where(key); };
  if (auto v = r.string("reservation", slurm_name_problem)) s.reservation = *v, note("reservation");
  if (r.has("exclude") && r.node("exclude").IsSequence() && r.field("exclude") == "exclude")
    // A list of partial cells: a grid's exclude:, which lives under grid: now.
    r.error("exclude", "expected a Slurm host list (the nodes the job must not run on, e.g. exclude: g1,g[2-4]), "
                       "got a list; a grid's cells to drop are `exclude:` under `grid:` now (grid: {exclude: [...]}; "
                       "docs/sweeps.md)");
  else if (auto v = r.string("exclude", check_hostlist))
    s.exclude = *v, note("exclude");
  if (auto v = r.string("nodelist", check_hostlist)) s.nodelist = *v, note("nodelist");
}

const std::vector<const char*>& site_option_keys() {
  static const std::vector<const char*> keys = {"dependency", "begin", "hold",    "mail_type",
                                                "mail_user",  "hint",  "comment", "sbatch"};
  return keys;
}

void read_site_options(MapReader& top, RunSpec& spec) {
  SiteOptions& o = spec.site;
  if (auto v = top.string("dependency", check_dependency)) o.dependency = *v;
  if (auto v = top.string("begin", check_begin)) o.begin = *v;
  if (auto v = top.boolean("hold")) o.hold = *v;
  if (top.has("mail_type")) {
    // One type or a list of them.
    if (top.node("mail_type").IsSequence()) {
      if (auto v = top.string_list("mail_type", check_mail_type)) o.mail_type = *v;
    } else if (auto v = top.string("mail_type", [](const std::string& s) -> std::optional<std::string> {
                 for (const auto& t : split(s, ','))
                   if (auto p = check_mail_type(t)) return p;
                 return std::nullopt;
               })) {
      o.mail_type = split(*v, ',');
    }
  }
  if (auto v = top.string("mail_user", check_mail_user)) o.mail_user = *v;
  if (auto v = top.string("hint", check_hint)) o.hint = *v;
  if (auto v = top.string("comment", check_comment)) o.comment = *v;
  if (top.has("sbatch")) read_sbatch_map(top, spec);
  // A mail_user that was refused has its own error; this one is for one not written.
  if (!o.mail_type.empty() && !top.has("mail_user"))
    top.error("mail_type", "mail_type is set but mail_user is not: Slurm would mail the submitting user's local "
                           "account, which most sites do not forward; set mail_user");
}

std::vector<std::string> site_directives(const SiteOptions& site, const Shape& shape) {
  std::vector<std::string> d;
  if (!shape.reservation.empty()) d.push_back("--reservation=" + shape.reservation);
  if (!shape.exclude.empty()) d.push_back("--exclude=" + shape.exclude);
  if (!shape.nodelist.empty()) d.push_back("--nodelist=" + shape.nodelist);
  if (!site.dependency.empty()) d.push_back("--dependency=" + site.dependency);
  if (!site.begin.empty()) d.push_back("--begin=" + site.begin);
  if (site.hold) d.push_back("--hold");
  if (!site.mail_type.empty()) d.push_back("--mail-type=" + join(site.mail_type, ","));
  if (!site.mail_user.empty()) d.push_back("--mail-user=" + site.mail_user);
  if (!site.hint.empty()) d.push_back("--hint=" + site.hint);
  for (const auto& [name, value] : site.sbatch) d.push_back(value.empty() ? "--" + name : "--" + name + "=" + value);
  return d;
}

std::optional<std::string> sbatch_option_refusal(const std::string& name) {
  auto it = refused_options().find(name);
  if (it == refused_options().end()) return std::nullopt;
  return it->second;
}

}  // namespace ddpctl
