// What Slurm prints, read back: fixtures are real output of the local
// clusters (tests/unit/data/capture.sh), 22.05 and 24.11 (with each of its
// data parsers v0.0.40 to v0.0.42), read into one model.
#include "catch.hpp"

#include "base/files.hpp"
#include "helpers.hpp"
#include "slurm/slurm_answer.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "slurm/slurm_parse_nodes.hpp"
#include "slurm/slurm_parse_replies.hpp"
#include "slurm/sbatch_options.hpp"
#include <nlohmann/json.hpp>

using namespace ddpctl;

namespace {
std::string data_fixture(const std::string& name) { return read_file(test::source_dir() + "/tests/unit/data/" + name); }

CommandResult sbatch(int code, std::string out, std::string err = "") {
  CommandResult r;
  r.argv = {"sbatch"};
  r.exit_code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}
}  // namespace

TEST_CASE("sbatch --parsable: a job id is a submission") {
  SbatchResult s = parse_sbatch_result(sbatch(0, "1234\n"));
  CHECK(s.kind == SbatchResult::Kind::Submitted);
  CHECK(s.job_id == "1234");
  CHECK(s.cluster.empty());
}

TEST_CASE("sbatch --parsable: a jobid with its cluster names the cluster") {
  SbatchResult s = parse_sbatch_result(sbatch(0, "987;gilbreth\n"));
  CHECK(s.kind == SbatchResult::Kind::Submitted);
  CHECK(s.job_id == "987");
  CHECK(s.cluster == "gilbreth");
}

TEST_CASE("sbatch success is judged by exit code and stdout, not by empty stderr") {
  SbatchResult s = parse_sbatch_result(
      sbatch(0, "55\n", "sbatch: error: Batch job submission failed: Resource temporarily unavailable\nsbatch: retrying\n"));
  CHECK(s.kind == SbatchResult::Kind::Submitted);
  CHECK(s.job_id == "55");
}

TEST_CASE("sbatch exiting 0 with garbage is unconfirmed, not a job") {
  SbatchResult s = parse_sbatch_result(sbatch(0, "<html>proxy error</html>\n"));
  CHECK(s.kind == SbatchResult::Kind::Unconfirmed);
  CHECK_THAT(s.reason, Catch::Contains("no job id"));
  CHECK(parse_sbatch_result(sbatch(0, "")).kind == SbatchResult::Kind::Unconfirmed);
  CHECK(parse_sbatch_result(sbatch(0, "12a\n")).kind == SbatchResult::Kind::Unconfirmed);
}

TEST_CASE("sbatch socket timeouts are unconfirmed: the job may exist") {
  SbatchResult s = parse_sbatch_result(
      sbatch(1, "", "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n"));
  CHECK(s.kind == SbatchResult::Kind::Unconfirmed);
  CHECK_THAT(s.reason, Catch::Contains("Socket timed out"));
}

TEST_CASE("sbatch refusals are rejections with Slurm's reason") {
  SbatchResult s = parse_sbatch_result(sbatch(
      1, "", "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"));
  CHECK(s.kind == SbatchResult::Kind::Rejected);
  CHECK(s.reason == "Invalid account or account/partition combination specified");
}

TEST_CASE("sbatch killed by its time limit is unconfirmed") {
  CommandResult r = sbatch(-1, "");
  r.timed_out = true;
  CHECK(parse_sbatch_result(r).kind == SbatchResult::Kind::Unconfirmed);
}

TEST_CASE("sbatch stopped for printing past what the runner keeps is unconfirmed, not rejected") {
  CommandResult r = sbatch(-1, "");
  r.output_cut = true;
  SbatchResult s = parse_sbatch_result(r);
  CHECK(s.kind == SbatchResult::Kind::Unconfirmed);
  CHECK_THAT(s.reason, Catch::Contains("more than 64 MiB"));
}

TEST_CASE("a missing sbatch is a rejection that says so") {
  CommandResult r = sbatch(-1, "");
  r.not_found = true;
  SbatchResult s = parse_sbatch_result(r);
  CHECK(s.kind == SbatchResult::Kind::Rejected);
  CHECK_THAT(s.reason, Catch::Contains("not found on PATH"));
}

TEST_CASE("squeue --json with the controller down is an error, not an empty queue") {
  CHECK_THROWS_AS(parse_squeue_json(data_fixture("22.05/squeue-controller-down.json")), SlurmAnswerError);
  CHECK_THROWS_WITH(parse_squeue_json(data_fixture("22.05/squeue-controller-down.json")),
                    Catch::Contains("Failed while looking for jobs"));
}

TEST_CASE("squeue format-string output is read field by field") {
  std::string sep = "\x1f";
  std::string line = "42" + sep + "train" + sep + "ddpctl:abc" + sep + "PENDING" + sep + "Resources" + sep +
                     "2026-11-22T08:11:57" + sep + "N/A" + sep + "N/A" + sep + "1:00:00" + sep + "" + sep + "2" +
                     sep + "gres:gpu:a100:4" + sep + "a100-80gb" + sep + "lusu" + sep + "/home/u\n";
  auto jobs = parse_squeue_format(line);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].id == "42");
  CHECK(jobs[0].comment == "ddpctl:abc");
  CHECK(jobs[0].time_limit_s == 3600);
  CHECK(jobs[0].gpus == 8);
  CHECK_FALSE(jobs[0].start_time.has_value());
  CHECK(jobs[0].submit_time.has_value());
}

TEST_CASE("sacct -P rows are read, and 'CANCELLED by 0' is CANCELLED") {
  auto jobs = parse_sacct(
      "7|hello|ddpctl:t1|CANCELLED by 0|None|cpu|lusu|g[1-2]|2026-11-22T08:11:57|2026-11-22T08:11:58|"
      "2026-11-22T08:12:30|5|2|billing=2,cpu=2,gres/gpu=4,mem=512M,node=2||0:15|/tmp\n");
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].state == JobState::Cancelled);
  CHECK(jobs[0].gpus == 4);
  CHECK(jobs[0].time_limit_s == 300);
  CHECK(*jobs[0].end_time - *jobs[0].start_time == 32);
  CHECK(jobs[0].exit.signal == 15);
  CHECK(jobs[0].source == "sacct");
}

TEST_CASE("GRES strings: typed, untyped, socket annotations, several") {
  CHECK(parse_gres("gpu:a100:4(S:0-1)") == std::map<std::string, int>{{"a100", 4}});
  CHECK(parse_gres("gpu:2") == std::map<std::string, int>{{"", 2}});
  CHECK(parse_gres("gpu:a100:2,gpu:v100:1,shard:8") == std::map<std::string, int>{{"a100", 2}, {"v100", 1}});
  CHECK(parse_gres("(null)").empty());
  CHECK(parse_gres("gres:gpu:h100:8") == std::map<std::string, int>{{"h100", 8}});
}

TEST_CASE("TRES strings give the GPU count") {
  CHECK(gpus_in_tres("cpu=2,mem=512M,node=2,billing=2,gres/gpu=4") == 4);
  CHECK(gpus_in_tres("cpu=2,gres/gpu:a100=4,gres/gpu=4") == 4);
  CHECK(gpus_in_tres("cpu=1") == 0);
}

TEST_CASE("job states read from Slurm's names, and terminal states") {
  CHECK(parse_job_state("CANCELLED by 0") == JobState::Cancelled);
  CHECK(parse_job_state("OUT_OF_MEMORY") == JobState::OutOfMemory);
  CHECK_FALSE(parse_job_state("SOMETHING_NEW").has_value());
  for (JobState s : {JobState::Pending, JobState::NodeFail, JobState::RequeueHold, JobState::Unknown})
    CHECK(parse_job_state(state_name(s)) == s);
  CHECK(is_terminal(JobState::Completed));
  CHECK(is_terminal(JobState::Cancelled));
  CHECK(is_terminal(JobState::OutOfMemory));
  CHECK_FALSE(is_terminal(JobState::Running));
  CHECK_FALSE(is_terminal(JobState::Pending));
  CHECK_FALSE(is_terminal(JobState::Requeued));
  CHECK_FALSE(is_terminal(JobState::Unknown));
}

TEST_CASE("a state ddpctl does not know reads as UNKNOWN with Slurm's word in the reason") {
  auto jobs = parse_sacct("7|x|ddpctl:abc|SOMETHING_NEW|None|cpu|lusu|g1|2026-11-22T08:11:57|Unknown|Unknown|5|1|"
                          "cpu=1|cpu=1|0:0|/tmp\n");
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].state == JobState::Unknown);
  CHECK(jobs[0].reason == "Slurm reports state SOMETHING_NEW");
}


namespace {

const Job& named(const std::vector<Job>& jobs, const std::string& name) {
  for (const auto& j : jobs)
    if (j.name == name) return j;
  FAIL("no job named " << name);
  return jobs.front();
}

// The scenario capture.sh makes, as every version and data parser must read it.
void check_scenario(const std::vector<Job>& jobs) {
  REQUIRE(jobs.size() == 7);
  const Job& run = named(jobs, "cap-run");
  CHECK(run.id == "1");
  CHECK(run.state == JobState::Running);
  CHECK(run.comment == "ddpctl:tokrun");
  CHECK(run.nodes == "g1");
  CHECK(run.node_count == 1);
  CHECK(run.time_limit_s == 300);
  CHECK(run.start_time.has_value());
  CHECK(run.exit == ExitStatus{0, std::nullopt});
  CHECK(run.source == "squeue");

  const Job& held = named(jobs, "cap-held");
  CHECK(held.state == JobState::Pending);
  CHECK(held.reason == "JobHeldUser");
  CHECK(held.gpus == 8);
  CHECK(held.node_count == 2);
  CHECK(held.partition == "a100-80gb");
  CHECK_FALSE(held.start_time.has_value());  // held: no estimate

  const Job& fail = named(jobs, "cap-fail");
  CHECK(fail.state == JobState::Failed);
  CHECK(fail.reason == "NonZeroExitCode");
  CHECK(fail.exit == ExitStatus{3, std::nullopt});
  CHECK(describe_exit(fail.exit) == "exit code 3");

  const Job& sig = named(jobs, "cap-signal");
  CHECK(sig.state == JobState::Failed);
  CHECK(sig.exit == ExitStatus{std::nullopt, 9});
  CHECK(describe_exit(sig.exit) == "killed by signal 9 (SIGKILL)");

  CHECK(named(jobs, "cap-ok").state == JobState::Completed);
  CHECK(describe_exit(named(jobs, "cap-ok").exit).empty());
  CHECK(named(jobs, "cap-cancel").state == JobState::Cancelled);

  const Job& requeued = named(jobs, "cap-requeue");
  CHECK(requeued.state == JobState::Pending);
  CHECK(requeued.reason == "BeginTime");
  CHECK(requeued.requeues == 1);
}

void check_nodes(const std::vector<NodeInfo>& nodes) {
  REQUIRE(nodes.size() == 6);
  CHECK(nodes[0].name == "a1");
  CHECK(nodes[0].partitions == std::vector<std::string>{"a100-80gb"});
  CHECK(nodes[0].features == std::vector<std::string>{"a100", "a100-80gb"});
  CHECK(nodes[0].gpus_by_type == std::map<std::string, int>{{"a100", 4}});
  CHECK(nodes[0].cpus == 4);
  CHECK(nodes[0].memory_mib == 2048);
  CHECK(nodes[2].name == "g1");
  CHECK(nodes[2].partitions == std::vector<std::string>{"gpu", "cpu"});
  CHECK(nodes[2].total_gpus() == 1);
}

}  // namespace

TEST_CASE("golden parse: squeue --json of 22.05, 24.11 and 26.05, every data parser, read into one model") {
  for (const char* file : {"22.05/squeue.json", "24.11/squeue.json", "24.11/squeue-v0.0.40.json",
                           "24.11/squeue-v0.0.41.json", "24.11/squeue-v0.0.42.json", "26.05/squeue.json",
                           "26.05/squeue-v0.0.42.json", "26.05/squeue-v0.0.43.json", "26.05/squeue-v0.0.44.json",
                           "26.05/squeue-v0.0.45.json"}) {
    INFO(file);
    check_scenario(parse_squeue_json(data_fixture(file)));
  }
}

TEST_CASE("golden parse: the data parser is read from the document's meta") {
  auto source = [](const char* file) {
    return json_source(nlohmann::json::parse(data_fixture(file)), "squeue --json");
  };
  CHECK(source("22.05/squeue.json").describe() == "Slurm 22.05.8 (data_parser v0.0.38)");
  CHECK(source("24.11/squeue-v0.0.40.json").describe() == "Slurm 24.11.5 (data_parser v0.0.40)");
  CHECK(source("24.11/squeue.json").describe() == "Slurm 24.11.5 (data_parser v0.0.42)");
  CHECK(source("26.05/squeue.json").describe() == "Slurm 26.05.5 (data_parser v0.0.45)");
  CHECK_FALSE(sinfo_lists_nodes(source("26.05/sinfo.json")));
  CHECK(sinfo_lists_nodes(source("22.05/sinfo.json")));
  CHECK_FALSE(sinfo_lists_nodes(source("24.11/sinfo.json")));
}

TEST_CASE("golden parse: the nodes of 22.05's sinfo --json and 24.11's scontrol show nodes --json agree") {
  check_nodes(parse_sinfo_json(data_fixture("22.05/sinfo.json")));
  check_nodes(parse_scontrol_nodes_json(data_fixture("24.11/scontrol-nodes.json")));
  check_nodes(parse_scontrol_nodes_json(data_fixture("26.05/scontrol-nodes.json")));
  CHECK_THROWS_WITH(parse_sinfo_json(data_fixture("24.11/sinfo.json")), Catch::Contains("ask `scontrol show nodes --json`"));
}

TEST_CASE("golden parse: squeue's format string and sacct -P read the same on both versions") {
  std::string sep = "\x1f";
  for (const char* version : {"22.05", "24.11", "26.05"}) {
    INFO(version);
    // capture.sh writes the format with '|'; ddpctl asks for the unit separator.
    std::string text = data_fixture(std::string(version) + "/squeue-format.txt");
    for (auto& c : text)
      if (c == '|') c = '\x1f';
    auto jobs = parse_squeue_format(text);
    REQUIRE(jobs.size() == 7);
    CHECK(named(jobs, "cap-held").gpus == 8);  // "gres:gpu:a100:4" (22.05), "gres/gpu:a100:4" (24.11), 2 nodes
    CHECK(named(jobs, "cap-run").comment == "ddpctl:tokrun");
    CHECK(named(jobs, "cap-run").time_limit_s == 300);
    auto acct = parse_sacct(data_fixture(std::string(version) + "/sacct.txt"));
    CHECK(named(acct, "cap-fail").exit == ExitStatus{3, std::nullopt});
    CHECK(named(acct, "cap-signal").exit == ExitStatus{std::nullopt, 9});
    CHECK(named(acct, "cap-requeue").state == JobState::Requeued);
    CHECK(named(acct, "cap-requeue").flags == std::vector<std::string>{"REQUEUED"});
  }
}

TEST_CASE("23.02's data parser v0.0.39: state a string, times plain, limits wrapped") {
  // No 23.02 is at hand; this document is 22.05's with the shapes Slurm
  // 23.02's src/plugins/data_parser/v0.0.39/parsers.c writes.
  nlohmann::json doc = nlohmann::json::parse(data_fixture("22.05/squeue.json"));
  doc["meta"] = {{"plugins", {{"data_parser", "data_parser/v0.0.39"}}},
                 {"Slurm", {{"version", {{"major", 23}, {"minor", 2}, {"micro", 7}}}, {"release", "23.02.7"}}}};
  for (auto& j : doc["jobs"]) {
    j["time_limit"] = {{"set", true}, {"infinite", false}, {"number", j["time_limit"]}};
    j["node_count"] = {{"set", true}, {"infinite", false}, {"number", j["node_count"]}};
    // UINT32_NO_VAL in 23.02's parsers.c, as node_count.
    for (const char* key : {"array_job_id", "array_task_id", "array_max_tasks"})
      j[key] = {{"set", !j[key].is_null()}, {"infinite", false}, {"number", j[key].is_null() ? nlohmann::json(0) : j[key]}};
  }
  check_scenario(parse_squeue_json(doc.dump()));
}

TEST_CASE("a flag names the state as Slurm's own string does: RUNNING + COMPLETING is COMPLETING") {
  nlohmann::json doc = nlohmann::json::parse(data_fixture("24.11/squeue.json"));
  doc["jobs"][0]["job_state"] = {"RUNNING", "COMPLETING"};
  doc["jobs"][1]["job_state"] = {"PENDING", "REQUEUED"};
  auto jobs = parse_squeue_json(doc.dump());
  CHECK(jobs[0].state == JobState::Completing);
  CHECK(jobs[0].flags == std::vector<std::string>{"COMPLETING"});
  CHECK(jobs[1].state == JobState::Requeued);
  CHECK(jobs[1].flags == std::vector<std::string>{"REQUEUED"});
}

TEST_CASE("a shape the data parser never writes is an error naming the Slurm version and the field") {
  nlohmann::json doc = nlohmann::json::parse(data_fixture("24.11/squeue.json"));
  doc["jobs"][3]["job_state"] = {{"current", "FAILED"}};
  std::string what;
  try {
    parse_squeue_json(doc.dump());
  } catch (const SlurmFormatError& e) {
    what = e.what();
  }
  CHECK(what == "cannot read squeue --json of Slurm 24.11.5 (data_parser v0.0.42): jobs[3].job_state should be an "
                "array of strings but is a object; ddpctl reads Slurm 22.05 to 26.05 (data parsers v0.0.38 to "
                "v0.0.45)");
  doc = nlohmann::json::parse(data_fixture("22.05/squeue.json"));
  doc["jobs"][0]["start_time"] = {{"set", true}, {"infinite", false}, {"number", 5}};
  CHECK_THROWS_WITH(parse_squeue_json(doc.dump()),
                    Catch::Contains("of Slurm 22.05.8 (data_parser v0.0.38): jobs[0].start_time should be an integer"));
  doc["meta"] = nlohmann::json::object();
  CHECK_THROWS_WITH(parse_squeue_json(doc.dump()), Catch::Contains("names no data parser ddpctl knows (none)"));
  CHECK_THROWS_AS(parse_squeue_json("<html>"), SlurmFormatError);
}

TEST_CASE("exit statuses decoded: wait statuses, sacct's code:signal, one wording") {
  CHECK(exit_from_wait_status(0) == ExitStatus{0, std::nullopt});
  CHECK(exit_from_wait_status(768) == ExitStatus{3, std::nullopt});
  CHECK(exit_from_wait_status(32512) == ExitStatus{127, std::nullopt});
  CHECK(exit_from_wait_status(9) == ExitStatus{std::nullopt, 9});
  CHECK(exit_from_sacct("1:0") == ExitStatus{1, std::nullopt});
  CHECK(exit_from_sacct("0:15") == ExitStatus{std::nullopt, 15});
  CHECK(describe_exit(exit_from_wait_status(32512)) == "exit code 127");
  CHECK(describe_exit(exit_from_sacct("0:15")) == "killed by signal 15 (SIGTERM)");
  CHECK(describe_exit(ExitStatus{}).empty());
  // A shell's 128+N, which sacct keeps whole from 25.11 on: never a plain "exit code 137".
  CHECK(describe_exit(exit_from_sacct("137:0")) == "exit code 137 (128+9: its command was killed by signal 9, SIGKILL)");
}

TEST_CASE("golden parse: 26.05's squeue --json honours --jobs, its --test-only line and --help are read") {
  auto jobs = parse_squeue_json(data_fixture("26.05/squeue-jobs.json"));
  REQUIRE(jobs.size() == 2);
  CHECK(named(jobs, "cap-fail").exit == ExitStatus{3, std::nullopt});
  CHECK(named(jobs, "cap-ok").state == JobState::Completed);
  CommandResult r;
  r.exit_code = 0;
  r.err = data_fixture("26.05/sbatch-test-only.txt");
  StartEstimate e = parse_test_only(r);
  CHECK(e.kind == StartEstimate::Kind::Starts);
  CHECK(e.partition == "cpu");
  CHECK(e.start > 1700000000);
  auto options = sbatch_long_options(data_fixture("26.05/sbatch-help.txt"));
  for (const char* o : {"hold", "reservation", "exclude", "nodelist", "dependency", "begin", "mail-type", "mail-user",
                        "comment", "gpu-bind", "gpus-per-node", "nice"})
    CHECK(options.count(o));
  CHECK_FALSE(options.count("hint"));  // real, but not in --help: preflight asks sbatch's parser
}
