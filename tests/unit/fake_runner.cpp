#include "fake_runner.hpp"

#include <algorithm>
#include <thread>
#include "catch.hpp"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/run_store.hpp"
#include "base/text.hpp"

namespace ddpctl::test {

namespace {

bool matches(const std::vector<std::string>& argv, const std::string& program, const std::vector<std::string>& with) {
  if (argv.empty()) return false;
  auto start = argv.begin();
  // `env NAME=VALUE... squeue ...` is squeue's call (a rule for "env" still
  // matches it whole).
  // `env -u NAME ... NAME=VALUE... srun ...` is srun's.
  if (argv[0] == "env" && program != "env") {
    start = argv.begin() + 1;
    while (start != argv.end() && (*start == "-u" || start->find('=') != std::string::npos))
      start += *start == "-u" && start + 1 != argv.end() ? 2 : 1;
    if (start == argv.end()) return false;
  }
  if (*start != program) return false;
  for (const auto& w : with)
    if (std::find(start + 1, argv.end(), w) == argv.end() &&
        std::none_of(start + 1, argv.end(), [&](const std::string& a) { return a.rfind(w, 0) == 0; }))
      return false;
  return true;
}

std::string flag_value(const std::vector<std::string>& argv, const std::string& prefix) {
  for (const auto& a : argv)
    if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
  return "";
}

}  // namespace

FakeRunner& FakeRunner::on(const std::string& program, const std::vector<std::string>& with, CommandResult result) {
  for (auto& r : rules_)
    if (r.program == program && r.with == with && !r.handler) {
      r.answers.push_back(std::move(result));
      return *this;
    }
  rules_.push_back({program, with, {std::move(result)}, nullptr});
  return *this;
}

FakeRunner& FakeRunner::on(const std::string& program, const std::vector<std::string>& with, Handler handler) {
  rules_.push_back({program, with, {}, std::move(handler)});
  return *this;
}

CommandResult FakeRunner::run(const std::vector<std::string>& argv, std::chrono::milliseconds) {
  Handler handler;
  CommandResult r;
  bool answered = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    calls.push_back(argv);
    for (auto it = rules_.rbegin(); it != rules_.rend() && !answered; ++it) {
      if (!matches(argv, it->program, it->with)) continue;
      answered = true;
      if (it->handler) {
        handler = it->handler;
      } else {
        r = it->answers.front();
        if (it->answers.size() > 1) it->answers.pop_front();
      }
    }
  }
  // Catch2's assertions are not thread-safe: a call from another thread that
  // no rule answers is failed by the caller's check of its result.
  if (!answered) {
    r.exit_code = 127;
    r.err = "FakeRunner: no rule answers " + join(argv, " ");
    if (std::this_thread::get_id() == main_thread_) FAIL(r.err);
    return r;
  }
  if (handler) r = handler(argv);
  r.argv = argv;
  return r;
}

size_t FakeRunner::count(const std::string& program, const std::vector<std::string>& with) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<size_t>(
      std::count_if(calls.begin(), calls.end(), [&](const auto& argv) { return matches(argv, program, with); }));
}

CommandResult exits(int code, const std::string& out, const std::string& err) {
  CommandResult r;
  r.exit_code = code;
  r.out = out;
  r.err = err;
  return r;
}

CommandResult times_out() {
  CommandResult r;
  r.timed_out = true;
  return r;
}

CommandResult not_found() {
  CommandResult r;
  r.not_found = true;
  r.exit_code = 127;
  return r;
}

FakeSlurm::FakeSlurm(const std::string& version) {
  const std::string data = source_dir() + "/tests/unit/data/" + version + "/";
  const bool arrays = version != "22.05";  // data parser v0.0.40 and later
  answer_squeue(data, arrays);
  answer_sacct();
  answer_sbatch_scancel();
  answer_site(data, arrays);
}

// squeue --json in the version's layout (its data parser), and squeue -o.
void FakeSlurm::answer_squeue(const std::string& data, bool arrays) {
  nlohmann::json squeue_doc = nlohmann::json::parse(read_file(data + "squeue.json"));
  nlohmann::json job_template = squeue_doc["jobs"].at(0);
  std::string down_doc = read_file(source_dir() + "/tests/unit/data/22.05/squeue-controller-down.json");
  auto number = [arrays](long long n) -> nlohmann::json {
    if (!arrays) return n;
    return {{"set", true}, {"infinite", false}, {"number", n}};
  };

  // squeue --jobs=a,b: the jobs it still knows; exit 1 when it knows none.
  auto asked = [this](const std::vector<std::string>& argv) {
    std::vector<const FakeJob*> out;
    std::string wanted = flag_value(argv, "--jobs=");
    for (const auto& j : jobs) {
      if (!j.in_squeue) continue;
      if (!wanted.empty() && ("," + wanted + ",").find("," + j.id + ",") == std::string::npos) continue;
      out.push_back(&j);
    }
    return out;
  };
  const std::string invalid_id = "slurm_load_jobs error: Invalid job id specified\n";
  runner.on("squeue", {"--json"}, [=](const std::vector<std::string>& argv) {
    // 22.05 answers with "errors"; 24.11 exits 1 with a message.
    if (controller_down)
      return arrays ? exits(1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n")
                    : exits(0, down_doc);
    // 22.05's --json ignores --jobs; 24.11's honours it.
    std::vector<const FakeJob*> listed = asked(arrays ? argv : std::vector<std::string>{});
    if (listed.empty() && arrays && !flag_value(argv, "--jobs=").empty()) return exits(1, "", invalid_id);
    nlohmann::json doc = squeue_doc;
    doc["jobs"] = nlohmann::json::array();
    for (const FakeJob* jp : listed) {
      const FakeJob& j = *jp;
      nlohmann::json o = job_template;
      o["job_id"] = std::stoll(j.id);
      o["name"] = j.name;
      o["comment"] = j.comment;
      o["job_state"] = arrays ? nlohmann::json::array({j.state}) : nlohmann::json(j.state);
      o["state_reason"] = j.reason;
      o["nodes"] = j.nodes;
      if (arrays)
        o["exit_code"] = {{"status", {j.exit ? "ERROR" : "SUCCESS"}},
                          {"return_code", {{"set", true}, {"infinite", false}, {"number", j.exit}}},
                          {"signal", {{"id", {{"set", false}, {"infinite", false}, {"number", 0}}}, {"name", ""}}}};
      else
        o["exit_code"] = j.exit << 8;  // a raw wait status
      o["start_time"] = number(0);
      o["restart_cnt"] = j.restarts;
      doc["jobs"].push_back(o);
    }
    return exits(0, doc.dump());
  });
  // Without --json: the format string path (22.05 after its --json ignored
  // --jobs), in ddpctl's format (slurm.cpp's kSqueueFormat).
  runner.on("squeue", {"-o"}, [=](const std::vector<std::string>& argv) {
    if (controller_down) return exits(1, "", "squeue: error: Unable to contact slurm controller\n");
    std::vector<const FakeJob*> listed = asked(argv);
    if (listed.empty() && !flag_value(argv, "--jobs=").empty()) return exits(1, "", invalid_id);
    std::string out;
    const std::string sep = "\x1f";
    for (const FakeJob* j : listed)
      out += j->id + sep + j->name + sep + j->comment + sep + j->state + sep + j->reason + sep +
             "2026-11-22T08:11:57" + sep + "N/A" + sep + "N/A" + sep + "5:00" + sep + j->nodes + sep + "1" + sep +
             "N/A" + sep + "cpu" + sep + "lusu" + sep + "/tmp\n";
    return exits(0, out);
  });
}

// sacct -P in ddpctl's format; --duplicates lists a requeued job's earlier attempts.
void FakeSlurm::answer_sacct() {
  runner.on("sacct", {}, [this](const std::vector<std::string>& argv) {
    if (!accounting) return exits(1, "", "sacct: error: Slurm accounting storage is disabled\n");
    std::string wanted = flag_value(argv, "--jobs=");
    std::vector<std::string> ids;
    for (size_t b = 0; !wanted.empty() && b <= wanted.size();) {
      size_t e = wanted.find(',', b);
      if (e == std::string::npos) e = wanted.size();
      ids.push_back(wanted.substr(b, e - b));
      b = e + 1;
    }
    const bool duplicates = std::find(argv.begin(), argv.end(), "--duplicates") != argv.end();
    std::string out;
    for (const auto& j : jobs) {
      if (!j.in_sacct) continue;
      if (!ids.empty() && std::find(ids.begin(), ids.end(), j.id) == ids.end()) continue;
      // A requeued job's earlier attempts first, as sacct --duplicates lists them.
      if (duplicates)
        for (const auto& state : j.earlier)
          out += fmt::format("{}|{}|{}|{}|None|cpu|lusu|{}|2026-11-22T08:11:57|Unknown|Unknown|5|1|billing=1,cpu=1||0:0|/tmp\n",
                             j.id, j.name, j.comment, state, j.nodes.empty() ? "None assigned" : j.nodes);
      out += fmt::format("{}|{}|{}|{}|{}|cpu|lusu|{}|2026-11-22T08:11:57|Unknown|{}|5|1|billing=1,cpu=1||{}:0|/tmp\n",
                         j.id, j.name, j.comment, j.state, j.reason, j.nodes.empty() ? "None assigned" : j.nodes,
                         j.end, j.exit);
    }
    return exits(0, out);
  });
}

// sbatch --parsable as FakeSlurm::sbatch says; scancel ends what is not ended.
void FakeSlurm::answer_sbatch_scancel() {
  runner.on("sbatch", {"--parsable"}, [this](const std::vector<std::string>& argv) {
    auto make = [&] {
      FakeJob j;
      j.id = std::to_string(next_id++);
      j.comment = flag_value(argv, "--comment=");
      j.excluded = flag_value(argv, "--exclude=");
      j.name = "job";
      jobs.push_back(j);
      if (on_submit) on_submit(jobs.back());
      return jobs.back().id;
    };
    switch (sbatch) {
      case Sbatch::Ok:
        return exits(0, make() + "\n");
      case Sbatch::LosesAnswer:
        make();
        return exits(1, "", "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n");
      case Sbatch::TimesOutBeforeJob:
        return times_out();
      case Sbatch::Rejects:
        break;
    }
    return exits(1, "", "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n");
  });
  runner.on("scancel", {}, [this](const std::vector<std::string>& argv) {
    for (size_t i = 1; i < argv.size(); ++i)
      if (FakeJob* j = job(argv[i]); j && !is_terminal(parse_job_state(j->state).value_or(JobState::Unknown)))
        j->state = "CANCELLED";
    return exits(0);
  });
}

// scontrol, sinfo, sacctmgr: the site as the preflights read it.
void FakeSlurm::answer_site(const std::string& data, bool arrays) {
  runner.on("scontrol", {"show", "config"}, exits(0, "ClusterName = local\nMinJobAge = 300\n"));
  runner.on("scontrol", {"show", "job", "-o"}, [this](const std::vector<std::string>& argv) {
    const FakeJob* j = argv.size() > 4 ? job(argv[4]) : nullptr;
    if (!j) return exits(1, "", "slurm_load_jobs error: Invalid job id specified\n");
    return exits(0, fmt::format("JobId={} JobName={} JobState={} Reason={} ReqNodeList=(null) ExcNodeList={} "
                                "NodeList={}\n",
                                j->id, j->name, j->state, j->reason, j->excluded.empty() ? "(null)" : j->excluded,
                                j->nodes.empty() ? "(null)" : j->nodes));
  });
  runner.on("sinfo", {"--json"}, exits(0, read_file(data + "sinfo.json")));
  if (arrays) runner.on("scontrol", {"show", "nodes", "--json"}, exits(0, read_file(data + "scontrol-nodes.json")));
  runner.on("sacctmgr", {}, exits(0, "lusu\nother\n"));
  // No QOS or association limits (the limits preflight reads them; a line it
  // cannot read would be a note).
  runner.on("sacctmgr", {"show", "qos"}, exits(0, ""));
  runner.on("sacctmgr", {"show", "assoc", "format=Account,User,Partition"}, exits(0, ""));
  // The limits preflight reads (site_limits_read.hpp): the local cluster's
  // partitions, no reservations, no usage.
  runner.on("scontrol", {"-o", "show", "partition"}, exits(0, read_file(data + "scontrol-partition.txt")));
  runner.on("env", {"scontrol", "-o", "show", "reservation"}, exits(0, "No reservations in the system\n"));
  runner.on("scontrol", {"show", "assoc_mgr"}, exits(0, ""));
}

FakeSlurm::FakeJob& FakeSlurm::add(const std::string& id, const std::string& comment, const std::string& state,
                                   const std::string& nodes) {
  FakeJob j;
  j.id = id;
  j.name = "job";
  j.comment = comment;
  j.state = state;
  j.nodes = nodes;
  jobs.push_back(j);
  return jobs.back();
}

FakeSlurm::FakeJob* FakeSlurm::job(const std::string& id) {
  for (auto& j : jobs)
    if (j.id == id) return &j;
  return nullptr;
}

FakeSlurm::FakeJob* FakeSlurm::job_with_token(const std::string& token) {
  for (auto& j : jobs)
    if (j.comment == job_comment(token)) return &j;
  return nullptr;
}

}  // namespace ddpctl::test
