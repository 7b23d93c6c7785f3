#pragma once
// A run submitted as a study's trial (`submit --study NAME --trial N`, what
// `ddpctl tune` does; docs/tune.md): the names checked, and the trial's own
// checkpoint folder.
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

// A UserError at --study or --trial unless NAME can name files (letters,
// digits, '.', '_', '-'; at most 100) and N is a trial's number; --trial
// without --study is refused too. Nothing to check without either.
void check_study_trial(const std::string& study, const std::string& trial);

// Trials never share a checkpoint: where the spec's trainer has a
// checkpoint_dir, the --set that makes it the trial's own folder in it
// (<dir>/<study>-t<N>), so a requeued or preempted trial resumes from its
// own checkpoint and never from another trial's. nullopt otherwise.
std::optional<std::string> trial_checkpoint_set(const std::string& spec, const std::vector<std::string>& sets,
                                                const std::string& study, const std::string& trial);

}  // namespace ddpctl
