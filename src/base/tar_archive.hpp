#pragma once
// A tar archive that another host made, read as data: ddpctl reads its
// headers itself (POSIX ustar, GNU's long names, pax records) instead of
// handing it to tar, so that the caller checks every member before anything
// is written (remote_fetch.hpp decides what fetch takes), and only regular
// files and folders are ever written, with no set-id bit, owned by this user.
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
// sane sizes is a `problem`, with the byte offset where it was found.
TarListing read_tar_members(const std::string& path);

// Writes `members` of the archive at `path` under the folder `dest`: each a
// File or a Folder whose name the caller checked (relative, no empty, '.' or
// '..' component, every folder above it a Folder or not a member). Folders
// get 0777 and files 0666, or 0777 where the stored mode has the owner's
// executable bit, less the umask; files keep their modification time. Throws
// UserError naming the file that could not be written.
void unpack_tar_members(const std::string& path, const std::vector<TarMember>& members, const std::string& dest);

}  // namespace ddpctl
