#pragma once
// The watchdog's act on a stall: the spec's `watchdog.action` and the job
// agent's `job watch --action` (runs/job_contract.hpp), one word each. The
// words never change: a job rendered by one ddpctl may run under another.
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

enum class StallAction { Warn, Cancel, Requeue, Restart };
const std::vector<StallAction>& stall_actions();
std::string stall_action_name(StallAction a);  // "warn", "cancel", "requeue", "restart"
std::optional<StallAction> parse_stall_action(const std::string& text);

}  // namespace ddpctl
