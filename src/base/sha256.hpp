#pragma once
// SHA-256 (FIPS 180-4) of bytes and of a file, as lowercase hex: the
// checksum the portable build is sent with to a login host, where
// `sha256sum` checks it (remote_install.hpp). Small enough to carry rather
// than link a crypto library into the static ddpctl.
#include <string>

namespace ddpctl {

std::string sha256_hex(const std::string& bytes);
// Reads the file in blocks; throws UserError naming it when it cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace ddpctl
