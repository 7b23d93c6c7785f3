// The ledger's read-modify-write under its lock, and the submission tokens
// that tie an attempt to its job (ledger.hpp).
#include "ledger.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

#include "diagnostics.hpp"
#include "files.hpp"

namespace ddpctl {

using nlohmann::json;

namespace {

json to_json(const Attempt& a) {
  return json{{"token", a.token},
              {"shape", a.shape},
              {"script", a.script},
              {"argv", a.argv},
              {"intent_at", a.intent_at},
              {"outcome", outcome_name(a.outcome)},
              {"job_id", a.job_id},
              {"cluster", a.cluster},
              {"reason", a.reason},
              {"decided_at", a.decided_at},
              {"cancel_requested_at", a.cancel_requested_at},
              {"pid", a.pid},
              {"host", a.host}};
}

Attempt attempt_from_json(const json& j) {
  Attempt a;
  a.token = j.value("token", "");
  a.shape = j.value("shape", "");
  a.script = j.value("script", "");
  a.argv = j.value("argv", std::vector<std::string>{});
  a.intent_at = j.value("intent_at", "");
  // A word this version never wrote is kept unsettled rather than guessed.
  a.outcome = parse_outcome(j.value("outcome", "intent")).value_or(Outcome::Intent);
  a.job_id = j.value("job_id", "");
  a.cluster = j.value("cluster", "");
  a.reason = j.value("reason", "");
  a.decided_at = j.value("decided_at", "");
  a.cancel_requested_at = j.value("cancel_requested_at", "");
  a.pid = j.value("pid", 0);
  a.host = j.value("host", "");
  return a;
}

}  // namespace

std::string job_comment(const std::string& token, const std::string& user_comment) {
  return user_comment.empty() ? "ddpctl:" + token : "ddpctl:" + token + " " + user_comment;
}

bool comment_has_token(const std::string& comment, const std::string& token) {
  const std::string mine = job_comment(token);
  return comment.compare(0, mine.size(), mine) == 0 && (comment.size() == mine.size() || comment[mine.size()] == ' ');
}

namespace {

void write_ledger(const std::string& dir, const std::string& id, const std::vector<Attempt>& list) {
  json attempts = json::array();
  for (const auto& a : list) attempts.push_back(to_json(a));
  json ledger = {{"format", 1}, {"run", id}, {"attempts", attempts}};
  write_file_atomic(dir + "/ledger.json", ledger.dump(2) + "\n");
}

std::vector<Attempt> read_ledger(const std::string& dir) {
  json ledger;
  try {
    ledger = json::parse(read_file(dir + "/ledger.json"));
  } catch (const json::exception& e) {
    throw UserError(Location{dir + "/ledger.json"}, "", std::string("damaged ledger: ") + e.what());
  }
  return ledger_attempts(ledger);
}

// flock on <run dir>/ledger.lock for one read-modify-write (held briefly).
class LedgerLock {
 public:
  explicit LedgerLock(const std::string& dir) {
    fd_ = ::open((dir + "/ledger.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UserError(Location{dir + "/ledger.lock"}, "", std::string("cannot open: ") + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        int e = errno;
        ::close(fd_);
        throw UserError(Location{dir + "/ledger.lock"}, "", std::string("cannot lock: ") + std::strerror(e));
      }
  }
  ~LedgerLock() { ::close(fd_); }
  LedgerLock(const LedgerLock&) = delete;
  LedgerLock& operator=(const LedgerLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

void save_ledger(const Run& run) {
  LedgerLock lock(run.dir);
  write_ledger(run.dir, run.id, run.attempts);
}

void update_ledger(Run& run, const std::function<void(std::vector<Attempt>&)>& change) {
  LedgerLock lock(run.dir);
  std::vector<Attempt> attempts = read_ledger(run.dir);
  change(attempts);
  write_ledger(run.dir, run.id, attempts);
  run.attempts = attempts;
}

Attempt& attempt_by_token(std::vector<Attempt>& attempts, const std::string& token) {
  for (auto& a : attempts)
    if (a.token == token) return a;
  attempts.emplace_back();
  attempts.back().token = token;
  return attempts.back();
}

std::vector<Attempt> ledger_attempts(const json& ledger) {
  std::vector<Attempt> out;
  for (const auto& a : ledger.value("attempts", json::array())) out.push_back(attempt_from_json(a));
  return out;
}

}  // namespace ddpctl
