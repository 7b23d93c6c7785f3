#pragma once
// `ddpctl race-checkpoint COORDINATOR --send|--receive` (docs/race.md "Across
// sites", "When the winner is requeued"): a re-race across sites that another
// site wins resumes from the checkpoint the last winner wrote. The
// coordinator, the only machine that reaches both, asks the site that trained
// last for its run's checkpoint folder (a tar on stdout) and hands it to the
// winning site's run (the tar on stdin), before that job goes through its
// gate. What comes in is data: checked whole (files and folders only, names
// relative, no '..'), then put in place of the run's checkpoint folder, the
// one its jobs are given (DDPCTL_CHECKPOINT_DIR).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "script/runs.hpp"

namespace ddpctl {

// The checkpoint folder a run's jobs are given: DDPCTL_CHECKPOINT_DIR in its
// first shape's script (relative: to the folder it was submitted from); ""
// when the script names none.
std::string run_checkpoint_folder(const Run& run);

// The tar to send: the folder's contents, or an empty archive when it has none.
std::vector<std::string> checkpoint_send_argv(const std::string& folder);

// Takes the archive at `tar` (a file) as the run's checkpoint folder: a
// UserError naming what is refused, and nothing replaced, unless every
// member is a file or a folder with a plain relative name. An earlier,
// non-empty folder is kept beside it (<folder>.before-<time>). Returns
// {folder, files, bytes, kept}.
nlohmann::json receive_checkpoint(const Run& run, const std::string& tar);

}  // namespace ddpctl
