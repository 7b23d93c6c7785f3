#include "slurm/slurm.hpp"
#include "slurm/slurm_answer.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "slurm/slurm_parse_nodes.hpp"
#include "slurm/slurm_parse_replies.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>
#include <pwd.h>

#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

const std::string kSep = "\x1f";
// %i id, %j name, %k comment, %T state, %r reason, %V submit, %S start, %e end,
// %l limit, %N nodes, %D node count, %b GRES per node, %P partition, %a account, %Z cwd,
// %A an array task's own id, %F the array's id, %K the task or pending tasks (N/A: no array).
const std::string kSqueueFormat = "%i" + kSep + "%j" + kSep + "%k" + kSep + "%T" + kSep + "%r" + kSep + "%V" +
                                  kSep + "%S" + kSep + "%e" + kSep + "%l" + kSep + "%N" + kSep + "%D" + kSep +
                                  "%b" + kSep + "%P" + kSep + "%a" + kSep + "%Z" + kSep + "%A" + kSep + "%F" +
                                  kSep + "%K";
// JobIDRaw last: an array task's own id, where JobID prints "123_4".
const char* kSacctFormat =
    "JobID,JobName,Comment,State,Reason,Partition,Account,NodeList,Submit,Start,End,TimelimitRaw,NNodes,"
    "AllocTRES,ReqTRES,ExitCode,WorkDir,JobIDRaw,ConsumedEnergyRaw";

// squeue and sacct cut an array's list of pending tasks at 64 characters
// ("1,3-4,7,...,61...%3", in --json too) unless SLURM_BITSTR_LEN is 0; a
// sweep's retried cells are such a list.
std::vector<std::string> full_array_lists(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"env", "SLURM_BITSTR_LEN=0"});
  return argv;
}

std::chrono::milliseconds timeout_from_env(const char* name, int default_s) {
  if (const char* v = std::getenv(name); v && *v) {
    std::string problem;
    if (auto s = parse_int(v, 1, 3600, &problem)) return std::chrono::seconds(*s);
  }
  return std::chrono::seconds(default_s);
}


// squeue --jobs=ID lists every record of an array ID (its tasks have ids of
// their own) and the one task whose own id is ID.
bool is_asked(const Job& job, const std::set<std::string>& ids) {
  return ids.count(job.id) > 0 || (!job.array_job_id.empty() && ids.count(job.array_job_id) > 0);
}

}  // namespace

std::string current_user() {
#ifdef DDPCTL_STATIC
  // A static glibc cannot ask the site's name services (LDAP, SSSD) who
  // this uid is: the login's $USER, then the local files' answer.
  if (const char* u = std::getenv("USER"); u && *u) return u;
#endif
  if (const passwd* pw = getpwuid(getuid())) return pw->pw_name;
  if (const char* u = std::getenv("USER")) return u;
  return "";
}

SlurmClient::SlurmClient(CommandRunner& runner)
    : runner_(runner),
      query_timeout_(timeout_from_env("DDPCTL_SLURM_TIMEOUT", 30)),
      submit_timeout_(timeout_from_env("DDPCTL_SBATCH_TIMEOUT", 120)) {}

CommandResult SlurmClient::raw(const std::vector<std::string>& argv) { return runner_.run(argv, query_timeout_); }

CommandResult SlurmClient::query(const std::vector<std::string>& argv) {
  CommandResult r = raw(full_array_lists(argv));
  // env's "squeue: No such file or directory", exit 127: no squeue here.
  if (r.exit_code == 127 && contains(r.err, argv.front().c_str())) r.not_found = true;
  return r;
}

SbatchResult SlurmClient::submit(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_sbatch_result(runner_.run(argv, submit_timeout_));
}

StartEstimate SlurmClient::estimate_start(const std::vector<std::string>& args) {
  // Epoch seconds whatever the user's SLURM_TIME_FORMAT says.
  std::vector<std::string> argv = {"env", "SLURM_TIME_FORMAT=%s", "sbatch", "--test-only"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = runner_.run(argv, query_timeout_);
  if (r.exit_code == 127 && contains(r.err, "sbatch")) r.not_found = true;  // env's "No such file"
  return parse_test_only(r);
}

JobQuery SlurmClient::queue() {
  JobQuery q;
  // --states=all: from 23.02 squeue applies its default state filter to
  // --json too, and an ended job would vanish at once; 22.05 ignores it and
  // shows ended jobs for MinJobAge, as the filter then does everywhere.
  std::vector<std::string> argv = {"squeue", "--json", "--states=all"};
  // Jobs ddpctl looks for by token are its user's own (22.05 ignores this in --json).
  if (std::string user = current_user(); !user.empty()) argv.push_back("--users=" + user);
  CommandResult r = query(argv);
  if (r.ok()) {
    try {
      q.jobs = parse_squeue_json(r.out);
      q.answered = true;
      return q;
    } catch (const SlurmAnswerError& e) {
      q.error = std::string("squeue: ") + e.what();
      return q;
    } catch (const SlurmFormatError& e) {
      // A --json ddpctl cannot read (a newer data parser): the format string
      // reads every version; the reason is kept for `doctor`.
      q.note = e.what();
    }
  }
  if (r.not_found) {
    q.error = r.describe();
    return q;
  }
  CommandResult f = query({"squeue", "-h", "-a", "-t", "all", "-o", kSqueueFormat});
  if (!f.ok()) {
    q.error = f.describe();
    return q;
  }
  q.jobs = parse_squeue_format(f.out);
  q.has_exit_codes = false;
  q.answered = true;
  return q;
}

JobQuery SlurmClient::jobs(const std::vector<std::string>& ids) {
  if (snapshot_ && snapshot_->answer.answered &&
      std::all_of(ids.begin(), ids.end(), [&](const std::string& id) { return snapshot_->asked.count(id) > 0; })) {
    const std::set<std::string> wanted(ids.begin(), ids.end());
    JobQuery kept = snapshot_->answer;
    kept.jobs.clear();
    for (const auto& job : snapshot_->answer.jobs)
      if (is_asked(job, wanted)) kept.jobs.push_back(job);
    return kept;
  }
  JobQuery all;
  all.answered = true;
  for (size_t at = 0; at < ids.size(); at += kJobsPerQuery) {
    std::vector<std::string> chunk(ids.begin() + at, ids.begin() + std::min(ids.size(), at + kJobsPerQuery));
    JobQuery q = jobs_chunk(chunk);
    if (!q.answered) return q;
    if (!q.has_exit_codes) all.has_exit_codes = false;
    if (!q.note.empty()) all.note = q.note;
    all.jobs.insert(all.jobs.end(), std::make_move_iterator(q.jobs.begin()), std::make_move_iterator(q.jobs.end()));
  }
  if (snapshot_) *snapshot_ = Kept{std::set<std::string>(ids.begin(), ids.end()), all};
  return all;
}

JobQuery SlurmClient::jobs_chunk(const std::vector<std::string>& ids) {
  JobQuery q;
  const std::string list = "--jobs=" + join(ids, ",");
  // squeue --jobs exits 1 with "Invalid job id specified" when it knows none
  // of them (all ended longer than MinJobAge ago): an answer, with no jobs.
  auto none_known = [](const CommandResult& r) { return r.exit_code == 1 && contains(r.err, "Invalid job id specified"); };
  if (!json_ignores_jobs_) {
    CommandResult r = query({"squeue", "--json", "--states=all", list});
    if (none_known(r)) {
      q.answered = true;
      return q;
    }
    if (r.not_found) {
      q.error = r.describe();
      return q;
    }
    if (r.ok()) {
      try {
        q.jobs = parse_squeue_json(r.out);
        q.answered = true;
      } catch (const SlurmAnswerError& e) {
        q.error = std::string("squeue: ") + e.what();
        return q;
      } catch (const SlurmFormatError& e) {
        q.note = e.what();  // read through the format string below
      }
    }
    if (q.answered) {
      const std::set<std::string> wanted(ids.begin(), ids.end());
      std::vector<Job> mine;
      for (auto& job : q.jobs)
        if (is_asked(job, wanted)) mine.push_back(std::move(job));
      // More jobs than asked for: this Slurm's --json ignores --jobs (22.05).
      if (mine.size() < q.jobs.size()) json_ignores_jobs_ = true;
      q.jobs = std::move(mine);
      return q;
    }
    // Unreadable --json: the format string from now on. A failed call (no
    // --json in this squeue, a controller that does not answer) goes on to
    // the format string too, which says why when it fails as well.
    if (!q.note.empty()) json_ignores_jobs_ = true;
  }
  CommandResult f = query({"squeue", "-h", "-a", "-t", "all", list, "-o", kSqueueFormat});
  if (none_known(f)) {
    q.answered = true;
    q.has_exit_codes = false;
    return q;
  }
  if (!f.ok()) {
    q.error = f.describe();
    return q;
  }
  q.jobs = parse_squeue_format(f.out);
  q.has_exit_codes = false;
  q.answered = true;
  return q;
}

namespace {

std::string sacct_time(long long seconds) {
  char buf[32];
  std::time_t t = static_cast<std::time_t>(seconds);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  return buf;
}

}  // namespace

JobQuery SlurmClient::accounting(const std::vector<std::string>& ids, long long since) {
  std::vector<std::string> argv = {"sacct", "-X", "-n", "-P", "-o", kSacctFormat};
  if (!ids.empty()) argv.push_back("--jobs=" + join(ids, ","));
  if (since > 0) {
    argv.push_back("--starttime=" + sacct_time(since));
  } else if (!ids.empty()) {
    argv.push_back("--starttime=1970-01-01");
  }
  return sacct(argv);
}

JobQuery SlurmClient::ran_on(const std::string& nodes, long long from, long long to) {
  return sacct({"sacct", "-X", "-n", "-P", "-o", kSacctFormat, "--allusers", "--nodelist=" + nodes,
                "--starttime=" + sacct_time(from), "--endtime=" + sacct_time(to)});
}

JobQuery SlurmClient::attempts(const std::string& id) { return attempts(std::vector<std::string>{id}); }

JobQuery SlurmClient::attempts(const std::vector<std::string>& ids) {
  JobQuery all;
  all.answered = true;
  for (size_t at = 0; at < ids.size();) {
    // As many ids as fit one argument.
    std::string list = "--jobs=" + ids[at++];
    while (at < ids.size() && list.size() + 1 + ids[at].size() <= kJobListChars) list += "," + ids[at++];
    JobQuery q = sacct({"sacct", "-X", "-n", "-P", "--duplicates", "-o", kSacctFormat, list, "--starttime=1970-01-01"});
    if (!q.answered) return q;
    all.jobs.insert(all.jobs.end(), std::make_move_iterator(q.jobs.begin()), std::make_move_iterator(q.jobs.end()));
  }
  return all;
}

JobQuery SlurmClient::sacct(const std::vector<std::string>& argv) {
  JobQuery q;
  CommandResult r = query(argv);
  // With accounting off, sacct says so and exits 1 (or 0 with nothing).
  if (!r.ok() || contains(r.err, "accounting storage is disabled")) {
    q.error = r.describe();
    return q;
  }
  q.jobs = parse_sacct(r.out);
  q.answered = true;
  return q;
}

CommandResult SlurmClient::cancel(const std::vector<std::string>& ids) {
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  return raw(argv);
}

NodeQuery SlurmClient::nodes() {
  NodeQuery q;
  CommandResult r = raw({"sinfo", "--json"});
  if (!r.ok()) {
    q.error = r.describe();
    return q;
  }
  try {
    // sinfo's meta says which reader: 22.05 lists nodes itself; from 23.02
    // it lists node groups, and each node is read from scontrol instead.
    JsonSource source = json_source(nlohmann::json::parse(r.out), "sinfo --json");
    q.source = source.describe();
    if (sinfo_lists_nodes(source)) {
      q.nodes = parse_sinfo_json(r.out);
      q.reader = "sinfo --json";
    } else {
      CommandResult n = raw({"scontrol", "show", "nodes", "--json"});
      if (!n.ok()) {
        q.error = n.describe();
        return q;
      }
      q.nodes = parse_scontrol_nodes_json(n.out);
      q.reader = "scontrol show nodes --json";
    }
    q.answered = true;
  } catch (const SlurmAnswerError& e) {
    q.error = std::string("sinfo: ") + e.what();
  } catch (const SlurmFormatError& e) {
    q.error = e.what();
  } catch (const nlohmann::json::exception& e) {
    q.error = std::string("cannot read sinfo --json: not JSON (") + e.what() + ")";
  }
  return q;
}

std::optional<std::vector<std::string>> SlurmClient::user_accounts() {
  std::string user = current_user();
  if (user.empty()) return std::nullopt;
  CommandResult r = raw({"sacctmgr", "-n", "-P", "show", "associations", "where", "user=" + user, "format=account"});
  if (!r.ok()) return std::nullopt;
  std::vector<std::string> accounts;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    line = trim(line);
    if (!line.empty() && std::find(accounts.begin(), accounts.end(), line) == accounts.end()) accounts.push_back(line);
  }
  if (accounts.empty()) return std::nullopt;  // no associations recorded: enforcement is not ours to guess
  return accounts;
}

std::map<std::string, std::string> SlurmClient::config() {
  std::map<std::string, std::string> out;
  CommandResult r = raw({"scontrol", "show", "config"});
  if (!r.ok()) return out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    out[trim(line.substr(0, eq))] = trim(line.substr(eq + 3));
  }
  return out;
}

std::string SlurmClient::version(std::string* error) {
  CommandResult r = raw({"sinfo", "--version"});
  if (!r.ok()) {
    if (error) *error = r.describe();
    return "";
  }
  // "slurm 22.05.8"; Debian's 24.11 says "slurm-wlm 24.11.5".
  std::string v = trim(r.out);
  if (auto space = v.rfind(' '); space != std::string::npos) v.erase(0, space + 1);
  return v;
}

}  // namespace ddpctl
