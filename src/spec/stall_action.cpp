#include "spec/stall_action.hpp"

namespace ddpctl {

namespace {

struct ActionRow {
  StallAction action;
  const char* text;
};
const ActionRow kActions[] = {
    {StallAction::Warn, "warn"},
    {StallAction::Cancel, "cancel"},
    {StallAction::Requeue, "requeue"},
    {StallAction::Restart, "restart"},
};

}  // namespace

const std::vector<StallAction>& stall_actions() {
  static const std::vector<StallAction> all = [] {
    std::vector<StallAction> v;
    for (const auto& r : kActions) v.push_back(r.action);
    return v;
  }();
  return all;
}

std::string stall_action_name(StallAction a) {
  for (const auto& r : kActions)
    if (r.action == a) return r.text;
  return "";
}

std::optional<StallAction> parse_stall_action(const std::string& text) {
  for (const auto& r : kActions)
    if (text == r.text) return r.action;
  return std::nullopt;
}

}  // namespace ddpctl
