#include "script/container.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

#include "base/paths.hpp"
#include "base/shell.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {


// A file or folder rather than a registry reference: an absolute or ./
// path, or a name with an image file's extension.
bool looks_like_path(const std::string& image) {
  if (image.rfind('/', 0) == 0 || image.rfind("./", 0) == 0 || image.rfind("../", 0) == 0) return true;
  if (image.find("://") != std::string::npos || image.find('#') != std::string::npos) return false;
  for (const char* ext : {".sif", ".simg", ".sqsh", ".sqfs", ".squashfs", ".img"})
    if (ends_with(image, ext)) return true;
  return false;
}

struct Reference {
  std::string registry;  // "" : Docker Hub
  std::string path;      // name:tag or name@digest
};

// docker://REGISTRY/NAME:TAG, Pyxis's REGISTRY#NAME:TAG, or a bare NAME:TAG.
std::optional<Reference> parse_reference(const std::string& image) {
  std::string rest = image;
  if (rest.rfind("docker://", 0) == 0) rest = rest.substr(9);
  else if (rest.find("://") != std::string::npos) return std::nullopt;  // oras://, library://: Apptainer's own
  Reference r;
  if (auto hash = rest.find('#'); hash != std::string::npos) {
    r.registry = rest.substr(0, hash);
    r.path = rest.substr(hash + 1);
  } else {
    auto slash = rest.find('/');
    std::string first = slash == std::string::npos ? "" : rest.substr(0, slash);
    // The first part names a registry when it looks like a host (nvcr.io, localhost:5000).
    if (!first.empty() && (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
                           first == "localhost")) {
      r.registry = first;
      r.path = rest.substr(slash + 1);
    } else {
      r.path = rest;
    }
  }
  if (r.path.empty()) return std::nullopt;
  return r;
}

std::string docker_form(const Reference& r) { return "docker://" + (r.registry.empty() ? "" : r.registry + "/") + r.path; }

// The folders ddpctl binds itself (the submit folder, and output_dir,
// trainer.data and trainer.checkpoint_dir where they are outside it) go into
// the runtimes' bind lists, which have no quoting: Apptainer's --bind and
// Pyxis's --container-mounts split at ',' and ':' ("/x/d,/root:/mnt" would
// bind the host's /root), Podman's --volume and ch-run's --bind at ':'.
// Refused at the field's line.
void check_bound_folders(const ResolvedContainer& c, const RunSpec& spec, const Location& container_at,
                         Diagnostics& diags) {
  bool commas = c.runtime == ContainerRuntime::Apptainer || c.runtime == ContainerRuntime::Singularity ||
                c.runtime == ContainerRuntime::Pyxis;
  const char* separators = commas ? ",:" : ":";
  auto problem = [&](const std::string& path) -> std::optional<std::string> {
    if (path.find_first_of(separators) == std::string::npos) return std::nullopt;
    return fmt::format("{} is bound into the container, and {} splits its list of binds at {} (there is no quoting); "
                       "use a folder whose path has no {}",
                       printable(path, 200), runtime_name(c.runtime), commas ? "',' and ':'" : "':'",
                       commas ? "',' or ':'" : "':'");
  };
  if (auto p = problem(fs::current_path().string()))
    diags.error(container_at, "container", "the submit folder " + *p + " to submit from");
  auto check = [&](const std::string& field, const std::string& path) {
    if (path.empty() || outside_submit_folder(path).empty()) return;
    if (auto p = problem(path)) diags.error(spec.where_of(field), field, *p);
  };
  check("output_dir", spec.output_dir);
  if (spec.trainer_data && *spec.trainer_data != "synthetic") check("trainer.data", *spec.trainer_data);
  for (const auto& a : spec.trainer_args)
    if (a.rfind("--checkpoint-dir=", 0) == 0) check("trainer.checkpoint_dir", a.substr(17));
}

}  // namespace

// Where a folder the job uses is, for a bind: "" when it is under the submit
// folder (bound already), else its absolute path.
std::string outside_submit_folder(const std::string& path) {
  if (path.empty()) return "";
  fs::path p(path);
  if (p.is_relative()) {
    std::string norm = p.lexically_normal().string();
    return norm.rfind("..", 0) == 0 ? (fs::current_path() / p).lexically_normal().string() : "";
  }
  return p.lexically_normal().string();
}

namespace {

// Where a field of the container was written: the spec's line, else the
// profile's, else the spec's `container:`.
Location field_where(const RunSpec& spec, const ClusterProfile& profile, const std::string& field) {
  const ContainerSettings& s = spec.container;
  const ContainerSettings& site = profile.container;
  auto it = s.where.find(field);
  if (it != s.where.end()) return it->second;
  it = site.where.find(field);
  if (it != site.where.end()) return it->second;
  return spec.where_of("container");
}

// The image as written, into c.image_written: this runtime's own where one
// is named per runtime, the spec's before the profile's. A spec that names
// images per runtime but not this one's falls back only to the profile's
// image for this runtime. False when there is none (said in `diags`).
bool choose_image(ResolvedContainer& c, const RunSpec& spec, const ClusterProfile& profile, Diagnostics& diags) {
  const ContainerSettings& s = spec.container;
  const ContainerSettings& site = profile.container;
  auto own = [&](const ContainerSettings& x) -> const std::string* {
    auto it = x.images.find(c.runtime);
    return it == x.images.end() ? nullptr : &it->second;
  };
  if (const std::string* i = own(s)) {
    c.image_written = *i;
  } else if (!s.image.empty()) {
    c.image_written = s.image;
  } else if (const std::string* j = own(site)) {
    c.image_written = *j;
  } else if (!s.images.empty()) {
    std::vector<std::string> named;
    for (const auto& [r, img] : s.images) named.push_back(runtime_name(r));
    diags.error(field_where(spec, profile, "container.image"), "container.image",
                fmt::format("names images for {} but not for {}, the runtime of {}", join(named, ", "),
                            runtime_name(c.runtime), s.runtime ? "this spec" : "cluster " + profile.name));
    return false;
  } else {
    c.image_written = site.image;
  }
  if (c.image_written.empty()) {
    diags.error(field_where(spec, profile, "container.image"), "container.image",
                fmt::format("no image for runtime {}", runtime_name(c.runtime)));
    return false;
  }
  return true;
}

// c.image: the image written in the form its runtime takes (a path made
// absolute from the spec's folder, or a reference), or a problem at c.where.
void read_image(ResolvedContainer& c, const RunSpec& spec, Diagnostics& diags) {
  const std::string& img = c.image_written;
  auto bad = [&](const std::string& why) {
    diags.error(c.where, c.field, fmt::format("{}: {}", printable(img), why));
  };
  // Charliecloud runs only files and folders: a plain name is one of those.
  bool charliecloud_path = c.runtime == ContainerRuntime::Charliecloud && img.find("://") == std::string::npos &&
                           img.find('#') == std::string::npos;
  if (looks_like_path(img) || charliecloud_path) {
    c.image_is_path = true;
    fs::path p(img);
    // Relative to the spec's folder, where the user keeps it beside the spec.
    if (p.is_relative()) p = fs::absolute(fs::path(spec.file).parent_path() / p).lexically_normal();
    c.image = p.string();
    if (c.runtime == ContainerRuntime::Podman)
      bad("Podman runs images from its store or a registry; `podman load -i FILE` it first and name it, or give "
          "docker://REGISTRY/NAME:TAG");
  } else if (img.find("://") != std::string::npos && img.rfind("docker://", 0) != 0) {
    // oras://, library://, shub://: only Apptainer and Singularity pull these.
    if (c.runtime == ContainerRuntime::Apptainer || c.runtime == ContainerRuntime::Singularity) c.image = img;
    else bad(fmt::format("{} cannot run this kind of reference; give docker://REGISTRY/NAME:TAG or a path",
                         runtime_name(c.runtime)));
  } else if (auto ref = parse_reference(img)) {
    switch (c.runtime) {
      case ContainerRuntime::Apptainer:
      case ContainerRuntime::Singularity:
      case ContainerRuntime::Podman:
        c.image = docker_form(*ref);
        break;
      case ContainerRuntime::Pyxis:
        c.image = ref->registry.empty() ? ref->path : ref->registry + "#" + ref->path;
        break;
      case ContainerRuntime::Charliecloud:
        bad("Charliecloud runs an image folder or SquashFS file; pull it first (ch-image pull, ch-convert) and "
            "name the folder or file");
        break;
    }
  } else {
    bad("is neither a path nor a registry reference (docker://REGISTRY/NAME:TAG)");
  }
}

// c.program: the runtime's command, unless the spec or the profile names it.
void choose_program(ResolvedContainer& c, const RunSpec& spec, const ClusterProfile& profile, Diagnostics& diags) {
  const ContainerSettings& s = spec.container;
  const ContainerSettings& site = profile.container;
  switch (c.runtime) {
    case ContainerRuntime::Apptainer: c.program = "apptainer"; break;
    case ContainerRuntime::Singularity: c.program = "singularity"; break;
    case ContainerRuntime::Podman: c.program = "podman"; break;
    case ContainerRuntime::Charliecloud: c.program = "ch-run"; break;
    case ContainerRuntime::Pyxis: c.program = ""; break;
  }
  if (!s.program.empty()) c.program = s.program;
  else if (!site.program.empty()) c.program = site.program, c.program_named = true;
  if (c.runtime == ContainerRuntime::Pyxis && (!s.program.empty() || !site.program.empty()))
    diags.error(field_where(spec, profile, "container.program"), "container.program",
                "Pyxis is srun's plugin (srun --container-image): there is no program to name");
}

}  // namespace

std::optional<ResolvedContainer> resolve_container(const RunSpec& spec, const ClusterProfile& profile,
                                                   Diagnostics& diags) {
  const ContainerSettings& s = spec.container;
  const ContainerSettings& site = profile.container;
  if (s.off) return std::nullopt;
  auto where = [&](const std::string& field) { return field_where(spec, profile, field); };
  std::optional<ContainerRuntime> runtime = s.runtime ? s.runtime : site.runtime;
  bool spec_image = !s.image.empty() || !s.images.empty();
  bool site_image = !site.image.empty() || !site.images.empty();
  if (!spec_image && !site_image) {
    if (s.present)
      diags.error(where("container"), "container.image",
                  fmt::format("no image: name the image the program runs in{}",
                              runtime ? fmt::format(" (a {} image)", runtime_name(*runtime)) : ""));
    return std::nullopt;
  }
  if (!runtime) {
    diags.error(where("container"), "container.runtime",
                fmt::format("no runtime: set container.runtime here or in the cluster profile {} ({})",
                            profile.name, join(runtime_names(), ", ")));
    return std::nullopt;
  }
  ResolvedContainer c;
  c.runtime = *runtime;
  c.runtime_where = where("container.runtime");
  if (!choose_image(c, spec, profile, diags)) return std::nullopt;
  c.where = where("container.image");
  c.field = "container.image";
  read_image(c, spec, diags);
  choose_program(c, spec, profile, diags);
  c.mounts = site.mounts;
  c.mounts.insert(c.mounts.end(), s.mounts.begin(), s.mounts.end());
  for (const auto& m : c.mounts)
    if (c.runtime == ContainerRuntime::Charliecloud && split(m, ':').size() > 2)
      diags.error(where("container.mounts"), "container.mounts",
                  fmt::format("{}: Charliecloud's binds (ch-run -b) have no ro/rw flag", m));
  c.workdir = !s.workdir.empty() ? s.workdir : site.workdir;
  c.env = site.env;
  for (const auto& kv : s.env) {
    auto it = std::find_if(c.env.begin(), c.env.end(), [&](const auto& e) { return e.first == kv.first; });
    if (it != c.env.end()) it->second = kv.second;
    else c.env.push_back(kv);
  }
  c.options = site.options;
  c.options.insert(c.options.end(), s.options.begin(), s.options.end());
  check_bound_folders(c, spec, where("container"), diags);
  return c;
}

void check_container(const ResolvedContainer& c, int max_nodes, bool path_changes, Diagnostics& diags,
                     std::vector<std::string>& warnings) {
  if (c.runtime == ContainerRuntime::Pyxis) {
    // Checked against srun (check_pyxis in preflight.cpp): Pyxis is a plugin of the cluster's.
  } else if (!c.program_named && !path_changes && find_program(c.program).empty()) {
    diags.error(c.runtime_where, "container.runtime",
                fmt::format("{} (the {} runtime) is not {}here; install or load it (modules do not reach this "
                            "check), or name its path on the nodes as container.program in the cluster profile",
                            c.program, runtime_name(c.runtime), c.program.find('/') == std::string::npos ? "on PATH " : ""));
  }
  std::error_code ec;
  if (c.image_is_path) {
    fs::file_status st = fs::status(c.image, ec);
    if (!fs::exists(st)) {
      diags.error(c.where, c.field,
                  fmt::format("{} does not exist{}; the job would fail at start, after its wait in the queue "
                              "(the nodes must see the same path; --no-preflight submits anyway)",
                              c.image, c.image == c.image_written ? "" : " (" + c.image_written + " from the spec's folder)"));
    } else if (::access(c.image.c_str(), R_OK) != 0) {
      diags.error(c.where, c.field, fmt::format("{} is not readable here", c.image));
    } else if (fs::is_directory(st) && c.runtime == ContainerRuntime::Pyxis) {
      diags.error(c.where, c.field, fmt::format("{} is a folder; Pyxis runs a SquashFS file (enroot import) or a registry image", c.image));
    }
  } else if (max_nodes > 1 && (c.runtime == ContainerRuntime::Pyxis || c.runtime == ContainerRuntime::Apptainer ||
                               c.runtime == ContainerRuntime::Singularity || c.runtime == ContainerRuntime::Podman)) {
    warnings.push_back(fmt::format(
        "{}: {} is a registry image: each of the {} nodes imports it when the job starts (minutes for a large image, "
        "the same on every requeue). Import it once to the shared file system: ddpctl container import SPEC, then "
        "set container.image to the file it writes",
        c.where.str(), c.image_written, max_nodes));
  }
  for (const auto& m : c.mounts) {
    std::string src = split(m, ':')[0];
    if (!fs::exists(src, ec))
      diags.error(c.where.file.empty() ? c.runtime_where : c.where, "container.mounts",
                  fmt::format("{}: the source {} does not exist here; the runtime would refuse to start the "
                              "container on the nodes",
                              m, src));
  }
}

std::vector<std::string> import_command(const ResolvedContainer& c, const std::string& output) {
  if (c.image_is_path) return {};
  switch (c.runtime) {
    case ContainerRuntime::Pyxis:
      // enroot's own reference form is Pyxis's behind docker://.
      return {"enroot", "import", "--output", output, "docker://" + c.image};
    case ContainerRuntime::Apptainer:
    case ContainerRuntime::Singularity:
      return {c.program, "pull", output, c.image};
    default:
      return {};
  }
}

std::string default_import_path(const ResolvedContainer& c, const std::string& folder) {
  std::string name = c.image;
  for (const char* scheme : {"docker://", "oras://", "library://"})
    if (name.rfind(scheme, 0) == 0) name = name.substr(std::string(scheme).size());
  for (char& ch : name)
    if (ch == '/' || ch == ':' || ch == '#' || ch == '@') ch = '+';
  bool squash = c.runtime == ContainerRuntime::Pyxis;
  return (fs::path(folder) / (name + (squash ? ".sqsh" : ".sif"))).string();
}

}  // namespace ddpctl
