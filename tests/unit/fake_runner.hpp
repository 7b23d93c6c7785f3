#pragma once
// Test doubles for the core's process edge and clock (tests only). The
// end-to-end tests in tests/slurm run the real Slurm; these make the decision
// logic around it (settling, idempotency, race decisions, status merging,
// cancel confirmation) testable in milliseconds.
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.hpp"
#include "slurm/context.hpp"
#include "base/environment.hpp"
#include "base/process.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl::test {

// A scripted CommandRunner: rules match a call by its program (the one `env
// [-u NAME] NAME=VALUE...` runs, too) and by words its argv must contain (later rules
// win); a rule answers from a queue of
// canned results (the last one repeats) or from a function, so it can time
// out, fail or lie. Every call is recorded. A call no rule matches fails the
// test with the argv. Safe to call from several threads at once (dump_stacks
// runs a node's dumps in parallel): calls are recorded and answered under a
// mutex; a handler runs outside it, so handlers may block or run in parallel.
class FakeRunner : public CommandRunner {
 public:
  using Handler = std::function<CommandResult(const std::vector<std::string>& argv)>;
  FakeRunner& on(const std::string& program, const std::vector<std::string>& with, CommandResult result);
  FakeRunner& on(const std::string& program, const std::vector<std::string>& with, Handler handler);
  CommandResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) override;

  std::vector<std::vector<std::string>> calls;
  // Calls of `program` whose argv contains every word of `with`.
  size_t count(const std::string& program, const std::vector<std::string>& with = {}) const;

 private:
  mutable std::mutex mutex_;
  std::thread::id main_thread_ = std::this_thread::get_id();
  struct Rule {
    std::string program;
    std::vector<std::string> with;
    std::deque<CommandResult> answers;
    Handler handler;
  };
  std::vector<Rule> rules_;
};

CommandResult exits(int code, const std::string& out = "", const std::string& err = "");
CommandResult times_out();
CommandResult not_found();

// A clock whose sleep moves its hands at once.
class FakeClock : public Clock {
 public:
  double monotonic() override { return mono; }
  long long now() override { return epoch + static_cast<long long>(mono - 1000); }
  double wall() override { return static_cast<double>(epoch) + (mono - 1000); }
  void sleep(double seconds) override {
    mono += seconds;
    ++sleeps;
    if (on_sleep) on_sleep();
  }
  double mono = 1000;
  long long epoch = 1795300000;  // now() at the start
  int sleeps = 0;
  std::function<void()> on_sleep;  // lets a test change the world between polls
};

// An environment of its own variables; PATH, when a test sets it, is searched
// on the real file system.
class FakeEnvironment : public Environment {
 public:
  std::optional<std::string> get(const std::string& name) const override {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::string hostname() const override { return host; }
  std::map<std::string, std::string> vars;
  std::string host = "testhost";
};

// A small Slurm made of FakeRunner rules, speaking 22.05 or 24.11. sbatch
// puts a job into an in-memory queue (its --comment carries the token);
// squeue --json answers with that version's real document
// (tests/unit/data/<version>/squeue.json) rewritten to hold those jobs in its
// data parser's shapes; sacct -P with rows in ddpctl's format; scancel
// cancels; scontrol show job -o shows a job's state and ExcNodeList;
// sinfo/scontrol --json and sacctmgr answer from the real fixtures.
// Faults: the controller down, sbatch losing its answer after making the
// job, sbatch timing out before making it, sbatch rejecting, accounting off.
struct FakeSlurm {
  struct FakeJob {
    std::string id, name, comment, state = "PENDING", reason = "None", nodes;
    std::string excluded;  // ExcNodeList (sbatch --exclude=, or set by a test as scontrol update does)
    int exit = 0;
    int restarts = 0;  // Slurm's requeue count (squeue --json's restart_cnt)
    bool in_squeue = true, in_sacct = true;
    std::string end = "Unknown";       // sacct's End, e.g. 2026-11-22T09:00:00
    std::vector<std::string> earlier;  // states of earlier attempts (a requeue), shown by sacct --duplicates
  };
  enum class Sbatch { Ok, LosesAnswer, TimesOutBeforeJob, Rejects };

  explicit FakeSlurm(const std::string& version = "22.05");
  // A job made outside ddpctl's sbatch (another user's, or one the controller
  // made after sbatch gave up).
  FakeJob& add(const std::string& id, const std::string& comment = "", const std::string& state = "PENDING",
               const std::string& nodes = "");
  FakeJob* job(const std::string& id);
  // The job sbatch made for `token`, or null.
  FakeJob* job_with_token(const std::string& token);

  FakeRunner runner;
  FakeClock clock;
  FakeEnvironment env;
  SlurmClient slurm{runner};
  Context ctx{runner, slurm, clock, env, 0.5};
  std::vector<FakeJob> jobs;
  int next_id = 100;
  bool controller_down = false;  // squeue answers with 22.05's "errors"
  bool accounting = true;        // sacct answers
  Sbatch sbatch = Sbatch::Ok;
  std::function<void(FakeJob&)> on_submit;  // e.g. start the job at once

 private:
  // The commands' answers, by family (the constructor registers them).
  void answer_squeue(const std::string& data, bool arrays);
  void answer_sacct();
  void answer_sbatch_scancel();
  void answer_site(const std::string& data, bool arrays);
};

}  // namespace ddpctl::test

#include "runs/output.hpp"

namespace ddpctl::test {

// Records what a workflow says, one string per message.
struct RecordingOutput : Output {
  std::vector<std::string> lines, warnings, errors, notes;
  std::string raw_text;
  void line(const std::string& text) override { lines.push_back(text); }
  void state_line(const std::string& prefix, const std::string& text, Tone) override { lines.push_back(prefix + text); }
  void raw(const std::string& text) override { raw_text += text; }
  void warning(const std::string& text) override { warnings.push_back(text); }
  void error(const std::string& text) override { errors.push_back(text); }
  void note(const std::string& text) override { notes.push_back(text); }
};

}  // namespace ddpctl::test
