#include "explain/run_diff.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/diagnostics.hpp"
#include "explain/failure.hpp"
#include "base/files.hpp"
#include "runs/provenance_record.hpp"
#include "runs/snapshot_record.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

constexpr std::chrono::seconds kDiffTimeout{60};

// Replaces every `from` in `s` with `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// `diff` with its arguments: "" when the same, the differences, or a UserError
// when diff itself failed (status 2, or missing).
std::string run_diff(CommandRunner& runner, std::vector<std::string> argv) {
  argv.insert(argv.begin(), "diff");
  CommandResult r = runner.run(argv, kDiffTimeout);
  if (r.exit_code == 0) return "";
  if (r.exit_code == 1) return r.out;
  throw UserError("ddpctl diff: " + r.describe());
}

nlohmann::json snapshot_of(const Run& run) {
  std::string text = snapshot_record(run.dir);
  auto j = nlohmann::json::parse(text.empty() ? "null" : text, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

std::string section(const std::string& title, const std::string& body) {
  return fmt::format("== {}\n{}{}", title, body, body.empty() || body.back() == '\n' ? "" : "\n");
}

// A section of the diff as printed, and whether it leaves the runs the same.
struct Section {
  std::string text;
  bool same = true;
};

// The specs as submitted, and the --set overrides.
Section spec_section(const Run& a, const Run& b, CommandRunner& runner) {
  std::string spec = run_diff(runner, {"-u", "--label", "A/spec.yaml", "--label", "B/spec.yaml", a.dir + "/spec.yaml",
                                       b.dir + "/spec.yaml"});
  if (a.overrides != b.overrides)
    spec += fmt::format("--set: A {}, B {}\n", a.overrides.empty() ? "none" : join(a.overrides, " "),
                        b.overrides.empty() ? "none" : join(b.overrides, " "));
  return {section("spec", spec.empty() ? "same\n" : spec), spec.empty()};
}

// The code: the snapshots' difference, or why it is not known.
Section code_section(const Run& a, const Run& b, CommandRunner& runner) {
  nlohmann::json sa = snapshot_of(a), sb = snapshot_of(b);
  std::string code;
  bool same = true;
  std::string la = code_label(a.dir), lb = code_label(b.dir);
  auto has_snapshot = [](const nlohmann::json& j) { return j.is_object() && j.contains("dir"); };
  if (has_snapshot(sa) && has_snapshot(sb)) {
    std::string da = sa.value("dir", std::string()), db = sb.value("dir", std::string());
    if (sa.value("id", std::string()) == sb.value("id", std::string())) {
      code = fmt::format("same: snapshot {}{}\n", sa.value("id", std::string()).substr(0, 12),
                         la.rfind("snapshot:", 0) == 0 ? "" : " (commit " + la + ")");
    } else {
      same = false;
      code = fmt::format("A ran {}, B ran {}\n", la, lb);
      code += replace_all(replace_all(run_diff(runner, {"-ruN", da, db}), da, "A"), db, "B");
    }
  } else {
    same = la == lb && la != "in place" && !la.empty();
    code = fmt::format("A {}; B {}: the code of a run without a snapshot is not known\n",
                       has_snapshot(sa) ? "ran " + la : "ran in place", has_snapshot(sb) ? "ran " + lb : "ran in place");
  }
  return {section("code", code), same};
}

// What the jobs ran with, as their first node recorded it (provenance.hpp):
// the newest attempt that recorded it, named as such.
Section provenance_section(const Run& a, const Run& b) {
  auto provenance = [](const Run& run) -> std::optional<Provenance> {
    const Attempt* at = run.latest_job();
    const RunShape* shape = at ? run.shape(at->shape) : nullptr;
    return shape ? read_latest_provenance(log_base(*shape, at->job_id)) : std::nullopt;
  };
  auto which = [](const std::optional<Provenance>& e) {
    return e ? fmt::format("job {} attempt {}", e->job_id, e->attempt + 1) : std::string("-");
  };
  auto ea = provenance(a), eb = provenance(b);
  std::string env;
  bool same = true;
  if (ea && eb) {
    auto diffs = provenance_differences(*ea, *eb);
    same = diffs.empty();
    env = diffs.empty() ? "same: " + provenance_summary(*ea) + "\n" : join(diffs, "\n") + "\n";
    if (diffs.empty() && provenance_summary(*ea).empty()) env = "same\n";
  } else {
    env = fmt::format("A: {}; B: {}\n", ea ? provenance_summary(*ea) : "not recorded (no job started, or it could not run ddpctl's agent)",
                      eb ? provenance_summary(*eb) : "not recorded (no job started, or it could not run ddpctl's agent)");
  }
  return {section("environment (" + which(ea) + " vs " + which(eb) + ")", env), same};
}

// What the jobs' scripts set: the first shape's of each (a race's shapes
// differ by design). Both runs have a shape.
Section script_section(const Run& a, const Run& b, CommandRunner& runner) {
  std::string sa_path = a.dir + "/" + a.shapes.front().script, sb_path = b.dir + "/" + b.shapes.front().script;
  // Each run has folders of its own (its checkpoint folder, a cell's
  // folder: <output_dir>/<run id>/...): compared as "<run>", not news.
  std::string ta = replace_all(read_file(sa_path), a.id, "<run>"), tb = replace_all(read_file(sb_path), b.id, "<run>");
  std::string script;
  if (ta != tb) {
    std::string tmp = (std::filesystem::temp_directory_path() / fmt::format("ddpctl-diff-{}", ::getpid())).string();
    write_file_atomic(tmp + ".A", ta);
    write_file_atomic(tmp + ".B", tb);
    try {
      script = run_diff(runner, {"-u", "--label", "A/" + a.shapes.front().script, "--label",
                                 "B/" + b.shapes.front().script, tmp + ".A", tmp + ".B"});
    } catch (...) {
      std::remove((tmp + ".A").c_str()), std::remove((tmp + ".B").c_str());
      throw;
    }
    std::remove((tmp + ".A").c_str()), std::remove((tmp + ".B").c_str());
    if (script.empty()) script = "they differ (diff found no line that does)\n";
  }
  // The snapshot folders differ whenever the code does: not news.
  return {section("script (modules, environment, NCCL, launch)", script.empty() ? "same\n" : script), script.empty()};
}

}  // namespace

RunDiff diff_runs(const Run& a, const Run& b, CommandRunner& runner) {
  RunDiff d;
  d.text = fmt::format("A: {}\nB: {}\n", a.dir, b.dir);
  std::vector<Section> sections = {spec_section(a, b, runner), code_section(a, b, runner), provenance_section(a, b)};
  if (!a.shapes.empty() && !b.shapes.empty()) sections.push_back(script_section(a, b, runner));
  for (const auto& s : sections) {
    d.text += s.text;
    d.same = d.same && s.same;
  }
  return d;
}

}  // namespace ddpctl
