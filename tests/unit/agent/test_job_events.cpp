// The job's side of the run's events (agent/job_events.hpp): where each
// event happened, the script's own words, what the training files say, and
// the watchdog's stall with its culprit and its requeue.
#include "catch.hpp"

#include <filesystem>
#include <fstream>

#include "agent/job_events.hpp"
#include "agent/job_watch.hpp"
#include "base/files.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "runs/events.hpp"
#include "runs/job_files.hpp"
#include "runs/stall_record.hpp"
#include "watch_fixture.hpp"

using namespace ddpctl;
using test::FakeEnvironment;

namespace {

std::vector<nlohmann::json> events_of(const std::string& dir) { return read_events(dir, 0, 64 << 20).events; }

std::vector<std::string> types_of(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : events_of(dir)) out.push_back(e["type"]);
  return out;
}

FakeEnvironment job_env(const std::string& run_dir) {
  FakeEnvironment env;
  env.vars = {{"DDPCTL_RUN_DIR", run_dir}, {"SLURM_JOB_ID", "812"}, {"SLURM_RESTART_COUNT", "2"}, {"SLURMD_NODENAME", "g3"}};
  return env;
}

}  // namespace

TEST_CASE("a job's event says where it happened: the job (an array task as A_i), its attempt, the node, the cell") {
  test::TempDir tmp;
  FakeEnvironment env = job_env(tmp.path + "/run-1");
  std::filesystem::create_directories(tmp.path + "/run-1");
  JobEventSource s = job_event_source(env);
  CHECK(s.keys == nlohmann::json({{"job", "812"}, {"attempt", 2}, {"node", "g3"}}));
  env.vars["SLURM_ARRAY_JOB_ID"] = "800";
  env.vars["SLURM_ARRAY_TASK_ID"] = "4";
  env.vars["DDPCTL_CELL"] = "lr=0.1";
  s = job_event_source(env);
  CHECK(s.keys["job"] == "800_4");
  CHECK(s.keys["cell"] == "lr=0.1");
  CHECK(job_event(s, EventType::Started, {{"nodes", {"g3"}}}));
  auto e = events_of(s.run_dir);
  REQUIRE(e.size() == 1);
  CHECK(e[0]["job"] == "800_4");
  CHECK(e[0]["run"] == "run-1");
  SECTION("a job ddpctl did not submit writes none") {
    env.vars.erase("DDPCTL_RUN_DIR");
    CHECK_FALSE(job_event(job_event_source(env), EventType::Started, {}));
  }
}

TEST_CASE("`job event TYPE KEY=VALUE...`: the script's words, typed, and a wrong word refused") {
  test::TempDir tmp;
  const std::string dir = tmp.path + "/run-1";
  std::filesystem::create_directories(dir);
  FakeEnvironment env = job_env(dir);
  job_event_from_words(env, "requeued", {"reason=by the node check: g2: no GPU", "nodes=g2,g4 g5", "generation=3"});
  auto e = events_of(dir);
  REQUIRE(e.size() == 1);
  CHECK(e[0]["type"] == "requeued");
  CHECK(e[0]["reason"] == "by the node check: g2: no GPU");
  CHECK(e[0]["nodes"] == nlohmann::json({"g2", "g4", "g5"}));
  CHECK(e[0]["generation"] == 3);
  CHECK(e[0]["job"] == "812");
  job_event_from_words(env, "requeued", {"reason=", "nodes="});
  CHECK(events_of(dir).back()["nodes"] == nlohmann::json::array());
  CHECK_THAT(test::user_error_of([&] { job_event_from_words(env, "exploded", {}); }),
             Catch::Contains("'exploded': no such event type"));
  CHECK_THAT(test::user_error_of([&] { job_event_from_words(env, "race_won", {"seq=4"}); }),
             Catch::Contains("'seq=4': expected KEY=VALUE"));
  CHECK_THAT(test::user_error_of([&] { job_event_from_words(env, "race_won", {"Shape=a"}); }),
             Catch::Contains("expected KEY=VALUE"));
  CHECK_THAT(test::user_error_of([&] { job_event_from_words(env, "race_won", {"generation=two"}); }),
             Catch::Contains("generation: 'two': not a whole number"));
  CHECK(events_of(dir).size() == 2);
  // A preemption, which the script and the sampler may both say: once an attempt.
  job_event_from_words(env, "preempted", {"reason=after preemption"});
  job_event_from_words(env, "preempted", {"reason=after preemption"});
  CHECK(events_of(dir).size() == 3);
  env.vars["SLURM_RESTART_COUNT"] = "3";
  job_event_from_words(env, "preempted", {"reason=after preemption"});
  CHECK(events_of(dir).size() == 4);
}

TEST_CASE("the training's files as events: new metrics lines, progress at most once a minute, the resumed checkpoint") {
  test::TempDir tmp;
  const std::string dir = tmp.path + "/run-1";
  std::filesystem::create_directories(dir);
  FakeEnvironment env = job_env(dir);
  TrainingFiles files{tmp.path + "/p.json", tmp.path + "/m.jsonl", tmp.path + "/step.0.out", "812.2.0"};
  std::ofstream(files.metrics) << R"({"epoch": 0, "val_loss": 2.5})" << "\n";  // an earlier attempt's: said then
  std::ofstream(files.step_log) << "ddp-train: an earlier attempt's words\n";
  TrainingEvents t(job_event_source(env), files, 60);
  t.tick(T0);
  CHECK(types_of(dir).empty());
  std::ofstream(files.step_log, std::ios::app)
      << "ddp-train: resumed from /ck/epoch1.pt at epoch 2, sample 0 of 1600 (written by 2 ranks, now 2); global batch 64\n";
  write_file_atomic(files.progress, R"({"epoch": 2, "epochs": 5, "step": 3, "steps": 25, "loss": 1.5, "phase": "training", "updated": 1})");
  std::ofstream(files.metrics, std::ios::app) << R"({"epoch": 2, "val_loss": 1.25})" << "\n" << R"({"epoch": 3, "val)";
  t.tick(T0 + 1);
  // Resumed first: the trainer says so before it trains.
  CHECK(types_of(dir) == std::vector<std::string>{"metric", "resumed", "progress"});
  auto e = events_of(dir);
  CHECK(e[0]["metrics"]["val_loss"] == 1.25);
  CHECK(e[1]["checkpoint"] == "/ck/epoch1.pt");
  CHECK(e[1]["epoch"] == 2);
  CHECK(e[2]["step"] == 3);
  CHECK(e[2]["epochs"] == 5);
  // The half-written metrics line waits for its end; progress waits a minute.
  write_file_atomic(files.progress, R"({"epoch": 2, "epochs": 5, "step": 9, "steps": 25, "phase": "training", "updated": 2})");
  t.tick(T0 + 30);
  CHECK(events_of(dir).size() == 3);
  std::ofstream(files.metrics, std::ios::app) << R"(_loss": 1.0})" << "\n";
  t.tick(T0 + 61);
  CHECK(types_of(dir) == std::vector<std::string>{"metric", "resumed", "progress", "metric", "progress"});
  CHECK(events_of(dir)[3]["metrics"]["epoch"] == 3);
  t.tick(T0 + 200);  // nothing moved: nothing said
  CHECK(events_of(dir).size() == 5);
}

TEST_CASE("a metric line the program wrote before the sampler started is said, from where the script started the step") {
  // A fast program: its line is in the file before the sampler's first look.
  test::TempDir tmp;
  const std::string dir = tmp.path + "/run-1";
  std::filesystem::create_directories(dir);
  FakeEnvironment env = job_env(dir);
  TrainingFiles files{tmp.path + "/p.json", tmp.path + "/m.jsonl", "", "812.0.0"};
  std::ofstream(files.metrics) << R"({"epoch": 0, "val_loss": 9})" << "\n";  // an earlier attempt's
  files.metrics_from = static_cast<long long>(std::filesystem::file_size(files.metrics));
  std::ofstream(files.metrics, std::ios::app) << R"({"epoch": 0, "val_loss": 0.25})" << "\n";
  TrainingEvents t(job_event_source(env), files, 60);
  t.tick(T0);
  REQUIRE(types_of(dir) == std::vector<std::string>{"metric"});
  CHECK(events_of(dir)[0]["metrics"]["val_loss"] == 0.25);
}

TEST_CASE("a requeued attempt's resumed checkpoint is said though the last attempt's progress already says training") {
  // After a preemption the progress file still holds the stopped attempt's
  // step; the trainer loads its checkpoint and says so only later.
  test::TempDir tmp;
  const std::string dir = tmp.path + "/run-1";
  std::filesystem::create_directories(dir);
  FakeEnvironment env = job_env(dir);
  TrainingFiles files{tmp.path + "/p.json", tmp.path + "/m.jsonl", tmp.path + "/step.1.out", "812.1.0"};
  write_file_atomic(files.progress, R"({"epoch": 1, "epochs": 1, "step": 27, "steps": 200, "phase": "training", "updated": 1})");
  TrainingEvents t(job_event_source(env), files, 60);
  t.tick(T0);
  CHECK(types_of(dir) == std::vector<std::string>{"progress"});
  std::ofstream(files.step_log) << "ddp-train: rendezvous\n";
  t.tick(T0 + 1);
  std::ofstream(files.step_log, std::ios::app)
      << "ddp-train: resumed from /ck/checkpoint.pt at epoch 1, sample 864 of 6400 (written by 2 ranks, now 2); global batch 32 -> 32\n";
  t.tick(T0 + 2);
  CHECK(types_of(dir) == std::vector<std::string>{"progress", "resumed"});
  CHECK(events_of(dir)[1]["checkpoint"] == "/ck/checkpoint.pt");
  std::ofstream(files.step_log, std::ios::app)
      << "ddp-train: resumed from /ck/other.pt at epoch 1, sample 0 of 6400 (written by 2 ranks, now 2); global batch 32\n";
  t.tick(T0 + 3);  // said once an attempt
  CHECK(events_of(dir).size() == 2);
}

TEST_CASE("the watchdog's stall is an event with its culprit, and its requeue another", "[job_agent]") {
  test::WatchFixture f;
  const std::string dir = f.tmp.path + "/run-1";
  std::filesystem::create_directories(dir);
  f.o.events = job_event_source(job_env(dir));
  f.o.action = StallAction::Requeue;
  f.o.max_requeues = 3;
  f.runner.on("scontrol", {"requeue"}, exits(0));
  f.write_log(0, "step\n", T0 - 10);
  f.write_log(1, "step\n", T0);
  auto section = [](int pid, int rank, const std::string& fixture) {
    return fmt::format("\n## pid {} (rank {}), state S: gdb -p {} -batch -nx -ex 'thread apply all bt'\n", pid, rank, pid) +
           read_file(test::source_dir() + "/tests/unit/data/stacks/" + fixture);
  };
  write_file_atomic(stacks_path(f.o.log_base, 0, "g1"), "# stacks of job 42's training processes on g1\n" +
                                                             section(17721, 0, "gloo-gdb-rank0-all_reduce.txt"));
  write_file_atomic(stacks_path(f.o.log_base, 0, "g2"), "# stacks of job 42's training processes on g2\n" +
                                                             section(17723, 1, "gloo-gdb-rank1-sleep.txt"));
  Watcher w(f.o, f.runner, f.clock, T0);
  CHECK_FALSE(w.tick(T0 + 60));
  REQUIRE(types_of(dir) == std::vector<std::string>{"stalled", "requeued"});
  auto e = events_of(dir);
  CHECK(e[0]["rank"] == 1);
  CHECK(e[0]["action"] == "requeue");
  CHECK_THAT(e[0]["culprit"].get<std::string>(), Catch::StartsWith("rank 1 (g2) is not in a collective"));
  CHECK_THAT(e[1]["reason"].get<std::string>(), Catch::StartsWith("by the watchdog: stalled 1m00s: rank 1 (g2)"));
}
