#pragma once
// A command run attached to ddpctl's own terminal (not captured), as
// `--on`'s command there runs through ssh (ssh.hpp's this_terminal).
#include <string>
#include <vector>

namespace ddpctl {

// Runs argv in the foreground, attached to ddpctl's own stdin, stdout and
// stderr (a remote `ddpctl logs -f` over ssh streams as it comes), in
// ddpctl's process group so that the terminal's Ctrl-C reaches it; ddpctl
// ignores SIGINT and SIGQUIT meanwhile, as system() does, and the child dies
// with ddpctl. Returns its exit status, or 128 + the signal that ended it;
// throws UserError when it cannot be started.
int run_in_foreground(const std::vector<std::string>& argv);

}  // namespace ddpctl
