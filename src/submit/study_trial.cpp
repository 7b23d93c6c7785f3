#include "submit/study_trial.hpp"

#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/regex.hpp"
#include "base/text.hpp"
#include "spec/spec.hpp"

namespace ddpctl {

void check_study_trial(const std::string& study, const std::string& trial) {
  if (study.empty()) {
    if (!trial.empty()) throw UserError(Location{"--trial"}, "", "numbers a trial of a study: give --study NAME too");
    return;
  }
  if (!Regex("[A-Za-z0-9][A-Za-z0-9._-]{0,99}").full_match(study))
    throw UserError(Location{"--study"}, "",
                    fmt::format("{}: a study's name is letters, digits, '.', '_' and '-' (at most 100, not starting "
                                "with '.', '_' or '-')",
                                printable(study)));
  if (!Regex("[0-9]{1,9}").full_match(trial))
    throw UserError(Location{"--trial"}, "",
                    fmt::format("{}: the trial's number in the study (0, 1, ...)", printable(trial)));
}

std::optional<std::string> trial_checkpoint_set(const std::string& spec, const std::vector<std::string>& sets,
                                                const std::string& study, const std::string& trial) {
  if (study.empty()) return std::nullopt;
  RunSpec s = load_run_spec(spec, sets);
  for (const auto& a : s.trainer_args)
    if (a.rfind("--checkpoint-dir=", 0) == 0) {
      std::string dir = a.substr(17);
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      // A --set value is taken as the bytes given (no quoting).
      return "trainer.checkpoint_dir=" + dir + "/" + study + "-t" + trial;
    }
  return std::nullopt;
}

}  // namespace ddpctl
