#pragma once
// Random tokens: a submission's token (the job's --comment carries it, so a
// lost sbatch answer can be found again, ledger.hpp), and the unique parts of
// run ids and temporary names.
#include <string>

namespace ddpctl {

// 12 lowercase hex characters from the kernel's random source.
std::string new_token();

}  // namespace ddpctl
