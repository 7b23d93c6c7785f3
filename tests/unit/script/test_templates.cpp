// The job script's template in parts: where each part is read from (the
// user's folder first, then the bundled one), and the errors that keep a
// misspelled or missing part from being silently left out.
#include <filesystem>
#include <map>
#include <sstream>

#include "catch.hpp"

#include "spec/cluster.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "spec/spec.hpp"
#include "script/templates.hpp"

using namespace ddpctl;
using ddpctl::test::TempDir;
using ddpctl::test::user_error_of;
namespace fs = std::filesystem;

namespace {

std::string bundled() { return ddpctl::test::source_dir() + "/templates"; }

// A run that takes every part: a race group, requeue, the job agent, a
// snapshot, a container, env and setup lines.
ResolvedRun every_part_run() {
  std::string text =
      "name: r\ncluster: local\npartition: cpu\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\n"
      "command: [python3, t.py]\n"
      "env: {A: b}\nsetup: ['echo hi']\nrequeue: {signal: USR1, grace: 60, max_restarts: 1}\n"
      "container: {runtime: apptainer, image: /img/t.sif}\nalternatives:\n  - {nodes: 2}\n";
  ResolvedRun run = resolve_run(parse_run_spec("/specs/a.yaml", text),
                                load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/local.yaml"));
  Snapshot snap;
  snap.id = "abc123";
  snap.dir = "/runs/.snapshots/abc123";
  snap.code_dir = "/runs/.snapshots/abc123";
  run.snapshot = snap;
  return run;
}

// Text each part renders for every_part_run(), and nothing else does.
const std::map<std::string, std::string> kProbe{
    {"race.sh", "ddpctl_race="},
    {"environment.sh", "# ---- begin user setup"},
    {"rendezvous.sh", "# Rendezvous:"},
    {"requeue.sh", "ddpctl_stop_asked=0"},
    {"agent.sh", "# While it runs (docs/running.md)"},
    {"snapshot.sh", "export DDPCTL_SNAPSHOT="},
    {"container.sh", "ddpctl_container=("},
    {"launch.sh", "# Launch:"},
};

std::string without_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  std::string out;
  for (std::string l; std::getline(in, l);)
    if (l != line) out += l + "\n";
  return out;
}

// Runs of empty lines squeezed to one, as render does (cat -s).
std::string squeezed(const std::string& text) {
  std::istringstream in(text);
  std::string out, prev = "x";
  for (std::string l; std::getline(in, l); prev = l)
    if (!(l.empty() && prev.empty())) out += l + "\n";
  return out;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("partial tags are found as kainjow reads them") {
  CHECK(partial_tags("a {{> race.sh}} b {{>launch.sh }}\n{{  >  x  }}") ==
        std::vector<std::string>{"race.sh", "launch.sh", "x"});
  // Comments, raw values and other tags are not partials.
  CHECK(partial_tags("{{! {{> no }} {{{> raw}}} {{#s}}{{/s}} {{name}}").empty());
  // After a set-delimiter tag the new delimiters count.
  CHECK(partial_tags("{{=<% %>=}} {{> no}} <%> yes %> <%={{ }}=%> {{> again}}") ==
        std::vector<std::string>{"yes", "again"});
}

TEST_CASE("the bundled template includes every part once, in the documented order") {
  TemplateSet set = load_templates(bundled(), bundled());
  CHECK(partial_tags(set.main.text) == template_part_names());
  REQUIRE(set.parts.size() == template_part_names().size());
  for (const auto& [name, part] : set.parts) {
    CHECK(part.path == bundled() + "/" + name + ".mustache");
    // Each part says what it is in a mustache comment on its first line.
    CHECK(part.text.rfind("{{! " + name + ": ", 0) == 0);
  }
}

TEST_CASE("each file comes from the templates folder when it holds it, else from the bundled one") {
  TempDir dir;
  write_file_atomic(dir.path + "/requeue.sh.mustache", "# mine\n");
  TemplateSet set = load_templates(dir.path, bundled());
  CHECK(set.main.path == bundled() + "/sbatch.sh.mustache");
  CHECK(set.parts.at("requeue.sh").path == dir.path + "/requeue.sh.mustache");
  CHECK(set.parts.at("requeue.sh").text == "# mine\n");
  CHECK(set.parts.at("launch.sh").path == bundled() + "/launch.sh.mustache");
  // A whole template that includes no part needs none.
  write_file_atomic(dir.path + "/sbatch.sh.mustache", "#!/bin/bash\necho {{name}}\n");
  set = load_templates(dir.path, bundled());
  CHECK(set.main.path == dir.path + "/sbatch.sh.mustache");
  CHECK(set.parts.empty());
  // Files that are not templates are left alone.
  write_file_atomic(dir.path + "/README", "notes\n");
  write_file_atomic(dir.path + "/launch.sh.mustache.orig", "old\n");
  CHECK_NOTHROW(load_templates(dir.path, bundled()));
}

TEST_CASE("a missing templates folder, a misspelled part, an unknown include are errors") {
  std::string err = user_error_of([] { load_templates("/nonexistent", bundled()); });
  CHECK(err.find("/nonexistent: templates folder not found") != std::string::npos);

  TempDir dir;
  write_file_atomic(dir.path + "/sbatch.sh.mustache", "#!/bin/bash\n");
  err = user_error_of([&] { load_templates(dir.path + "/sbatch.sh.mustache", bundled()); });
  CHECK(err.find(dir.path + "/sbatch.sh.mustache: not a folder: --templates") != std::string::npos);
  fs::remove(dir.path + "/sbatch.sh.mustache");
  write_file_atomic(dir.path + "/rase.sh.mustache", "# mine\n");
  err = user_error_of([&] { load_templates(dir.path, bundled()); });
  CHECK(err.find(dir.path + "/rase.sh.mustache: not a template of ddpctl (did you mean 'race.sh.mustache'?)") !=
        std::string::npos);
  CHECK(err.find("sbatch.sh.mustache, race.sh.mustache, environment.sh.mustache, rendezvous.sh.mustache, "
                 "requeue.sh.mustache, agent.sh.mustache, snapshot.sh.mustache, container.sh.mustache, "
                 "launch.sh.mustache") != std::string::npos);
  fs::remove(dir.path + "/rase.sh.mustache");

  // In a part the user wrote, and in the main template.
  write_file_atomic(dir.path + "/agent.sh.mustache", "{{#monitor}}\n{{> agnet.sh}}\n{{/monitor}}\n");
  err = user_error_of([&] { load_templates(dir.path, bundled()); });
  CHECK(err.find(dir.path + "/agent.sh.mustache: includes an unknown template part 'agnet.sh' (did you mean "
                 "'agent.sh'?); the parts: race.sh, environment.sh,") != std::string::npos);
  fs::remove(dir.path + "/agent.sh.mustache");
  write_file_atomic(dir.path + "/sbatch.sh.mustache", "#!/bin/bash\n{{> nope}}\n");
  err = user_error_of([&] { load_templates(dir.path, bundled()); });
  CHECK(err.find(dir.path + "/sbatch.sh.mustache: includes an unknown template part 'nope'") != std::string::npos);

  // A part that includes itself, directly or through another.
  write_file_atomic(dir.path + "/sbatch.sh.mustache", "#!/bin/bash\n{{> race.sh}}\n");
  write_file_atomic(dir.path + "/race.sh.mustache", "{{> launch.sh}}\n");
  write_file_atomic(dir.path + "/launch.sh.mustache", "{{> race.sh}}\n");
  err = user_error_of([&] { load_templates(dir.path, bundled()); });
  CHECK(err.find(dir.path + "/launch.sh.mustache: part race.sh includes itself: race.sh > launch.sh > race.sh") !=
        std::string::npos);

  // Not valid mustache: the error names the part's file.
  write_file_atomic(dir.path + "/launch.sh.mustache", "{{#monitor}}\n");
  err = user_error_of([&] { load_templates(dir.path, bundled()); });
  CHECK(err.find(dir.path + "/launch.sh.mustache: invalid template: Unclosed section") != std::string::npos);
}

TEST_CASE("a part missing from the bundled templates is an error naming the file") {
  TempDir broken, user;
  fs::copy(bundled(), broken.path, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  fs::remove(broken.path + "/snapshot.sh.mustache");
  std::string err = user_error_of([&] { load_templates(broken.path, broken.path); });
  CHECK(err.find(broken.path + "/snapshot.sh.mustache: template not found") != std::string::npos);
  err = user_error_of([&] { load_templates(user.path, broken.path); });
  CHECK(err.find(broken.path + "/snapshot.sh.mustache: template not found, and " + user.path + " has none") !=
        std::string::npos);
  // The user's folder fills the gap.
  write_file_atomic(user.path + "/snapshot.sh.mustache", "\n");
  CHECK(load_templates(user.path, broken.path).parts.at("snapshot.sh").path == user.path + "/snapshot.sh.mustache");
}

TEST_CASE("render_scripts: the given folder first, the bundled one after") {
  ResolvedRun run = every_part_run();
  std::string plain = render_scripts(run, bundled(), "/runs/r1/race")[0].text;
  for (const auto& [name, probe] : kProbe) CHECK(count_of(plain, probe) == 1);
  CHECK(count_of(plain, "{{") == 0);

  TempDir dir;
  // Each part alone, with a marker line first: in the script once, where the part was.
  for (const std::string& name : template_part_names()) {
    INFO(name);
    std::string marker = "# override of " + name;
    std::string text = read_file(bundled() + "/" + name + ".mustache");
    write_file_atomic(dir.path + "/" + name + ".mustache", marker + "\n" + text);
    std::string mine = render_scripts(run, dir.path, "/runs/r1/race")[0].text;
    fs::remove(dir.path + "/" + name + ".mustache");
    CHECK(count_of(mine, marker + "\n") == 1);
    size_t at = mine.find(marker), probe = mine.find(kProbe.at(name));
    CHECK((at < probe && probe - at < 1500));
    CHECK(squeezed(without_line(mine, marker)) == squeezed(plain));
  }
}

TEST_CASE("a part renders the same with or without its last newline") {
  ResolvedRun run = every_part_run();
  std::string plain = render_scripts(run, bundled(), "/runs/r1/race")[0].text;
  TempDir dir;
  for (const std::string& name : template_part_names()) {
    std::string text = read_file(bundled() + "/" + name + ".mustache");
    REQUIRE(text.back() == '\n');
    write_file_atomic(dir.path + "/" + name + ".mustache", text.substr(0, text.size() - 1));
  }
  CHECK(render_scripts(run, dir.path, "/runs/r1/race")[0].text == plain);
}

TEST_CASE("a part include that load_templates did not see is an error when rendering, not nothing") {
  TemplateSet set = load_templates(bundled(), bundled());
  set.main.text = "#!/bin/bash\n{{> race.sh}}\n{{> hidden.sh}}\n";
  std::string err = user_error_of([&] { render_scripts(every_part_run(), set, "/runs/r1/race"); });
  CHECK(err.find(bundled() + "/sbatch.sh.mustache: includes an unknown template part 'hidden.sh'") !=
        std::string::npos);
}
