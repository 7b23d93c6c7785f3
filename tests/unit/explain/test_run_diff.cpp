// `ddpctl diff RUN_A RUN_B` (run_diff.cpp): the specs, the code (the two
// snapshots), the jobs' environment records and the scripts, each "same" or
// its differences; the real diff(1) does the comparing, as in the command.
#include "catch.hpp"

#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/provenance_record.hpp"
#include "runs/ledger.hpp"
#include "explain/run_diff.hpp"
#include "runs/run_store.hpp"
#include "runs/snapshot_record.hpp"
#include "runs/task_logs.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

// Two runs of configs/local-cpu.yaml under one temporary folder, with their
// logs there too.
struct TwoRuns {
  test::TempDir tmp;
  SystemCommandRunner runner;
  std::string logs = tmp.path + "/logs";

  // `script` with <RUN> as the run's id (its own folders: DDPCTL_CHECKPOINT_DIR).
  Run make(const std::string& spec_text, const std::vector<std::string>& sets, const std::string& script) {
    std::vector<std::string> all = {"output_dir=" + logs};
    all.insert(all.end(), sets.begin(), sets.end());
    const std::string file = test::source_dir() + "/configs/local-cpu.yaml";
    std::string id = test::new_id_of(file, all);
    std::string text = script;
    for (size_t at = text.find("<RUN>"); at != std::string::npos; at = text.find("<RUN>")) text.replace(at, 5, id);
    // The run keeps the overrides given (`sets`), resolved with the logs folder too.
    Run run = test::make_run(tmp.path + "/runs", {{file, spec_text, logs}}, sets, "hash", {{"local-cpu.sbatch", text}}, id);
    return run;
  }
  // A snapshot of `files` (name, text) recorded for `run`, its live folder an empty one.
  void snapshot(const Run& run, const std::string& id, const std::vector<std::pair<std::string, std::string>>& files,
                const std::string& commit = "") {
    test::record_git_snapshot(run.dir, id, tmp.path + "/runs/.snapshots", tmp.path + "/live", files, commit);
  }
  // Job `job_id` of the run's shape, with the environment record its agent writes.
  void job(Run& run, const std::string& job_id, const std::string& torch) {
    update_ledger(run, [&](std::vector<Attempt>& attempts) {
      Attempt a;
      a.token = "tok" + job_id;
      a.shape = run.shapes.front().label;
      a.script = run.shapes.front().script;
      a.outcome = Outcome::Submitted;
      a.job_id = job_id;
      attempts.push_back(a);
    });
    Provenance e;
    e.job_id = job_id;
    e.python = "3.11.2";
    e.torch = torch;
    e.program = "ddp-train";
    fs::create_directories(logs);
    write_file_atomic(provenance_path(log_base(run.shapes.front(), job_id), 0), provenance_json(e).dump());
  }
};

}  // namespace

TEST_CASE("diff: two runs of one spec, one snapshot and one environment are the same, section by section") {
  TwoRuns t;
  // Each script names its run's own checkpoint folder: the same script all the same.
  const std::string script = "#!/bin/bash\nexport DDPCTL_CHECKPOINT_DIR=" + t.logs + "/<RUN>/checkpoint\nsrun ddp-train\n";
  Run a = t.make("name: local-cpu\n", {}, script);
  Run b = t.make("name: local-cpu\n", {}, script);
  REQUIRE(a.id != b.id);
  t.snapshot(a, "1a2b3c4d5e6f7a8b", {{"train.py", "v1\n"}}, "89abcdef0123456789");
  t.snapshot(b, "1a2b3c4d5e6f7a8b", {{"train.py", "v1\n"}}, "89abcdef0123456789");
  t.job(a, "41", "2.14.1");
  t.job(b, "42", "2.14.1");
  RunDiff d = diff_runs(a, b, t.runner);
  INFO(d.text);
  CHECK(d.same);
  CHECK(d.text == "A: " + a.dir + "\nB: " + b.dir +
                      "\n== spec\nsame\n== code\nsame: snapshot 1a2b3c4d5e6f (commit 89abcdef0123)\n"
                      "== environment (job 41 attempt 1 vs job 42 attempt 1)\nsame: python 3.11.2, torch 2.14.1\n"
                      "== script (modules, environment, NCCL, launch)\nsame\n");
}

TEST_CASE("diff: what differs is shown as a unified diff with A/ and B/ for the runs' folders") {
  TwoRuns t;
  Run a = t.make("name: local-cpu\nnodes: 2\n", {}, "#!/bin/bash\nexport DDPCTL_CHECKPOINT_DIR=/c/<RUN>\nexport NCCL_DEBUG=WARN\n");
  Run b = t.make("name: local-cpu\nnodes: 4\n", {"trainer.epochs=3"}, "#!/bin/bash\nexport DDPCTL_CHECKPOINT_DIR=/c/<RUN>\nexport NCCL_DEBUG=INFO\n");
  t.snapshot(a, "aaaaaaaaaaaaaaaa", {{"train.py", "lr = 0.1\n"}, {"util.py", "u\n"}}, "1111111111111111");
  t.snapshot(b, "bbbbbbbbbbbbbbbb", {{"train.py", "lr = 0.2\n"}, {"util.py", "u\n"}}, "2222222222222222");
  t.job(a, "41", "1.13.1");
  t.job(b, "42", "2.14.1");
  RunDiff d = diff_runs(a, b, t.runner);
  INFO(d.text);
  CHECK_FALSE(d.same);
  CHECK_THAT(d.text, Catch::Contains("--- A/spec.yaml") && Catch::Contains("+++ B/spec.yaml") &&
                         Catch::Contains("-nodes: 2\n+nodes: 4"));
  CHECK_THAT(d.text, Catch::Contains("--set: A none, B trainer.epochs=3"));
  CHECK_THAT(d.text, Catch::Contains("A ran 111111111111, B ran 222222222222"));
  // The snapshots' folders as A and B; only the file that differs.
  CHECK_THAT(d.text, Catch::Contains("--- A/train.py") && Catch::Contains("+++ B/train.py") &&
                         Catch::Contains("-lr = 0.1\n+lr = 0.2"));
  CHECK_THAT(d.text, !Catch::Contains("util.py") && !Catch::Contains(".snapshots/"));
  CHECK_THAT(d.text, Catch::Contains("== environment (job 41 attempt 1 vs job 42 attempt 1)\ntorch: 1.13.1 -> 2.14.1\n"));
  CHECK_THAT(d.text, Catch::Contains("-export NCCL_DEBUG=WARN\n+export NCCL_DEBUG=INFO"));
  // The runs' own folders are no difference: one context line, as <run>.
  CHECK_THAT(d.text, Catch::Contains("\n export DDPCTL_CHECKPOINT_DIR=/c/<run>\n"));
}

TEST_CASE("diff: runs without snapshots or jobs say what is not known, and are not the same") {
  TwoRuns t;
  Run a = t.make("name: local-cpu\n", {}, "#!/bin/bash\n");
  Run b = t.make("name: local-cpu\n", {}, "#!/bin/bash\n");
  test::record_no_snapshot(a.dir, "--no-snapshot");
  RunDiff d = diff_runs(a, b, t.runner);
  INFO(d.text);
  CHECK_FALSE(d.same);
  CHECK_THAT(d.text, Catch::Contains("== code\nA ran in place; B ran in place: the code of a run without a snapshot is "
                                     "not known\n"));
  CHECK_THAT(d.text, Catch::Contains("== environment (- vs -)\nA: not recorded (no job started"));
}

TEST_CASE("diff: diff itself failing is an error, not a difference") {
  TwoRuns t;
  Run a = t.make("name: local-cpu\n", {}, "#!/bin/bash\n");
  Run b = t.make("name: local-cpu\n", {}, "#!/bin/bash\n");
  test::FakeRunner runner;
  runner.on("diff", {}, test::exits(2, "", "diff: A/spec.yaml: Permission denied"));
  std::string err = test::user_error_of([&] { diff_runs(a, b, runner); });
  CHECK_THAT(err, Catch::Contains("ddpctl diff:") && Catch::Contains("Permission denied"));
  CHECK(runner.count("diff", {"-u"}) == 1);
  runner.on("diff", {}, test::not_found());
  CHECK_THAT(test::user_error_of([&] { diff_runs(a, b, runner); }), Catch::Contains("ddpctl diff:"));
}
