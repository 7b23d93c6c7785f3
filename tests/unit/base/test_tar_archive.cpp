// Reading a tar archive as data: GNU tar's own formats read back whole, and
// an archive cut short or not a tar at all said so, never half-read.
#include "catch.hpp"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include "helpers.hpp"
#include "base/tar_archive.hpp"
#include "tar_fixtures.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

std::string written(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

const TarMember* find(const TarListing& l, const std::string& name) {
  for (const auto& m : l.members)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("tar: GNU tar's archives are read back, long names and pax records included, in every format") {
  test::TempDir dir;
  // Past ustar's 100 bytes of name: GNU's long name, pax's path, ustar's prefix.
  std::string deep = "r1/" + std::string(90, 'a') + "/" + std::string(40, 'b');
  test::run_bash("cd \"$1\" && mkdir -p \"$2\" && printf 12345 >\"$2/f\" && chmod 4750 \"$2/f\" && "
                 "ln -s /etc/passwd r1/link && touch -d @1700000000 \"$2/f\"",
                 {dir.path, deep});
  for (std::string format : {"gnu", "pax", "ustar", "posix"}) {
    INFO(format);
    test::run_bash("cd \"$1\" && tar --format=\"$2\" -cf a.tar r1", {dir.path, format});
    TarListing l = read_tar_members(dir.path + "/a.tar");
    REQUIRE(l.problem.empty());
    const TarMember* f = find(l, deep + "/f");
    REQUIRE(f);
    CHECK(f->type == TarMember::Type::File);
    CHECK(f->size == 5);
    CHECK(f->mode == 04750);
    CHECK(f->mtime == 1700000000);
    const TarMember* top = find(l, "r1");  // a folder's trailing '/' left out
    REQUIRE(top);
    CHECK(top->type == TarMember::Type::Folder);
    const TarMember* link = find(l, "r1/link");
    REQUIRE(link);
    CHECK(link->type == TarMember::Type::SymbolicLink);
    CHECK(describe_tar_type(*link) == "a symbolic link to '/etc/passwd'");
  }
}

TEST_CASE("tar: an archive cut short or not a tar is a problem with where, and no members") {
  test::TempDir dir;
  std::string whole = test::tar_member("r1/a", '0', std::string(1000, 'x')) + test::tar_end();
  auto problem = [&](const std::string& bytes) {
    TarListing l = read_tar_members(written(dir.path + "/t.tar", bytes));
    CHECK(l.members.empty() != l.problem.empty());
    return l.problem;
  };
  CHECK(problem(whole).empty());
  CHECK(read_tar_members(written(dir.path + "/t.tar", whole)).members.size() == 1);
  CHECK(problem(whole.substr(0, 1024)) == "cut short in the data of 'r1/a' (at byte 0)");
  CHECK(problem(whole.substr(0, 1536)) == "cut short: it ends without tar's end-of-archive blocks (at byte 1536)");
  CHECK(problem(whole.substr(0, 300)) == "cut short in a header (at byte 0)");
  CHECK(problem("") == "cut short: it ends without tar's end-of-archive blocks (at byte 0)");
  CHECK(problem(std::string(2048, 'x')) == "not a tar header (its checksum is wrong) (at byte 0)");
  std::string bad = whole;
  bad[10] = 'z';  // a name changed after the checksum was taken
  CHECK(problem(bad) == "not a tar header (its checksum is wrong) (at byte 0)");
  // A size that says more than there is, however large.
  CHECK(problem(test::tar_member("r1/a", '0', "x", 0644, "", 077777777777) + test::tar_end()) ==
        "cut short in the data of 'r1/a' (at byte 0)");
  CHECK(problem(test::tar_member("r1/a", '0', "", 0644, "", 0) + test::tar_member("x", 'x', "9 path=\n") +
                test::tar_end())
            .find("a malformed pax header") == 0);
}

TEST_CASE("tar: GNU's base-256 numbers are read") {
  test::TempDir dir;
  std::string m = test::tar_member("r1/a", '0', "hello");
  // The size as base-256 (its first byte's top bit), the checksum again.
  std::string size(12, '\0');
  size[0] = static_cast<char>(0x80);
  size[11] = 5;
  m.replace(124, 12, size);
  m.replace(148, 8, "        ");
  unsigned sum = 0;
  for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(m[i]);
  m.replace(148, 8, fmt::format("{:06o}", sum) + std::string(1, '\0') + " ");
  TarListing l = read_tar_members(written(dir.path + "/t.tar", m + test::tar_end()));
  REQUIRE(l.problem.empty());
  REQUIRE(l.members.size() == 1);
  CHECK(l.members[0].size == 5);
}

TEST_CASE("tar: unpacking writes files, folders and links, executable or not, with no set-id or sticky bit") {
  test::TempDir dir;
  std::string tar = written(dir.path + "/t.tar", test::tar_member("r1/", '5', "", 07777) +
                                                     test::tar_member("r1/tool", '0', "#!/bin/sh\n", 06755) +
                                                     test::tar_member("r1/sub/data", '0', "d", 01666) + test::tar_end());
  TarListing l = read_tar_members(tar);
  REQUIRE(l.problem.empty());
  mode_t old = ::umask(022);
  unpack_tar_members(tar, l.members, dir.path + "/out");
  ::umask(old);
  struct stat st {};
  REQUIRE(::stat((dir.path + "/out/r1").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  REQUIRE(::stat((dir.path + "/out/r1/tool").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  CHECK(st.st_mtime == 014712345670);
  REQUIRE(::stat((dir.path + "/out/r1/sub/data").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  std::ifstream in(dir.path + "/out/r1/tool");
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "#!/bin/sh\n");
  std::vector<TarMember> device = {TarMember{TarMember::Type::CharDevice, '3', "r1/d", "", 0666, 0, 0, 0}};
  CHECK_THROWS_AS(unpack_tar_members(tar, device, dir.path + "/out"), std::logic_error);
  CHECK_FALSE(fs::exists(fs::symlink_status(dir.path + "/out/r1/d")));
  // A link (its target checked by the caller, tar_link_problem) is made as
  // a link, after the files: nothing of the archive is written through it.
  std::vector<TarMember> link = {TarMember{TarMember::Type::SymbolicLink, '2', "r1/latest", "tool", 0777, 0, 0, 0}};
  unpack_tar_members(tar, link, dir.path + "/out");
  CHECK(fs::read_symlink(dir.path + "/out/r1/latest") == "tool");
}

TEST_CASE("tar: a link stays inside the folder it is unpacked in, or is said to leave it") {
  auto link = [](const std::string& name, const std::string& target) {
    return TarMember{TarMember::Type::SymbolicLink, '2', name, target, 0777, 0, 0, 0};
  };
  CHECK_FALSE(tar_link_problem(link("latest", "step-41.pt")));
  CHECK_FALSE(tar_link_problem(link("sub/latest", "../step-41.pt")));
  CHECK_FALSE(tar_link_problem(link("a/b/c", "../../x/./y")));
  CHECK(tar_link_problem(link("latest", "../step-41.pt")) == "a symbolic link out of the folder ('../step-41.pt')");
  CHECK(tar_link_problem(link("a/l", "../../x")) == "a symbolic link out of the folder ('../../x')");
  CHECK(tar_link_problem(link("l", "/etc/passwd")) == "a symbolic link to an absolute path ('/etc/passwd')");
  CHECK(tar_link_problem(link("l", "")) == "a symbolic link to nothing");
  CHECK(tar_link_problem(link("l", ".")) == "a symbolic link to the folder itself ('.')");
  CHECK(tar_link_problem(link("l", "a\x1b[2J")).value().find("not plain text") != std::string::npos);
  CHECK(tar_name_problem("r1/\xff") == "a name that is not UTF-8");
  CHECK(tar_name_problem("r1/a\x1b" "b") == "a name with a control character");
  CHECK(tar_name_problem("r1/../x") == "a name with a '..' component");
  CHECK_FALSE(tar_name_problem("r1/lr=0.1,seed=2/x"));
}
