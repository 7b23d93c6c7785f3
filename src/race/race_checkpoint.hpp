#pragma once
// `ddpctl race-checkpoint COORDINATOR --site HOST --send|--receive`
// (docs/race.md "Across sites", "When the winner is requeued"): a re-race
// across sites that another site wins resumes from the checkpoint the last
// winner wrote. The coordinator, the only machine that reaches both, asks
// the site that trained last for its run's checkpoint folder and hands it
// to the winning site's run, before that job goes through its gate.
//
// The stream, both ways: a size line "ddpctl-checkpoint BYTES" (the most the
// tar that follows will be, base/sized_stream.hpp), then the tar of the
// folder's contents. Whoever takes it stops at that bound (with room for
// growth) and at the free space there. What comes in is data: checked whole
// (files, folders, and symbolic links that stay inside it, such as
// `latest -> step-41.pt`; names plain UTF-8 text, relative, no '..'), then
// put in place of the run's checkpoint folder, the one its jobs are given
// (DDPCTL_CHECKPOINT_DIR).
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runs/race_contract.hpp"
#include "runs/run_store.hpp"

namespace ddpctl {


// The most bytes GNU tar writes for the folder's contents (`tar -cf - -C
// FOLDER .`): each entry's header and its data in 512-byte blocks, a long
// name's or link's own header, the end, tar's blocking. Links are not
// followed.
long long checkpoint_tar_bound(const std::string& folder);

// The tar to send after the size line: the folder's contents, or an empty
// archive when it has none.
std::vector<std::string> checkpoint_send_argv(const std::string& folder);

// Reads the stream on `in` (the size line, then at most what it declares
// and room for growth) into the file `tar`: a UserError saying what came
// (nothing, no size line, more than declared, more than the disk has)
// when it is not a stream to take.
void read_checkpoint_stream(std::istream& in, const std::string& tar);

// Takes the archive at `tar` (a file) as the run's checkpoint folder: a
// UserError naming what is refused, and nothing replaced or left behind,
// unless every member is a file, a folder or a link that stays inside, with
// a plain relative name. An earlier, non-empty folder is kept beside it
// (<folder>.before-<time>). Returns {folder, files, bytes, kept}.
nlohmann::json receive_checkpoint(const Run& run, const std::string& tar);

}  // namespace ddpctl
