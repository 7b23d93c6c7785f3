#pragma once
// For the unit tests of the workflows: run specs written into a test's
// temporary folder (on the bundled `local` cluster profile, logs inside that
// folder), and a fixture that submits one through the fake Slurm.
#include <filesystem>
#include <string>
#include <vector>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "explain/race.hpp"
#include "race/race_group.hpp"
#include "race/race_submit.hpp"
#include "submit/submit.hpp"

namespace ddpctl::test {

// A one-shape spec (cpu partition, 1 node); `extra` is appended as YAML.
inline std::string write_one_shape_spec(const std::string& dir, const std::string& name = "unit",
                                        const std::string& extra = "") {
  std::string path = dir + "/" + name + ".yaml";
  write_file_atomic(path, "name: " + name + "\ncluster: local\npartition: cpu\nnodes: 1\ngpus_per_node: 0\n"
                          "procs_per_node: 1\ntime: \"00:05:00\"\noutput_dir: " + dir + "/logs\ncommand: \"true\"\n" +
                          extra);
  return path;
}

// A spec whose shapes race: 1x1 on cpu and 2x1 on a100-80gb.
inline std::string write_race_spec(const std::string& dir, const std::string& name = "race") {
  return write_one_shape_spec(dir, name, "alternatives:\n  - {nodes: 2, partition: a100-80gb, label: 2x1}\n");
}

// What a starting job's script does when it wins its race: mkdir the claim,
// write the winner (job id, label, time, attempt).
inline void claim_race(const Run& run, const std::string& job_id, const std::string& label) {
  std::filesystem::create_directory(race_dir(run) + "/claim");
  write_file_atomic(race_dir(run) + "/claim/winner", job_id + " " + label + " 1795300010 0\n");
}

// A temporary folder, a fake Slurm, and a one-shape spec ready to submit.
// A race of the spec `spec` submitted as `ddpctl race` submits it, into
// `runs_root` (for the tests of status and the folders below race/, which
// include none of it); says nothing.
inline Run submit_race_of(const std::string& spec, const std::string& runs_root, const std::string& templates_dir,
                          Context& ctx) {
  RaceRequest race;
  race.specs = {spec};
  race.runs_root = runs_root;
  race.templates_dir = templates_dir;
  struct Quiet : Output {
    void line(const std::string&) override {}
    void state_line(const std::string&, const std::string&, Tone) override {}
    void raw(const std::string&) override {}
    void warning(const std::string&) override {}
    void error(const std::string&) override {}
    void note(const std::string&) override {}
  } quiet;
  return submit_race(load_race_group(race.specs, {}), race, ctx, quiet).run;
}

struct SubmitFixture {
  TempDir tmp;
  FakeSlurm slurm;
  SubmitRequest req;
  RecordingOutput out;
  explicit SubmitFixture(const std::string& slurm_version = "22.05") : slurm(slurm_version) {
    req.spec = write_one_shape_spec(tmp.path);
    req.runs_root = tmp.path + "/runs";
    req.templates_dir = source_dir() + "/templates";
  }
  SubmitResult submit() { return submit_one(load_and_resolve(req.spec, req.sets), req, slurm.ctx, out); }
  std::vector<Run> runs() { return list_runs(req.runs_root); }
};

// A race submitted through the fake queue, for the re-race tests (race/) and
// logs -f of a re-raced race (logs/).
struct RaceAgainFixture {
  test::TempDir tmp;
  FakeSlurm slurm;
  RaceRequest req;
  test::RecordingOutput out;
  RaceAgainFixture() {
    req.specs = {test::write_race_spec(tmp.path)};
    req.runs_root = tmp.path + "/runs";
    req.templates_dir = test::source_dir() + "/templates";
  }
  RaceSubmission submit() { return submit_race(load_race_group(req.specs, req.sets), req, slurm.ctx, out); }
};

// A race whose winner may be re-raced once (requeue.max_restarts 1).
struct RequeueFixture : RaceAgainFixture {
  RequeueFixture() {
    req.specs = {test::write_one_shape_spec(
        tmp.path, "race",
        "requeue: {signal: USR1, grace: 60, max_restarts: 1}\n"
        "alternatives:\n  - {nodes: 2, partition: a100-80gb, label: 2x1}\n")};
  }
};


}  // namespace ddpctl::test
