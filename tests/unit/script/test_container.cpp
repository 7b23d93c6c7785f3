// container: reading, resolving against the profile, the job script's words
// per runtime, the checks before the queue, and runtimes' errors in words.
#include <filesystem>
#include <fstream>

#include "catch.hpp"

#include "spec/cluster.hpp"
#include "script/container.hpp"
#include "script/container_script.hpp"
#include "helpers.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

ClusterProfile local_profile(const std::string& extra = "") {
  std::string text = ddpctl::test::run_bash("cat \"$1\"", {ddpctl::test::source_dir() + "/configs/clusters/local.yaml"});
  return parse_cluster_profile("site.yaml", text + extra);
}

ResolvedRun resolve_container(const std::string& yaml, const std::string& profile_extra = "", const std::vector<std::string>& sets = {}) {
  std::string text = "name: r\ncluster: local\npartition: cpu\nnodes: 2\ngpus_per_node: 0\nprocs_per_node: 2\ncommand: [python3, t.py]\n" + yaml;
  return resolve_run(parse_run_spec("/specs/a.yaml", text, sets), local_profile(profile_extra));
}

std::string words_of(const ResolvedRun& run, int gpus = 0) {
  return container_script(*run.container, run.spec, gpus, "", {"MASTER_ADDR", "NCCL_SOCKET_IFNAME"}).words;
}

}  // namespace

TEST_CASE("container: the runtime from the spec or the profile, the image in its runtime's form") {
  ResolvedRun run = resolve_container("container: {runtime: apptainer, image: /img/torch.sif}\n");
  REQUIRE(run.container);
  CHECK(run.container->runtime == ContainerRuntime::Apptainer);
  CHECK(run.container->image == "/img/torch.sif");
  CHECK(run.container->image_is_path);

  // The profile names the site's runtime; the spec only its image.
  run = resolve_container("container: {image: 'docker://nvcr.io/nvidia/pytorch:25.01-py3'}\n", "container: {runtime: pyxis}\n");
  CHECK(run.container->runtime == ContainerRuntime::Pyxis);
  CHECK(run.container->image == "nvcr.io#nvidia/pytorch:25.01-py3");
  run = resolve_container("container: {image: 'nvcr.io#nvidia/pytorch:25.01-py3'}\n", "container: {runtime: apptainer}\n");
  CHECK(run.container->image == "docker://nvcr.io/nvidia/pytorch:25.01-py3");
  run = resolve_container("container: {image: 'ubuntu:24.04', runtime: pyxis}\n");
  CHECK(run.container->image == "ubuntu:24.04");

  // A relative image path is the spec's folder's.
  run = resolve_container("container: {runtime: charliecloud, image: images/torch}\n");
  CHECK(run.container->image == "/specs/images/torch");

  // No image anywhere: no container.
  CHECK_FALSE(resolve_container("", "container: {runtime: apptainer, mounts: [/scratch]}\n").container);
  // The profile's default image, which `container: false` turns off.
  CHECK(resolve_container("", "container: {runtime: apptainer, image: /site/default.sif}\n").container);
  CHECK_FALSE(resolve_container("container: false\n", "container: {runtime: apptainer, image: /site/default.sif}\n").container);
}

TEST_CASE("container: one image per runtime, the profile picks the runtime") {
  std::string spec = "container:\n  image: {apptainer: /i/x.sif, pyxis: /i/x.sqsh}\n";
  CHECK(resolve_container(spec, "container: {runtime: apptainer}\n").container->image == "/i/x.sif");
  CHECK(resolve_container(spec, "container: {runtime: pyxis}\n").container->image == "/i/x.sqsh");
  CHECK(resolve_container(spec, "container: {runtime: apptainer}\n", {"container.runtime=pyxis"}).container->image == "/i/x.sqsh");
  std::string err = user_error_of([&] { resolve_container(spec, "container: {runtime: podman}\n"); });
  CHECK(err.find("container.image: names images for apptainer, pyxis but not for podman, the runtime of cluster local") !=
        std::string::npos);
}

TEST_CASE("container: bad sections are refused at their line") {
  std::string err = user_error_of([] { resolve_container("container: {runtime: docker, image: /x.sif}\n"); });
  INFO(err);
  CHECK(err.find("/specs/a.yaml:8:22: container.runtime: 'docker' is not a runtime ddpctl knows") != std::string::npos);
  err = user_error_of([] { resolve_container("container: {image: /x.sif}\n"); });
  CHECK(err.find("container.runtime: no runtime: set container.runtime here or in the cluster profile local") !=
        std::string::npos);
  err = user_error_of([] { resolve_container("container: {runtime: apptainer}\n"); });
  CHECK(err.find("container.image: no image") != std::string::npos);
  err = user_error_of([] { resolve_container("container: {runtime: charliecloud, image: 'docker://x/y:1'}\n"); });
  CHECK(err.find("Charliecloud runs an image folder or SquashFS file") != std::string::npos);
  err = user_error_of([] { resolve_container("container: {runtime: podman, image: /x.sif}\n"); });
  CHECK(err.find("podman load -i FILE") != std::string::npos);
  err = user_error_of([] { resolve_container("container: {runtime: apptainer, image: /x.sif, mounts: ['/a:b']}\n"); });
  INFO(err);
  CHECK(err.find("container.mounts[0]: '/a:b' needs an absolute target path inside the container") != std::string::npos);
  err = user_error_of([] { resolve_container("container: {runtime: apptainer, image: /x.sif, env: {RANK: '1'}}\n"); });
  CHECK(err.find("container.env: RANK") != std::string::npos);
  err = user_error_of([] { resolve_container("container: {runtime: apptainer, image: /x.sif, wokrdir: /w}\n"); });
  CHECK(err.find("wokrdir") != std::string::npos);
  CHECK(err.find("did you mean 'workdir'") != std::string::npos);
  err = user_error_of([] { resolve_container("container: true\n"); });
  CHECK(err.find("container: true says nothing") != std::string::npos);
}

TEST_CASE("container: the job script's words per runtime") {
  ResolvedRun run = resolve_container(
      "output_dir: /out/logs\ncontainer: {runtime: apptainer, image: /i/x.sif, mounts: ['/data:/data:ro', cache], "
      "env: {OMP_NUM_THREADS: '4'}, options: [--cleanenv]}\n");
  ContainerScript s = container_script(*run.container, run.spec, 4, "/runs/.snapshots/abc", {"MASTER_ADDR"});
  CHECK(s.wraps);
  CHECK(s.words ==
        "apptainer --nocolor exec --nv --bind \"$PWD\" --bind /out/logs --bind /runs/.snapshots/abc --bind /data:/data:ro "
        "--bind \"$PWD\"/cache --pwd \"$PWD\" --cleanenv /i/x.sif");
  CHECK(s.batch_lines.find("export APPTAINERENV_OMP_NUM_THREADS=4\n") != std::string::npos);
  CHECK(s.mkdirs == "/out/logs");
  // --cleanenv would drop ddpctl's variables: they go as APPTAINERENV_.
  CHECK(s.task_lines.find("SLURM_*|DDPCTL_*|RANK|LOCAL_RANK|NODE_RANK|CUDA_VISIBLE_DEVICES|MASTER_ADDR) export "
                          "\"APPTAINERENV_$n=${!n}\"") != std::string::npos);
  CHECK(s.task_lines.find("is not on the PATH of") != std::string::npos);
  CHECK(s.task_lines.find('\'') == std::string::npos);  // it goes inside bash -c '...'
  // No GPUs: no --nv.
  CHECK(words_of(resolve_container("container: {runtime: apptainer, image: /i/x.sif}\n")) ==
        "apptainer --nocolor exec --bind \"$PWD\" --pwd \"$PWD\" /i/x.sif");

  s = container_script(*resolve_container("container: {runtime: pyxis, image: 'docker://nvcr.io/nvidia/pytorch:25.01-py3', "
                                "mounts: ['/data:/data:ro'], workdir: /workspace, env: {A: 'b c'}}\n")
                            .container,
                       run.spec, 4, "", {"MASTER_ADDR", "PYTHONPATH"});
  CHECK_FALSE(s.wraps);
  CHECK(s.words ==
        "--container-image='nvcr.io#nvidia/pytorch:25.01-py3' --container-name=ddpctl_\"$SLURM_JOB_ID\" "
        "--container-mounts=\"$PWD\":\"$PWD\",/out/logs:/out/logs,/data:/data:ro --container-workdir=/workspace "
        "--no-container-mount-home --container-env=MASTER_ADDR,PYTHONPATH");
  CHECK(s.step_env == "A='b c'");
  CHECK(s.task_lines.empty());

  CHECK(words_of(resolve_container("container: {runtime: podman, image: 'docker://docker.io/pytorch/pytorch:2.5'}\n"), 2) ==
        "podman run --rm --network=host --ipc=host --userns=keep-id --device=nvidia.com/gpu=all "
        "--volume=\"$PWD\":\"$PWD\" --env='SLURM_*' --env='DDPCTL_*' --env=RANK --env=LOCAL_RANK --env=NODE_RANK "
        "--env=CUDA_VISIBLE_DEVICES --env=MASTER_ADDR --env=NCCL_SOCKET_IFNAME --workdir=\"$PWD\" "
        "docker://docker.io/pytorch/pytorch:2.5");
  CHECK(words_of(resolve_container("container: {runtime: charliecloud, image: /i/torch, mounts: [/scratch], env: {X: '1'}}\n")) ==
        "ch-run --bind=\"$PWD\" --bind=/scratch --set-env=X=1 --cd=\"$PWD\" /i/torch --");
  CHECK(words_of(resolve_container("container: {runtime: singularity, image: /i/x.sif}\n"), 1).rfind("singularity --nocolor exec --nv", 0) == 0);
}

TEST_CASE("container: checks before the queue") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "ddpctl-test-container";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "x.sif") << "sif";
  std::vector<std::string> warnings;
  Diagnostics d;
  ResolvedRun run = resolve_container("container: {runtime: apptainer, image: " + (dir / "missing.sif").string() + "}\n", "",
                            {});
  check_container(*run.container, 2, false, d, warnings);
  REQUIRE(d.size() >= 1);
  std::string all;
  for (const auto& i : d.items()) all += i.str() + "\n";
  CHECK(all.find("/specs/a.yaml:8:") != std::string::npos);
  CHECK(all.find("container.image: " + (dir / "missing.sif").string() + " does not exist") != std::string::npos);

  // The runtime named by the profile by its path; an image that is there.
  Diagnostics d2;
  run = resolve_container("container: {runtime: apptainer, image: " + (dir / "x.sif").string() + ", mounts: [/no/such/dir]}\n",
                "container: {program: /bin/true}\n");
  check_container(*run.container, 1, false, d2, warnings);
  REQUIRE(d2.size() == 1);
  CHECK(d2.items()[0].str().find("container.mounts: /no/such/dir: the source /no/such/dir does not exist here") !=
        std::string::npos);

  // A runtime that is not here; the profile's path is the nodes' (not checked), and modules may bring it.
  Diagnostics d3;
  run = resolve_container("container: {runtime: apptainer, image: " + (dir / "x.sif").string() + ", program: /no/such/apptainer}\n");
  check_container(*run.container, 1, false, d3, warnings);
  REQUIRE(d3.size() == 1);
  CHECK(d3.items()[0].str().find("/no/such/apptainer (the apptainer runtime) is not here") != std::string::npos);
  Diagnostics d5;
  check_container(*run.container, 1, true, d5, warnings);
  CHECK(d5.empty());
  run = resolve_container("container: {runtime: apptainer, image: " + (dir / "x.sif").string() + "}\n",
                "container: {program: /no/such/apptainer}\n");
  check_container(*run.container, 1, false, d5, warnings);
  CHECK(d5.empty());

  // A registry image on several nodes: allowed, with the cost said.
  Diagnostics d4;
  warnings.clear();
  run = resolve_container("container: {runtime: pyxis, image: 'docker://nvcr.io/nvidia/pytorch:25.01-py3'}\n");
  check_container(*run.container, 2, false, d4, warnings);
  CHECK(d4.empty());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("each of the 2 nodes imports it when the job starts") != std::string::npos);
  CHECK(warnings[0].find("ddpctl container import SPEC") != std::string::npos);
  CHECK(import_command(*run.container, "/shared/x.sqsh") ==
        std::vector<std::string>{"enroot", "import", "--output", "/shared/x.sqsh", "docker://nvcr.io#nvidia/pytorch:25.01-py3"});
  CHECK(default_import_path(*run.container, "/shared") == "/shared/nvcr.io+nvidia+pytorch+25.01-py3.sqsh");
  fs::remove_all(dir);
}

TEST_CASE("container: folders ddpctl binds itself may not hold the runtime's list separators") {
  // Apptainer's --bind and Pyxis's --container-mounts split at ',' and ':'
  // without quoting: this trainer.data bound the host's /root at /mnt.
  std::string err = user_error_of([] {
    resolve_run(parse_run_spec("/specs/a.yaml",
                               "name: r\ncluster: local\npartition: cpu\ngpus_per_node: 0\nprocs_per_node: 2\n"
                               "trainer: {data: '/x/d,/root:/mnt', checkpoint_dir: '/ck:pt'}\n"
                               "output_dir: '/o,ut'\n"
                               "container: {runtime: apptainer, image: /i/x.sif}\n"),
                local_profile());
  });
  INFO(err);
  CHECK_THAT(err, Catch::Contains("/specs/a.yaml:6:17: trainer.data: '/x/d,/root:/mnt' is bound into the container, "
                                  "and apptainer splits its list of binds at ',' and ':' (there is no quoting); use a "
                                  "folder whose path has no ',' or ':'"));
  CHECK_THAT(err, Catch::Contains("/specs/a.yaml:6:52: trainer.checkpoint_dir: '/ck:pt' is bound"));
  CHECK_THAT(err, Catch::Contains("/specs/a.yaml:7:13: output_dir: '/o,ut' is bound"));
  // Podman and Charliecloud split at ':' only.
  err = user_error_of([] { resolve_container("output_dir: '/o,ut'\ncontainer: {runtime: podman, image: 'docker://x/y:1'}\n"); });
  CHECK(err.empty());
  err = user_error_of([] { resolve_container("output_dir: '/o:ut'\ncontainer: {runtime: pyxis, image: 'docker://x/y:1'}\n"); });
  CHECK_THAT(err, Catch::Contains("output_dir: '/o:ut' is bound into the container, and pyxis splits"));
  // Inside the submit folder nothing is bound on its own: no list to split.
  CHECK(user_error_of([] { resolve_container("output_dir: 'logs,x'\ncontainer: {runtime: apptainer, image: /i/x.sif}\n"); }).empty());
}

TEST_CASE("container: container.env reaches Apptainer whole, commas and '=' included") {
  // --env=NAME=VALUE is a comma-separated list to Apptainer: CX set
  // DDPCTL_PROGRAM, a name container.env refuses, and XLA_FLAGS was cut.
  ResolvedRun run = resolve_container(
      "container: {runtime: apptainer, image: /i/x.sif, env: {CX: 'a,DDPCTL_PROGRAM=/x/evil', XLA_FLAGS: '--a=1,--b=2', "
      "Q: \"it's\"}}\n");
  ContainerScript s = container_script(*run.container, run.spec, 0, "", {});
  CHECK(s.words.find("--env") == std::string::npos);
  CHECK(s.batch_lines ==
        "# container.env, inside the container only (APPTAINERENV_NAME is NAME there)\n"
        "export APPTAINERENV_CX=a,DDPCTL_PROGRAM=/x/evil\n"
        "export APPTAINERENV_XLA_FLAGS=--a=1,--b=2\n"
        "export APPTAINERENV_Q='it'\\''s'\n");
  // What bash makes of those lines is what the container gets.
  std::string out = test::run_bash(s.batch_lines + "printf '%s|' \"$APPTAINERENV_CX\" \"$APPTAINERENV_XLA_FLAGS\" \"$APPTAINERENV_Q\"");
  CHECK(out == "a,DDPCTL_PROGRAM=/x/evil|--a=1,--b=2|it's|");
  s = container_script(*resolve_container("container: {runtime: singularity, image: /i/x.sif, env: {A: '1'}}\n").container,
                       run.spec, 0, "", {});
  CHECK_THAT(s.batch_lines, Catch::Contains("export SINGULARITYENV_A=1\n"));
}

TEST_CASE("container: restart: in-job restarts run each step in the image, Pyxis's samplers follow the step's nodes") {
  // Apptainer: the restart loop's srun wraps the program as always.
  ResolvedRun run = resolve_container("restart: {in_job: 1, spares: 1}\ncontainer: {runtime: apptainer, image: /i/x.sif}\n");
  std::string text = render_scripts(run, ddpctl::test::source_dir() + "/templates").at(0).text;
  CHECK(text.find("--nodes=\"${#ddpctl_nodes[@]}\" --ntasks=\"$ddpctl_ntasks\"") != std::string::npos);
  CHECK(text.find("\"${ddpctl_container[@]}\" python3 t.py") != std::string::npos);
  // Pyxis: the samplers' own step runs on the training step's nodes, not any of the allocation's (a lost one, a spare).
  run = resolve_container("restart: {in_job: 1, spares: 1}\ncontainer: {runtime: pyxis, image: 'ubuntu:24.04'}\n");
  text = render_scripts(run, ddpctl::test::source_dir() + "/templates").at(0).text;
  CHECK(text.find("srun --overlap --mem=0 --nodes=\"${#ddpctl_nodes[@]}\" --ntasks=\"${#ddpctl_nodes[@]}\" --nodelist=\"$ddpctl_nodelist\" "
                  "--ntasks-per-node=1 --quiet") != std::string::npos);
  run = resolve_container("container: {runtime: pyxis, image: 'ubuntu:24.04'}\n");
  text = render_scripts(run, ddpctl::test::source_dir() + "/templates").at(0).text;
  CHECK(text.find("srun --overlap --mem=0 --nodes=2 --ntasks=2 --ntasks-per-node=1 --quiet") != std::string::npos);
}
