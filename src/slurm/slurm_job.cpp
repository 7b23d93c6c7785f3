// Words for a job's state and exit (job.hpp).
#include "slurm/slurm_job.hpp"

#include <cstring>
#include <fmt/format.h>

#include "base/values.hpp"

namespace ddpctl {

namespace {

struct StateName {
  JobState state;
  const char* name;
};
const StateName kStateNames[] = {
    {JobState::Unknown, "UNKNOWN"},          {JobState::Pending, "PENDING"},
    {JobState::Configuring, "CONFIGURING"},  {JobState::Running, "RUNNING"},
    {JobState::Completing, "COMPLETING"},    {JobState::Suspended, "SUSPENDED"},
    {JobState::Stopped, "STOPPED"},          {JobState::Signaling, "SIGNALING"},
    {JobState::StageOut, "STAGE_OUT"},       {JobState::Resizing, "RESIZING"},
    {JobState::Requeued, "REQUEUED"},        {JobState::RequeueHold, "REQUEUE_HOLD"},
    {JobState::RequeueFed, "REQUEUE_FED"},   {JobState::ResvDelHold, "RESV_DEL_HOLD"},
    {JobState::SpecialExit, "SPECIAL_EXIT"}, {JobState::Completed, "COMPLETED"},
    {JobState::Failed, "FAILED"},            {JobState::Cancelled, "CANCELLED"},
    {JobState::Timeout, "TIMEOUT"},          {JobState::NodeFail, "NODE_FAIL"},
    {JobState::Preempted, "PREEMPTED"},      {JobState::OutOfMemory, "OUT_OF_MEMORY"},
    {JobState::BootFail, "BOOT_FAIL"},       {JobState::Deadline, "DEADLINE"},
    {JobState::Revoked, "REVOKED"},
};

}  // namespace

const char* state_name(JobState state) {
  for (const auto& s : kStateNames)
    if (s.state == state) return s.name;
  return "UNKNOWN";
}

std::optional<JobState> parse_job_state(const std::string& name) {
  std::string first = name.substr(0, name.find(' '));  // sacct: "CANCELLED by 0"
  for (const auto& s : kStateNames)
    if (first == s.name) return s.state;
  return std::nullopt;
}

bool is_slurm_job_id(std::string_view id) {
  if (id.empty() || id.size() > 32) return false;
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  size_t sep = id.find_first_of("_+");
  if (sep == std::string_view::npos) return digits(id);
  return digits(id.substr(0, sep)) && digits(id.substr(sep + 1));
}

bool is_terminal(JobState state) {
  switch (state) {
    case JobState::Completed:
    case JobState::Failed:
    case JobState::Cancelled:
    case JobState::Timeout:
    case JobState::NodeFail:
    case JobState::Preempted:
    case JobState::OutOfMemory:
    case JobState::BootFail:
    case JobState::Deadline:
    case JobState::Revoked:
      return true;
    default:
      return false;
  }
}

int NodeInfo::total_gpus() const {
  int n = 0;
  for (const auto& [type, count] : gpus_by_type) n += count;
  return n;
}

ExitStatus exit_from_wait_status(long long status) {
  ExitStatus e;
  int s = static_cast<int>(status);
  if ((s & 0x7f) != 0 && (s & 0x7f) != 0x7f)
    e.signal = s & 0x7f;
  else
    e.code = (s >> 8) & 0xff;
  return e;
}

ExitStatus exit_from_sacct(const std::string& text) {
  ExitStatus e;
  auto colon = text.find(':');
  std::string code = text.substr(0, colon);
  std::string sig = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (!code.empty() && is_decimal_number(code) && code.size() < 9) e.code = std::stoi(code);
  if (!sig.empty() && is_decimal_number(sig) && sig.size() < 9 && std::stoi(sig) != 0) {
    e.signal = std::stoi(sig);
    e.code.reset();
  }
  return e;
}

std::string describe_exit(const ExitStatus& e) {
  if (e.signal) {
    const char* abbrev = sigabbrev_np(*e.signal);
    return abbrev ? fmt::format("killed by signal {} (SIG{})", *e.signal, abbrev)
                  : fmt::format("killed by signal {}", *e.signal);
  }
  // 128+N: a shell whose command was killed by signal N. Slurm 25.11 and
  // later keep such codes whole in sacct (137:0); earlier ones cut them to a
  // byte of their own reading. Said as both, never as a plain exit code.
  if (e.code && *e.code > 128 && *e.code <= 128 + 64) {
    int sig = *e.code - 128;
    const char* abbrev = sigabbrev_np(sig);
    return fmt::format("exit code {} (128+{}: its command was killed by signal {}{})", *e.code, sig, sig,
                       abbrev ? fmt::format(", SIG{}", abbrev) : "");
  }
  if (e.code && *e.code != 0) return fmt::format("exit code {}", *e.code);
  return "";
}

}  // namespace ddpctl
