// Which explanation a job's row says (status_words.hpp): the table of
// sources, highest first, and one case per row showing its words and how
// they stand over the words of the rows below it, through the fake Slurm.
#include "runs/fabric_record.hpp"
#include "catch.hpp"
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/in_job_restart.hpp"
#include "agent/straggler.hpp"
#include "agent/watchdog.hpp"
#include "base/files.hpp"
#include "fake_runner.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "runs/job_states.hpp"
#include "runs/task_logs.hpp"
#include "runs/usage.hpp"
#include "runs/run_store.hpp"
#include "status/status.hpp"
#include "status/status_words.hpp"

using namespace ddpctl;

namespace {

struct WordsFixture : test::SubmitFixture {
  using SubmitFixture::SubmitFixture;
  std::string base;  // the job's log base
  long long now = 0;
  WordsFixture() {
    Run run = submit().run;
    base = log_base(run.shapes.at(0), "100");
    std::filesystem::create_directories(std::filesystem::path(base).parent_path());
    now = slurm.clock.now();
  }
  StatusRow row() {
    StatusRequest r;
    r.runs_root = req.runs_root;
    r.json = true;
    StatusReport s = collect_status(r, slurm.slurm, now);
    REQUIRE(s.rows.size() == 1);
    return s.rows[0];
  }
  test::FakeSlurm::FakeJob& job() { return slurm.jobs.at(0); }
  // A running job whose trainer wrote its progress.
  std::string running_with_progress() {
    job().state = "RUNNING";
    job().nodes = "g1";
    write_file_atomic(base + ".progress.json", R"({"epoch": 2, "epochs": 10, "step": 5, "steps": 10, "samples_per_s": 1520, "eta_s": 340})");
    return "epoch 2/10 [#####-----] 5/10 1520 img/s ETA 5m40s";
  }
  // A failed job: srun's line in the batch log, the task's last words.
  std::string failed_with_logs() {
    job().state = "FAILED";
    job().reason = "NonZeroExitCode";
    job().exit = 3;
    job().nodes = "g1";
    write_file_atomic(job_files::batch_err(base), "ddpctl: job 100 (unit) attempt 1 on g1\n"
                                                  "srun: error: g1: task 0: Exited with exit code 3\n");
    write_file_atomic(job_files::step_log(base, 0, 0), "Traceback (most recent call last):\nValueError: boom\n");
    return "rank 0 on g1 exited with exit code 3: ValueError: boom";
  }
  StallRecord stall(WatchdogOutcome taken) const {
    StallRecord r;
    r.stalled = true;
    r.since = static_cast<double>(now) - 30, r.detected_at = static_cast<double>(now) - 9, r.for_s = 21;
    r.stall_after_s = 20;
    r.action = taken == WatchdogOutcome::Cancelled ? "cancel" : "warn", r.taken = taken;
    r.basis = "the progress pattern", r.detail = "no rank stands out";
    r.why = "no progress (the progress pattern) for 21s: no rank stands out";
    return r;
  }
};

std::vector<std::string> names_and_ways() {
  std::vector<std::string> out;
  for (const auto& s : status_explanations()) {
    const char* way = s.combine == Combine::Replaces ? "replaces" : s.combine == Combine::Prefixes ? "prefixes" : "appends";
    out.push_back(std::string(s.name) + " " + way);
  }
  return out;
}

}  // namespace

TEST_CASE("status's words: the table of explanations, highest first, as docs/runs.md lists it") {
  CHECK(names_and_ways() == std::vector<std::string>{
                                "cell metric appends", "grid race prefixes", "race prefixes", "in-job restart prefixes",
                                "requeue prefixes", "failure replaces", "watchdog cancelling replaces", "stall prefixes",
                                "usage account appends", "fabric check appends", "agent errors appends", "not monitored appends", "slow rank appends", "usage appends",
                                "progress replaces", "pending replaces", "Slurm's reason and exit replaces"});
}

TEST_CASE("status's words, Slurm's reason and exit: a job neither pending nor running says how it ended") {
  WordsFixture f;
  f.job().state = "COMPLETING";
  f.job().exit = 3;
  CHECK(f.row().info == "exit code 3");
}

TEST_CASE("status's words, pending: Slurm's reason in words, not an earlier attempt's exit") {
  WordsFixture f;
  f.job().reason = "Resources";
  f.job().exit = 3;
  CHECK(f.row().info == "waiting for free nodes");
}

TEST_CASE("status's words, progress: a running job's progress, not an earlier attempt's exit") {
  WordsFixture f;
  f.job().exit = 3;
  std::string progress = f.running_with_progress();
  CHECK(f.row().info == progress);
}

TEST_CASE("status's words, usage: the nodes' latest samples after the progress") {
  WordsFixture f;
  std::string progress = f.running_with_progress();
  UsageSample s;
  s.node = "g1", s.job_id = "100", s.t = static_cast<double>(f.now) - 5, s.cpus = 4, s.cpu_pct = 390;
  s.rss_bytes = 2LL << 30, s.procs = 5;
  write_file_atomic(usage_path(f.base, "g1"), usage_sample_json(s).dump() + "\n");
  std::string usage = format_usage(*usage_now(read_usage(f.base, 0)));
  StatusRow row = f.row();
  CHECK(row.info == progress + "; " + usage);
  CHECK(row.json.contains("usage"));
}

TEST_CASE("status's words, slow rank: after the usage, the rank the watchdog named slow") {
  WordsFixture f;
  std::string progress = f.running_with_progress();
  SlowRecord r;
  r.basis = "trainer";
  r.slow_after_s = 300;
  r.updated = static_cast<double>(f.now);
  r.speeds = {{{0, 0, "g1"}, 1, 0.2}, {{1, 1, "g1"}, 0.5, 0.4}};
  r.slow = {{{1, 1, "g1"}, 0.5, static_cast<double>(f.now) - 190, std::nullopt}};
  write_file_atomic(job_files::slow(f.base), slow_record_json(r).dump() + "\n");
  std::string slow = describe_slow(*read_slow_record(f.base), static_cast<double>(f.now));
  REQUIRE_FALSE(slow.empty());
  StatusRow row = f.row();
  CHECK(row.info == progress + "; slow: " + slow);
  CHECK(row.json.contains("slow"));
}

TEST_CASE("status's words, not monitored: why the agent watches nothing, after the slow rank") {
  WordsFixture f;
  std::string progress = f.running_with_progress();
  write_file_atomic(job_files::monitor_off(f.base, 0), "no progress source: the spec has no progress: pattern\n");
  CHECK(f.row().info == progress + "; not monitored: no progress source: the spec has no progress: pattern");
}

TEST_CASE("status's words, agent errors: each of the agent's own errors, last") {
  WordsFixture f;
  std::string progress = f.running_with_progress();
  write_file_atomic(job_files::monitor_off(f.base, 0), "no GPUs\n");
  write_file_atomic(job_files::agent_error(f.base, 0), "sample: /proc unreadable\n\nwatch: disk full\n");
  StatusRow row = f.row();
  CHECK(row.info == progress + "; not monitored: no GPUs; agent error: sample: /proc unreadable; agent error: watch: disk full");
  CHECK(row.json["agent_errors"].size() == 2);
}

TEST_CASE("status's words, fabric check: its verdict after the agent's errors, its record in the JSON") {
  WordsFixture f;
  std::string progress = f.running_with_progress();
  write_file_atomic(job_files::agent_error(f.base, 0), "watch: disk full\n");
  FabricRecord r;
  r.nodes = {"g1", "g2", "g3", "g4"};
  r.level = FabricLevel::Fail;
  r.exclude = {"g3"};
  r.text = "4 nodes: 0.005 GB/s bus bandwidth at 1 MiB (10% of the expected 0.05 GB/s), below the failure level "
           "(50%): node g3 is slow with every partner (g4 0.005, g1 0.005 GB/s); excluding g3; 3 round(s) in 4.2 s";
  write_file_atomic(job_files::fabric(f.base, 0), fabric_record_json(r).dump());
  StatusRow row = f.row();
  CHECK(row.info == progress + "; agent error: watch: disk full; fabric: " + r.text);
  CHECK(row.json["fabric"]["exclude"] == nlohmann::json{"g3"});
  // Another attempt's record is not this one's.
  write_file_atomic(job_files::fabric(f.base, 0), "");
  CHECK(f.row().info == progress + "; agent error: watch: disk full");
}

TEST_CASE("status's words, stall: STALLED, and the stall before the progress and the agent's notes") {
  WordsFixture f;
  std::string progress = f.running_with_progress();
  write_file_atomic(job_files::agent_error(f.base, 0), "watch: disk full\n");
  StallRecord r = f.stall(WatchdogOutcome::None);
  write_file_atomic(stall_record_path(f.base), stall_record_json(r).dump());
  StatusRow row = f.row();
  CHECK(row.state == "STALLED");
  CHECK(row.tone == Tone::Bad);
  CHECK(row.info == describe_stall(r, 30) + "; " + progress + "; agent error: watch: disk full");
  CHECK(row.json["state"] == "RUNNING");
  // A stall the watchdog restarted the step for is over: no word of it.
  r.taken = WatchdogOutcome::Restarted;
  write_file_atomic(stall_record_path(f.base), stall_record_json(r).dump());
  CHECK(f.row().info == progress + "; agent error: watch: disk full");
}

TEST_CASE("status's words, watchdog cancelling: a COMPLETING job's stall instead of its exit") {
  WordsFixture f;
  f.job().state = "COMPLETING";
  f.job().exit = 3;
  StallRecord r = f.stall(WatchdogOutcome::Cancelled);
  write_file_atomic(stall_record_path(f.base), stall_record_json(r).dump());
  CHECK(f.row().info == "was cancelled by the watchdog: " + describe_stall(r));
}

TEST_CASE("status's words, failure: which rank failed and its last words, instead of Slurm's reason and exit") {
  WordsFixture f;
  std::string failure = f.failed_with_logs();
  StatusRow row = f.row();
  CHECK(row.info == failure);
  CHECK(row.json["failure"]["line"] == "ValueError: boom");
  CHECK(row.json["reason_text"] != "");  // Slurm's reason, replaced in the words
}

TEST_CASE("status's words, requeue: the attempt and why before the failure") {
  WordsFixture f;
  std::string failure = f.failed_with_logs();
  write_file_atomic(job_files::batch_err(f.base), "ddpctl: job 100 (unit) attempt 1 on g1\n"
                                                  "ddpctl: requeueing job 100 (restart 1 of 3)\n"
                                                  "ddpctl: job 100 (unit) attempt 2 on g1\n"
                                                  "srun: error: g1: task 0: Exited with exit code 3\n");
  write_file_atomic(job_files::step_log(f.base, 1, 0), "ValueError: boom again\n");
  StatusRow row = f.row();
  CHECK(row.info == "attempt 2 (requeued at the time limit); rank 0 on g1 exited with exit code 3: ValueError: boom again");
  CHECK(row.json["attempt"]["number"] == 2);
}

TEST_CASE("status's words, in-job restart: the latest restart in the job before the requeue and the failure") {
  WordsFixture f;
  std::string failure = f.failed_with_logs();
  InJobRecord r;
  r.of = 3;
  InJobRestart x;
  x.number = 1;
  x.kind = StepFailureKind::TaskKilled;
  x.text = "rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken";
  x.decided_at = 10, x.started_at = 12;
  r.restarts.push_back(x);
  write_file_atomic(in_job_record_path(f.base, 0), in_job_record_json(r).dump());
  StatusRow row = f.row();
  CHECK(row.info == describe_in_job(r) + "; " + failure);
  CHECK(row.json["in_job"]["of"] == 3);
  SECTION("requeued too: the in-job restart first, then the attempt") {
    write_file_atomic(job_files::step_log(f.base, 1, 0), "ValueError: boom\n");
    CHECK(f.row().info == describe_in_job(r) + "; attempt 2 (requeued; sacct has no record of the earlier attempt yet); " + failure);
  }
}

TEST_CASE("status's words, race: won or lost before everything else, a loser's cancel no failure") {
  test::SubmitFixture f;
  struct { Run run; } r{test::submit_race_of(test::write_race_spec(f.tmp.path), f.req.runs_root, f.req.templates_dir, f.slurm.ctx)};
  std::filesystem::create_directory(race_dir(r.run) + "/claim");
  write_file_atomic(race_dir(r.run) + "/claim/winner", "101 2x1 " + std::to_string(parse_utc_iso(r.run.created_at) + 7) + "\n");
  write_file_atomic(race_dir(r.run) + "/cancelled.100", "100 " + std::to_string(parse_utc_iso(r.run.created_at) + 7) + "\n");
  f.slurm.job("100")->state = "CANCELLED";
  f.slurm.job("101")->state = "RUNNING";
  const RunShape& winner = *r.run.shape("2x1");
  std::filesystem::create_directories(winner.output_dir);
  write_file_atomic(progress_path(winner.output_dir, winner.job_name, "101"),
                    R"({"epoch": 2, "epochs": 10, "step": 5, "steps": 10, "samples_per_s": 1520, "eta_s": 340})");
  StatusRequest req;
  req.runs_root = f.req.runs_root;
  StatusReport s = collect_status(req, f.slurm.slurm, f.slurm.clock.now());
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[1].info == "lost the race: cancelled by the winner");
  CHECK(s.rows[2].info == "race winner; epoch 2/10 [#####-----] 5/10 1520 img/s ETA 5m40s");
}
