// Job arrays as each Slurm prints them, read into one model: real answers of
// 22.05, 24.11 and 26.05 (tests/unit/data/capture-array.sh) for an array
// held pending (one collapsed record), running under its %2 throttle (two
// tasks and the collapsed rest) and finished (one task failed), through
// every reader ddpctl has: squeue --json (each data parser), squeue's format
// string, sacct -P. And what SlurmClient asks for an array: one squeue call.
#include "catch.hpp"

#include <fmt/format.h>
#include <set>
#include <tuple>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "slurm/job_array.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include <nlohmann/json.hpp>

using namespace ddpctl;

namespace {

const char* const kVersions[] = {"22.05", "24.11", "26.05"};

enum class Via { Json, Format, Sacct };
const char* via_name(Via v) { return v == Via::Json ? "squeue --json" : v == Via::Format ? "squeue -o" : "sacct"; }

std::string array_fixture(const std::string& version, const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/" + version + "/" + name);
}

// capture-array.sh writes the format string with '|' where ddpctl asks for
// the unit separator.
std::vector<Job> read_format(std::string text) {
  for (auto& c : text)
    if (c == '|') c = '\x1f';
  return parse_squeue_format(text);
}

std::vector<Job> read(const std::string& version, const std::string& state, Via via) {
  switch (via) {
    case Via::Json: return parse_squeue_json(array_fixture(version, "array-" + state + "-squeue.json"));
    case Via::Format: return read_format(array_fixture(version, "array-" + state + "-format.txt"));
    case Via::Sacct: return parse_sacct(array_fixture(version, "array-" + state + "-sacct.txt"));
  }
  return {};
}

std::vector<int> task_ids(int first, int last) {
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

// What identifies a record, whichever reader read it.
using Identity = std::tuple<std::string, std::string, std::optional<int>, std::string>;
std::set<Identity> identities(const std::vector<Job>& jobs) {
  std::set<Identity> out;
  for (const auto& j : jobs) out.insert({j.id, j.array_job_id, j.array_task_id, j.array_tasks});
  return out;
}

const Job* task(const std::vector<Job>& jobs, int index) {
  for (const auto& j : jobs)
    if (j.array_task_id == index) return &j;
  return nullptr;
}

void check_pending(const std::vector<Job>& jobs, Via via) {
  REQUIRE(jobs.size() == 1);
  const Job& j = jobs[0];
  CHECK(!j.array_job_id.empty());
  CHECK(j.id == j.array_job_id);  // the collapsed record is the array's own
  CHECK(submission_id(j) == j.array_job_id);
  CHECK_FALSE(j.array_task_id);
  CHECK(j.array_tasks == "0-5%2");
  CHECK(j.array_max_tasks == 2);
  CHECK(j.state == JobState::Pending);
  auto tasks = parse_array_tasks(j.array_tasks);
  REQUIRE(tasks);
  CHECK(tasks->indices == task_ids(0, 5));
  CHECK(tasks->max_parallel == 2);
  if (via != Via::Sacct) {  // sacct says neither the hold nor, while it waits, the comment
    CHECK(j.reason == "JobHeldUser");
    CHECK(j.comment == "ddpctl:tokarray");
  }
}

void check_running(const std::vector<Job>& jobs, Via via) {
  REQUIRE(jobs.size() == 3);
  const Job* rest = nullptr;
  for (const auto& j : jobs)
    if (!j.array_tasks.empty()) rest = &j;
  REQUIRE(rest);
  const std::string array = rest->array_job_id;
  CHECK(rest->id == array);
  CHECK(rest->array_tasks == "2-5%2");
  CHECK(rest->array_max_tasks == 2);
  CHECK_FALSE(rest->array_task_id);
  CHECK(rest->state == JobState::Pending);
  if (via != Via::Sacct) CHECK(rest->reason == "JobArrayTaskLimit");
  std::set<std::string> ids = {array};
  for (int index : {0, 1}) {
    INFO("task " << index);
    const Job* t = task(jobs, index);
    REQUIRE(t);
    CHECK(t->state == JobState::Running);
    CHECK(t->array_job_id == array);
    CHECK(submission_id(*t) == array);
    CHECK(t->array_tasks.empty());
    CHECK(!t->nodes.empty());
    CHECK(ids.insert(t->id).second);  // a task's own id: neither the array's nor the other task's
    // --json says the throttle on every record; the others only in a list.
    if (via == Via::Json) CHECK(t->array_max_tasks == 2);
    else CHECK_FALSE(t->array_max_tasks);
  }
}

void check_finished(const std::vector<Job>& jobs, Via via) {
  REQUIRE(jobs.size() == 4);
  const std::string array = jobs[0].array_job_id;
  REQUIRE(!array.empty());
  std::set<std::string> ids;
  int own = 0;
  for (int index = 0; index <= 3; ++index) {
    INFO("task " << index);
    const Job* t = task(jobs, index);
    REQUIRE(t);
    CHECK(t->array_job_id == array);
    CHECK(t->array_tasks.empty());
    CHECK(ids.insert(t->id).second);
    if (t->id == array) ++own;
    CHECK(t->state == (index == 1 ? JobState::Failed : JobState::Completed));
    if (via != Via::Format)  // the format string has no exit codes
      CHECK(t->exit == (index == 1 ? ExitStatus{3, std::nullopt} : ExitStatus{0, std::nullopt}));
    CHECK(t->comment == "ddpctl:tokend");
  }
  // The last task to start runs as the array's own record, with its id.
  CHECK(own == 1);
}

}  // namespace

TEST_CASE("golden parse: a pending array is one collapsed record on every version and reader", "[job_array]") {
  for (const char* version : kVersions)
    for (Via via : {Via::Json, Via::Format, Via::Sacct}) {
      INFO(version << " " << via_name(via));
      check_pending(read(version, "pending", via), via);
    }
}

TEST_CASE("golden parse: a throttled running array: its tasks with their own ids, the rest collapsed",
          "[job_array]") {
  for (const char* version : kVersions) {
    for (Via via : {Via::Json, Via::Format, Via::Sacct}) {
      INFO(version << " " << via_name(via));
      check_running(read(version, "running", via), via);
    }
    // Every reader names the same records the same way.
    INFO(version);
    CHECK(identities(read(version, "running", Via::Format)) == identities(read(version, "running", Via::Json)));
    CHECK(identities(read(version, "running", Via::Sacct)) == identities(read(version, "running", Via::Json)));
  }
  for (const char* file : {"24.11/array-running-squeue-v0.0.40.json", "24.11/array-running-squeue-v0.0.41.json",
                           "24.11/array-running-squeue-v0.0.42.json", "26.05/array-running-squeue-v0.0.42.json",
                           "26.05/array-running-squeue-v0.0.43.json", "26.05/array-running-squeue-v0.0.44.json",
                           "26.05/array-running-squeue-v0.0.45.json"}) {
    INFO(file);
    check_running(parse_squeue_json(read_file(test::source_dir() + "/tests/unit/data/" + file)), Via::Json);
  }
}

TEST_CASE("golden parse: a finished array, one task failed, on every version and reader", "[job_array]") {
  for (const char* version : kVersions) {
    for (Via via : {Via::Json, Via::Format, Via::Sacct}) {
      INFO(version << " " << via_name(via));
      check_finished(read(version, "finished", via), via);
    }
    INFO(version);
    CHECK(identities(read(version, "finished", Via::Format)) == identities(read(version, "finished", Via::Json)));
    CHECK(identities(read(version, "finished", Via::Sacct)) == identities(read(version, "finished", Via::Json)));
  }
}

TEST_CASE("golden parse: a long list of pending tasks, whole with SLURM_BITSTR_LEN=0 and cut short without",
          "[job_array]") {
  const std::vector<int> scattered = {1,  3,  4,  7,  9,  12, 15, 16, 20, 23, 27, 30, 31, 35, 38, 41, 44,
                                      46, 50, 53, 57, 61, 64, 68, 70, 73, 77, 80, 84, 88, 91, 95, 99};
  for (const char* version : kVersions)
    for (Via via : {Via::Json, Via::Format, Via::Sacct}) {
      INFO(version << " " << via_name(via));
      auto jobs = read(version, "scattered", via);
      REQUIRE(jobs.size() == 1);
      auto tasks = parse_array_tasks(jobs[0].array_tasks);
      REQUIRE(tasks);
      CHECK(tasks->indices == scattered);
      CHECK(tasks->max_parallel == 3);
      CHECK(jobs[0].array_max_tasks == 3);
      // ddpctl's own --array= for these tasks is no longer than Slurm's list.
      CHECK(format_array(scattered, 3).size() <= jobs[0].array_tasks.size());
    }
  for (const char* version : kVersions) {
    INFO(version);
    for (const auto& jobs : {read_format(array_fixture(version, "array-scattered-format-cut.txt")),
                             parse_sacct(array_fixture(version, "array-scattered-sacct-cut.txt"))}) {
      REQUIRE(jobs.size() == 1);
      CHECK_THAT(jobs[0].array_tasks, Catch::EndsWith("...%3"));
      CHECK_FALSE(parse_array_tasks(jobs[0].array_tasks));  // a cut list is no list
      CHECK(jobs[0].array_max_tasks == 3);
      CHECK(jobs[0].id == jobs[0].array_job_id);
    }
  }
}

namespace {

// 24.11's running array (tasks 0 and 1, the rest collapsed) grown to
// `tasks` running tasks, in --json as that version prints it.
std::string running_array_json(int tasks, const std::string& array = "12") {
  nlohmann::json doc = nlohmann::json::parse(array_fixture("24.11", "array-running-squeue.json"));
  nlohmann::json task_record = doc["jobs"][1], collapsed = doc["jobs"][0];
  REQUIRE(std::to_string(collapsed["array_job_id"]["number"].get<long long>()) == array);
  doc["jobs"] = nlohmann::json::array({collapsed});
  for (int i = 0; i < tasks; ++i) {
    nlohmann::json t = task_record;
    t["job_id"] = 100000 + i;
    t["array_task_id"]["number"] = i;
    doc["jobs"].push_back(t);
  }
  return doc.dump();
}

}  // namespace

TEST_CASE("jobs() of an array's id: every task and the collapsed rest, in one squeue call whatever its size",
          "[job_array]") {
  test::FakeRunner runner;
  runner.on("squeue", {"--json"}, [](const std::vector<std::string>& argv) {
    CHECK(std::find(argv.begin(), argv.end(), "--jobs=12") != argv.end());
    return test::exits(0, running_array_json(1000));
  });
  SlurmClient slurm(runner);
  JobQuery q = slurm.jobs({"12"});
  REQUIRE(q.answered);
  CHECK(runner.count("squeue") == 1);
  // Each list in full: squeue cuts a long one at 64 characters otherwise.
  CHECK(runner.calls.at(0).at(0) == "env");
  CHECK(runner.calls.at(0).at(1) == "SLURM_BITSTR_LEN=0");
  REQUIRE(q.jobs.size() == 1001);
  for (const auto& j : q.jobs) CHECK(j.array_job_id == "12");
  CHECK(q.jobs[0].array_tasks == "2-5%2");
  // A task's own id is not another job: this squeue filters --json.
  CHECK_FALSE(slurm.json_ignores_jobs());
  // Within one refresh the answer serves the array again without a call.
  SlurmClient::Snapshot refresh(slurm);
  CHECK(slurm.jobs({"12"}).jobs.size() == 1001);
  CHECK(slurm.jobs({"12"}).jobs.size() == 1001);
  CHECK(runner.count("squeue") == 2);
}

TEST_CASE("jobs() of an array's id on 22.05, whose --json ignores --jobs: the format string, one call per refresh",
          "[job_array]") {
  test::FakeRunner runner;
  // 22.05 lists every job in --json: the array's records and another job.
  nlohmann::json doc = nlohmann::json::parse(array_fixture("22.05", "array-running-squeue.json"));
  nlohmann::json other = doc["jobs"][0];
  other["job_id"] = 999;
  other["array_job_id"] = 0;
  other["array_task_id"] = nullptr;
  other["array_task_string"] = "";
  doc["jobs"].push_back(other);
  runner.on("squeue", {"--json"}, test::exits(0, doc.dump()));
  std::string format = array_fixture("22.05", "array-running-format.txt");
  for (auto& c : format)
    if (c == '|') c = '\x1f';
  runner.on("squeue", {"-o"}, test::exits(0, format));
  SlurmClient slurm(runner);
  const std::string array = parse_squeue_json(doc.dump())[0].array_job_id;
  JobQuery first = slurm.jobs({array});
  REQUIRE(first.answered);
  CHECK(first.jobs.size() == 3);  // the array's records, not job 999
  CHECK(slurm.json_ignores_jobs());
  JobQuery second = slurm.jobs({array});
  REQUIRE(second.answered);
  CHECK(runner.count("squeue", {"-o"}) == 1);
  CHECK(runner.count("squeue") == 2);
  CHECK(identities(second.jobs) == identities(first.jobs));
}
