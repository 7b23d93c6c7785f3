#pragma once
// A tar archive that another host made, read as data: ddpctl reads its
// headers itself (POSIX ustar, GNU's long names, pax records) instead of
// handing it to tar, so that the caller checks every member before anything
// is written (remote_fetch.hpp decides what fetch takes), and only regular
// files and folders are ever written, with no set-id bit, owned by this user.
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

struct TarMember {
  enum class Type { File, Folder, HardLink, SymbolicLink, CharDevice, BlockDevice, Fifo, Other };
  Type type = Type::Other;
  char flag = '0';      // the header's type flag (what an Other is)
  std::string name;     // as stored: pax path, GNU long name or ustar prefix/name; a folder's trailing '/' removed
  std::string link;     // a link's target
  unsigned mode = 0;    // the permission bits stored, set-id and sticky included
  long long size = 0;   // a File's bytes
  long long mtime = 0;  // seconds since the epoch
  long long offset = 0; // where a File's bytes start in the archive
};

// "a symbolic link to 'x'", "a character device", "a folder", ...
std::string describe_tar_type(const TarMember& m);

struct TarListing {
  std::vector<TarMember> members;  // in the archive's order
  std::string problem;             // why it is not a whole tar archive ("" when it is)
};
// The members of the tar archive in the file `path`. An archive cut short
// (in a header, in a member's data, or before tar's end-of-archive blocks),
// a header whose checksum or numbers are wrong, or a name or pax record past
// sane sizes is a `problem`, with the byte offset where it was found. The
// archive starts `start` bytes into the file (after a size line).
TarListing read_tar_members(const std::string& path, long long start = 0);

// Why a member's name is not one to write under a folder here, if it is not:
// empty, absolute, over 4096 bytes, not UTF-8, with a control character, or
// with an empty, '.' or '..' component.
std::optional<std::string> tar_name_problem(const std::string& name);

// Why the symbolic link `m` would point outside the folder it is unpacked
// in, if it would: its target absolute, empty, not plain text, or leading
// above the folder from where the link stands.
std::optional<std::string> tar_link_problem(const TarMember& m);

// Writes `members` of the archive at `path` under the folder `dest`: each a
// File, a Folder or a SymbolicLink whose name the caller checked
// (tar_name_problem; every folder above it a Folder or not a member, never a
// link) and, for a link, its target (tar_link_problem). Folders get 0777 and
// files 0666, or 0777 where the stored mode has the owner's executable bit,
// less the umask; files keep their modification time. Links are made last,
// so that nothing is written through one. Throws UserError naming the file
// that could not be written, as `what` ("the fetched file") says it.
void unpack_tar_members(const std::string& path, const std::vector<TarMember>& members, const std::string& dest,
                        const std::string& what = "the fetched file");

}  // namespace ddpctl
