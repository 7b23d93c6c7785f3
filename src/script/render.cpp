#include "script/render.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <kainjow/mustache.hpp>
#include <map>
#include <memory>
#include <optional>

#include "runs/job_contract.hpp"
#include "runs/race_contract.hpp"
#include "runs/job_files.hpp"
#include "base/files.hpp"
#include "base/paths.hpp"
#include "base/shell.hpp"
#include "script/fabric_plan.hpp"
#include "script/preemption_note.hpp"
#include "script/container_script.hpp"
#include "script/script_env.hpp"
#include "script/templates.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace mstch = kainjow::mustache;

namespace {

mstch::data string_list(const std::vector<std::string>& items) {
  mstch::data list{mstch::data::type::list};
  for (const auto& s : items) list.push_back(mstch::data{s});
  return list;
}

mstch::data env_list(const EnvList& env) {
  mstch::data list{mstch::data::type::list};
  for (const auto& [name, value] : env) {
    mstch::data item;
    item.set("name", name);  // validated: [A-Za-z_][A-Za-z0-9_]*
    item.set("value", value);
    item.set("assigned", env_assigned(name, value));
    list.push_back(item);
  }
  return list;
}

mstch::data flag(bool b) { return b ? mstch::data::type::bool_true : mstch::data::type::bool_false; }

// A section that renders once with `value` when it is non-empty, else not at all.
mstch::data optional_string(const std::string& value) {
  if (value.empty()) return mstch::data::type::bool_false;
  return mstch::data{value};
}

// The job's files (job_files.hpp), with the shell words the script knows
// them by, and the agent's exit statuses and the lines the script reads
// (job_contract.hpp).
void set_job_files(mstch::data& d) {
  const std::string base_name = job_files::base_name("${SLURM_JOB_NAME}", "${SLURM_JOB_ID}");
  d.set("job_base_name", base_name);
  d.set("step_log_name", job_files::step_log(base_name, "${ddpctl_attempt}", "%t"));
  d.set("progress_name", job_files::progress(base_name));
  d.set("metrics_name", job_files::metrics(base_name));
  d.set("agent_error_file", job_files::agent_error("$ddpctl_log_base", "$ddpctl_attempt"));
  d.set("monitor_off_file", job_files::monitor_off("$ddpctl_log_base", "$ddpctl_attempt"));
  d.set("agent_stderr_file", job_files::agent_stderr("$ddpctl_log_base"));
  d.set("agent_stderr_env", job_files::agent_stderr("$DDPCTL_LOG_BASE"));
  for (AgentVerdict v : agent_verdicts()) d.set("verdict_" + verdict_name(v), std::to_string(verdict_status(v)));
  for (StepEndedKey k : step_ended_keys()) d.set("step_ended_" + step_ended_key_name(k), step_ended_key_text(k));
  d.set("step_marker", kStepMarker);
  // The race's files (race_contract.hpp): race.sh spells none of them itself.
  for (RaceFile f : race_files_in_table()) d.set("race_" + race_file_var(f), race_file_name(f));
  d.set("trainer_requeue_exit", std::to_string(kRequeueExit));
}

mstch::data container_data(const ResolvedRun& run, const ResolvedShape& shape, const std::vector<std::string>& names) {
  if (!run.container) return mstch::data::type::bool_false;
  const ResolvedContainer& c = *run.container;
  ContainerScript cs = container_script(c, run.spec, shape.gpus_per_node, run.snapshot ? run.snapshot->dir : "", names,
                                        run.snapshot ? run.snapshot->live_dir : "");
  mstch::data k;
  k.set("runtime", std::string(runtime_name(c.runtime)));
  k.set("image", c.image);
  k.set("words", cs.words);
  k.set("mkdirs", optional_string(cs.mkdirs));
  k.set("task_lines", cs.task_lines);
  k.set("batch_lines", cs.batch_lines);
  k.set("step_env", cs.step_env.empty() ? "" : cs.step_env + " ");
  k.set("wraps", flag(cs.wraps));
  k.set("pyxis", flag(!cs.wraps));
  return k;
}

mstch::data snapshot_data(const ResolvedRun& run) {
  if (!run.snapshot) return mstch::data::type::bool_false;
  mstch::data snap;
  snap.set("dir", run.snapshot->dir);
  snap.set("code_dir", run.snapshot->code_dir);
  snap.set("id", run.snapshot->id);
  // The job works in the run's view of the snapshot (make_workdir), whose
  // links lead to live_dir; the submit folder is live_dir/prefix.
  snap.set("live_dir", run.snapshot->live_dir);
  snap.set("prefix", optional_string(run.snapshot->prefix()));
  std::string prefix = run.snapshot->prefix();
  snap.set("submit_dir", prefix.empty() ? run.snapshot->live_dir : run.snapshot->live_dir + "/" + prefix);
  return snap;
}

mstch::data requeue_data(const ResolvedRun& run, const ResolvedShape& shape) {
  const RunSpec& spec = run.spec;
  if (!spec.requeue) return mstch::data::type::bool_false;
  mstch::data q;
  q.set("signal", spec.requeue->signal);
  q.set("grace", std::to_string(spec.requeue->grace_s));
  q.set("max_restarts", std::to_string(spec.requeue->max_requeues));
  q.set("race_again_s", std::to_string(race_again_limit_s(run, shape)));  // preemption_note.hpp
  return q;
}

mstch::data restart_data(const RunSpec& spec, const ResolvedShape& shape) {
  if (!spec.restart) return mstch::data::type::bool_false;
  mstch::data r;
  r.set("in_job", std::to_string(spec.restart->in_job));
  r.set("spares", std::to_string(spec.restart->spares));
  r.set("min_nodes", std::to_string(spec.restart->min_nodes));
  r.set("alloc_nodes", std::to_string(shape.nodes + spec.restart->spares));
  r.set("max_requeues", std::to_string(spec.requeue ? spec.requeue->max_requeues : 0));
  // srun's task number names the rank in its lines.
  r.set("tasks_are_ranks", flag(spec.launch == LaunchMode::PerGpu || shape.ranks_per_node == 1));
  return r;
}

mstch::data watchdog_data(const RunSpec& spec) {
  if (!spec.watchdog.enabled) return mstch::data::type::bool_false;
  mstch::data w;
  w.set("stall_after", std::to_string(spec.watchdog.stall_after_s) + "s");
  w.set("action", spec.watchdog.action);
  // The progress pattern, applied to each task's log (a pattern over the batch log is not per task).
  bool per_task = spec.progress && spec.progress->file == "rank0";
  w.set("pattern", optional_string(per_task ? spec.progress->pattern : ""));
  w.set("epoch_base", std::to_string(spec.progress ? spec.progress->epoch_base : 1));
  // Only what differs from `job watch`'s defaults (straggler.hpp).
  bool default_slow = spec.watchdog.slow_after_s == WatchdogSettings::kSlowAfterDefault;
  w.set("slow_after", optional_string(default_slow ? "" : std::to_string(spec.watchdog.slow_after_s) + "s"));
  w.set("exclude_slow", flag(spec.watchdog.exclude_slow));
  return w;
}

mstch::data monitor_data(const RunSpec& spec, const std::vector<std::string>& names) {
  if (!spec.monitor.enabled) return mstch::data::type::bool_false;
  mstch::data m;
  m.set("agent", agent_program());
  m.set("interval", std::to_string(spec.monitor.interval_s));
  m.set("node_check", flag(spec.monitor.node_check));
  m.set("check_timeout", std::to_string(spec.monitor.check_timeout_s));
  m.set("restarts", std::to_string(spec.requeue ? spec.requeue->max_requeues : 0));  // the templates' name, kept for overrides
  // What the attempt's provenance record keeps (provenance.hpp): every variable this script sets.
  m.set("env_names", join(names, " "));
  m.set("watchdog", watchdog_data(spec));
  return m;
}

// How the script joins its race group, if it is in one (race.hpp).
void set_race(mstch::data& d, const RunSpec& spec, const RaceRole& race) {
  d.set("race_dir", optional_string(race.dir));
  d.set("race_again", !race.dir.empty() && race.reraces);
  d.set("continue_grid", !race.dir.empty() && race.continues_grid);
  if (!race.dir.empty()) {
    // A re-race (and a raced grid's other cells) are submitted from inside
    // the job by this ddpctl (where the compute nodes see its path); re-races
    // are bounded by requeue.max_restarts.
    d.set("run_dir", std::filesystem::path(race.dir).parent_path().string());
    d.set("ddpctl_program", agent_program());
    d.set("race_generations",
          std::to_string(race.reraces ? 1 + (spec.requeue ? spec.requeue->max_requeues : 0) : 1));
  }
  if (!race.dir.empty() && race.across.on()) {
    mstch::data g;
    g.set("gate_s", std::to_string(race.across.gate_s));
    g.set("coordinator", race.across.coordinator);
    d.set("gate", g);
  } else {
    d.set("gate", mstch::data::type::bool_false);
  }
}

mstch::data shape_data(const ResolvedRun& run, const ResolvedShape& shape, const RaceRole& race) {
  const RunSpec& spec = run.spec;
  mstch::data d;
  d.set("name", spec.name);
  d.set("label", shape.label);
  d.set("job_name", shape.job_name);
  set_job_files(d);
  d.set("cluster", run.profile.name);
  d.set("outside_stop_why", outside_stop_why(run, shape));  // preemption_note.hpp
  d.set("preempted_exit_why", preempted_exit_why(run, shape));
  d.set("spec_file", std::filesystem::path(spec.file).filename().string());
  d.set("directives", string_list(shape.directives));
  d.set("nodes", std::to_string(shape.nodes));
  d.set("fabric", fabric_data(run, shape));  // fabric_plan.hpp
  d.set("multi_node", flag(shape.nodes > 1));
  d.set("gpus_per_node", std::to_string(shape.gpus_per_node));
  d.set("ranks_per_node", std::to_string(shape.ranks_per_node));
  d.set("world_size", std::to_string(shape.world_size()));
  d.set("tasks_per_node", std::to_string(shape.tasks_per_node));
  d.set("ntasks", std::to_string(shape.nodes * shape.tasks_per_node));
  d.set("cpus_per_task", shape.cpus_per_task ? mstch::data{std::to_string(*shape.cpus_per_task)}
                                             : mstch::data{mstch::data::type::bool_false});
  d.set("per_gpu", flag(spec.launch == LaunchMode::PerGpu));
  d.set("modules", string_list(run.modules));
  d.set("has_modules", flag(!run.modules.empty()));
  d.set("env", env_list(run.env));
  d.set("has_env", flag(!run.env.empty() && run.env_table.empty()));
  d.set("env_table", optional_string(run.env_table));
  d.set("nccl_env", env_list(run.nccl_env));
  d.set("has_nccl_env", flag(!run.nccl_env.empty()));
  d.set("setup", string_list(spec.setup));
  d.set("has_setup", flag(!spec.setup.empty()));
  d.set("master_interface", optional_string(run.master_interface));
  d.set("port_min", std::to_string(spec.master.port_min));
  d.set("port_span", std::to_string(spec.master.port_max - spec.master.port_min + 1));
  d.set("output_dir", spec.output_dir);
  d.set("launch_command", shell_join(launch_argv(run, shape)));
  std::vector<std::string> names = script_env_names(run);
  d.set("container", container_data(run, shape, names));
  d.set("snapshot", snapshot_data(run));
  d.set("requeue", requeue_data(run, shape));
  d.set("restart", restart_data(spec, shape));
  d.set("monitor", monitor_data(spec, names));
  // The requeue (requeue.sh) leaves the slow ranks' nodes out.
  d.set("exclude_slow", flag(spec.monitor.enabled && spec.watchdog.enabled && spec.watchdog.exclude_slow));
  set_race(d, spec, race);
  return d;
}

// kainjow 4.1 leaves the newline after the closing tag of a skipped section,
// so an unused optional block would leave blank lines behind. Runs of blank
// lines are therefore collapsed to one.
std::string collapse_blank_lines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t newlines = 0;
  for (char c : text) {
    newlines = c == '\n' ? newlines + 1 : 0;
    if (newlines <= 2) out += c;
  }
  return out;
}

// A part as {{> name}} inserts it: without its last newline, so that the line
// of the tag ends the part's last line and a tag on a line of its own stands
// for exactly the part's lines.
std::string part_text(const std::string& text) {
  if (!text.empty() && text.back() == '\n') return text.substr(0, text.size() - 1);
  return text;
}

// kainjow looks partials up in the data, where a missing one renders as
// nothing; ddpctl's parts come from this table instead, and a name that is not
// in it (load_templates checked every tag it could see) is an error.
class PartsContext : public mstch::context<std::string> {
 public:
  PartsContext(const mstch::data* data, const std::map<std::string, mstch::data>& parts, const std::string& path)
      : mstch::context<std::string>(data), parts_(parts), path_(path) {}
  const mstch::data* get_partial(const std::string& name) const override {
    auto it = parts_.find(name);
    if (it != parts_.end()) return &it->second;
    throw UserError(Location{path_}, "", "includes an unknown template part " + printable(name));
  }

 private:
  const std::map<std::string, mstch::data>& parts_;
  const std::string& path_;
};

}  // namespace

std::vector<RenderedScript> select_shape(std::vector<RenderedScript> scripts, const std::string& label) {
  if (label.empty()) return scripts;
  std::vector<std::string> labels;
  std::vector<RenderedScript> chosen;
  for (auto& s : scripts) {
    labels.push_back(s.label);
    if (s.label == label) chosen.push_back(s);
  }
  if (chosen.empty())
    throw UserError(Location{"--shape"}, "", fmt::format("no shape labelled {}{}; shapes: {}", printable(label),
                                                        did_you_mean(label, labels), join(labels, ", ")));
  return chosen;
}

std::vector<std::string> write_scripts(const std::vector<RenderedScript>& scripts, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UserError(Location{dir}, "", "cannot create the output folder: " + ec.message());
  std::vector<std::string> paths;
  for (const auto& s : scripts) {
    std::string path = (std::filesystem::path(dir) / s.file_name).string();
    write_file_atomic(path, s.text, 0755);
    paths.push_back(path);
  }
  return paths;
}

std::vector<RenderedScript> render_scripts(const ResolvedRun& run, const std::string& templates_dir,
                                           const RaceRole& race) {
  return render_scripts(run, load_templates(templates_dir, data_dir() + "/templates"), race);
}

namespace {

std::string trimmed(const std::string& s) {  // as kainjow trims a tag
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// `text` with each {{> part}} replaced by the part's text, the parts' own
// tags by theirs: what kainjow does at every render, parsing each part
// anew, done once. kainjow renders a part into the line buffer of the tag's
// line, so the output is the same. nullopt where it might not be: a
// template that sets other delimiters ({{=...=}}, which a part would not
// see), an unknown part (the render says so), a tag left open.
std::optional<std::string> with_parts_in_place(const std::string& text, const TemplateSet& t, int depth = 0) {
  if (depth > 64) return std::nullopt;
  std::string out;
  for (size_t at = 0;;) {
    size_t open = text.find("{{", at);
    if (open == std::string::npos) return out.append(text, at, std::string::npos);
    bool triple = open + 2 < text.size() && text[open + 2] == '{';
    size_t from = open + (triple ? 3 : 2);
    size_t close = text.find(triple ? "}}}" : "}}", from);
    if (close == std::string::npos) return std::nullopt;
    size_t end = close + (triple ? 3 : 2);
    std::string tag = trimmed(text.substr(from, close - from));
    if (!tag.empty() && tag[0] == '=') return std::nullopt;
    if (triple || tag.empty() || tag[0] != '>') {
      out.append(text, at, end - at);
    } else {
      auto part = t.parts.find(trimmed(tag.substr(1)));
      if (part == t.parts.end()) return std::nullopt;
      auto inner = with_parts_in_place(part_text(part->second.text), t, depth + 1);
      if (!inner) return std::nullopt;
      out.append(text, at, open - at) += *inner;
    }
    at = end;
  }
}

}  // namespace

struct ScriptRenderer::Compiled {
  TemplateSet templates;
  std::map<std::string, mstch::data> parts;
  std::optional<mstch::mustache> whole;  // the main template with its parts in place, parsed once
};

ScriptRenderer::ScriptRenderer(const TemplateSet& templates) : compiled_(std::make_shared<Compiled>()) {
  Compiled& c = *compiled_;
  c.templates = templates;
  if (auto whole = with_parts_in_place(templates.main.text, templates)) {
    c.whole.emplace(*whole);
    if (!c.whole->is_valid()) c.whole.reset();  // the render with its parts says why
    else c.whole->set_custom_escape([](const std::string& s) { return shell_quote(s); });
  }
  for (const auto& [name, part] : templates.parts) c.parts.emplace(name, mstch::data{part_text(part.text)});
}

std::vector<RenderedScript> ScriptRenderer::render(const ResolvedRun& run, const RaceRole& race) const {
  Compiled& c = *compiled_;
  const std::string& path = c.templates.main.path;
  std::optional<mstch::mustache> parted;  // each part parsed where it is included, as kainjow does
  if (!c.whole) {
    parted.emplace(c.templates.main.text);
    if (!parted->is_valid()) throw UserError(Location{path}, "", "invalid template: " + parted->error_message());
    parted->set_custom_escape([](const std::string& s) { return shell_quote(s); });
  }
  mstch::mustache& tmpl = c.whole ? *c.whole : *parted;
  std::vector<RenderedScript> out;
  for (const ResolvedShape& shape : run.shapes) {
    mstch::data data = shape_data(run, shape, race);
    PartsContext ctx(&data, c.parts, path);
    std::string text = tmpl.render(ctx);
    if (!tmpl.is_valid()) throw UserError(Location{path}, "", "template failed to render: " + tmpl.error_message());
    out.push_back({shape.label, shape.script_name, collapse_blank_lines(text)});
  }
  return out;
}

std::vector<RenderedScript> render_scripts(const ResolvedRun& run, const TemplateSet& templates,
                                           const RaceRole& race) {
  return ScriptRenderer(templates).render(run, race);
}

}  // namespace ddpctl
