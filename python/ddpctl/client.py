"""ddpctl from Python (docs/python.md).

The client runs the ``ddpctl`` binary and reads only what it publishes for
programs: each command's versioned JSON document (``--json=1``) and the
run's event stream (``ddpctl events``), never its sentences. Errors are
:class:`DdpctlError` with what the error envelope says (file, line, field).
On first use it reads ``ddpctl --version --json`` and refuses a binary that
does not write the document majors this package reads.
"""
import asyncio
import json
import os
import shutil
import subprocess
import tempfile

from .errors import DdpctlError, IncompatibleBinary

# The document kinds this package reads, each with the major it reads.
SPOKEN = {
    "version": 1,
    "error": 1,
    "submit": 1,
    "race": 1,
    "sweep": 1,
    "status": 1,
    "cancel": 1,
    "report": 1,
    "logs": 1,
    "event": 1,
    "gen": 1,
    "plan": 1,
}

# Slurm's states a job does not leave (status's rows, docs/json.md).
ENDED = {
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
    "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED",
}


def _set_words(values):
    """--set KEY=VALUE words: strings as they are, the rest as JSON (YAML reads it)."""
    words = []
    for key, value in (values or {}).items():
        text = value if isinstance(value, str) else json.dumps(value)
        words += ["--set", f"{key}={text}"]
    return words


class Client:
    """Where ddpctl runs: here, or on a login host (``on=``, over your ssh).

    ``runs``: the folder of run records here (default: ``$DDPCTL_RUNS`` or
    ./runs); ``remote_dir``: with ``on=``, the folder there whose runs/ holds
    the runs. ``binary``: the ddpctl to run (default: ``$DDPCTL``, then
    ``ddpctl`` on PATH). ``on_document``: called with every document read
    (a test checks them against the schemas).
    """

    def __init__(self, on=None, remote_dir=None, runs=None, binary=None, env=None, on_document=None):
        self.binary = binary or os.environ.get("DDPCTL") or shutil.which("ddpctl")
        if not self.binary:
            raise FileNotFoundError("no ddpctl binary: pass binary=, set $DDPCTL, or put ddpctl on PATH")
        self.on = on
        self.remote_dir = remote_dir
        self.runs = runs
        self.env = dict(os.environ if env is None else env)
        if runs:
            self.env["DDPCTL_RUNS"] = os.path.abspath(runs)
        self.on_document = on_document
        self._version = None

    # -- running ddpctl ---------------------------------------------------
    def _where(self):
        words = []
        if self.on:
            words += ["--on", self.on]
            if self.remote_dir:
                words += ["--remote-dir", self.remote_dir]
        return words

    def _read(self, argv, proc):
        try:
            doc = json.loads(proc.stdout) if proc.stdout.strip() else None
        except json.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str):
            raise DdpctlError(argv, proc.returncode, None, proc.stderr or proc.stdout)
        if self.on_document:
            self.on_document(doc)
        if proc.returncode != 0 or doc["schema"].startswith("ddpctl.error/"):
            raise DdpctlError(argv, proc.returncode, doc, proc.stderr)
        kind, _, major = doc["schema"][len("ddpctl."):].partition("/")
        if kind in SPOKEN and SPOKEN[kind] != int(major or 0):
            raise IncompatibleBinary(argv, f"{self.binary} wrote a {doc['schema']} document; this package reads "
                                           f"{kind}/{SPOKEN.get(kind)}")
        return doc

    def call(self, *words):
        """Runs ``ddpctl WORDS --json=1`` (where this client runs it); its document."""
        self.version()
        argv = [self.binary, *words, *self._where(), "--json=1"]
        proc = subprocess.run(argv, capture_output=True, text=True, env=self.env)
        return self._read(argv, proc)

    def version(self):
        """The binary's version document; IncompatibleBinary when it does not
        write the document majors this package reads (said with the fix)."""
        if self._version is None:
            argv = [self.binary, "--version", "--json"]
            proc = subprocess.run(argv, capture_output=True, text=True, env=self.env)
            try:
                doc = json.loads(proc.stdout)
            except json.JSONDecodeError:
                raise IncompatibleBinary(argv, f"{self.binary} --version --json printed no JSON: it is older than "
                                               "the JSON documents; install a ddpctl of this package's release")
            written = doc.get("documents") or {}
            missing = [f"{k}/{m}" for k, m in SPOKEN.items() if m not in (written.get(k) or [])]
            if missing:
                raise IncompatibleBinary(argv, f"{self.binary} (ddpctl {doc.get('version', '?')}) does not write "
                                               f"{', '.join(missing)}, which this package reads: install the ddpctl "
                                               "package of this package's release, or this package from the ddpctl "
                                               "tree the binary was built from (pip install ./python)")
            if self.on_document:
                self.on_document(doc)
            self._version = doc
        return self._version

    # -- submitting -------------------------------------------------------
    def _spec_words(self, verb, spec, set, options):
        words = [verb]
        tmp = None
        if isinstance(spec, dict):
            # JSON is YAML: the spec written as the user's file would be.
            tmp = tempfile.TemporaryDirectory(prefix="ddpctl-spec-")
            path = os.path.join(tmp.name, f"{spec.get('name', 'run')}.yaml")
            with open(path, "w") as f:
                json.dump(spec, f, indent=2)
            words.append(path)
        else:
            words.append(os.fspath(spec))
        words += _set_words(set)
        for key, value in options.items():
            flag = "--" + key.replace("_", "-")
            if value is True:
                words.append(flag)
            elif value is not None and value is not False:  # 0 is a value (0 == False)
                words += [flag, str(value)]
        return words, tmp

    def _submitted(self, verb, spec, set, options, cls):
        words, tmp = self._spec_words(verb, spec, set, options)
        try:
            doc = self.call(*words)
        finally:
            if tmp:
                tmp.cleanup()
        return cls(self, doc["run"], doc)

    def submit(self, spec, set=None, **options):
        """Submits a run spec (a path, or a dict of the spec's fields); its Run.

        ``set``: {"trainer.lr": 0.1, ...} as ``--set``; other keyword
        options are the command's flags (``no_preflight=True``).
        """
        return self._submitted("submit", spec, set, options, Run)

    def race(self, spec, set=None, **options):
        """Races the spec's shapes (its alternatives): the first to start trains."""
        return self._submitted("race", spec, set, options, Run)

    def sweep(self, spec, set=None, **options):
        """A grid's sweep (the spec's grid:); its Sweep."""
        return self._submitted("sweep", spec, set, options, Sweep)

    def run(self, run_id):
        """The run ``run_id`` (a name or id), again: a notebook whose kernel
        died gets its run back. DdpctlError when there is no such run."""
        rows = self.call("status", run_id)["rows"]
        return Run(self, rows[0]["run"] if rows else run_id)


class Run:
    """One run of ddpctl (its id), and what can be asked of it."""

    def __init__(self, client, run_id, document=None):
        self.client = client
        self.id = run_id
        self.document = document or {}

    def __repr__(self):
        return f"Run({self.id!r})"

    @property
    def jobs(self):
        """The jobs its submission made (the submit document's jobs)."""
        return list(self.document.get("jobs") or [])

    def status(self):
        """Its status rows (``status RUN --json``), one per job, cell or site."""
        return self.client.call("status", self.id)["rows"]

    def cancel(self):
        return self.client.call("cancel", self.id)

    def result(self):
        """The report's document: metrics, throughput, GPU-hours, checkpoint, code."""
        return self.client.call("report", self.id)

    def logs(self, rank=None, shape=None, cell=None):
        words = ["logs", self.id]
        for flag, value in (("--rank", rank), ("--shape", shape), ("--cell", cell)):
            if value is not None:
                words += [flag, str(value)]
        return self.client.call(*words)

    # -- events -----------------------------------------------------------
    def _events_argv(self, follow, since, types, timeout, heartbeat):
        argv = [self.client.binary, "events", self.id]
        if follow:
            argv.append("--follow")
            if timeout is not None:
                argv += ["--for", str(max(1, int(timeout + 0.999)))]
            if heartbeat is not None:
                argv += ["--heartbeat", str(heartbeat)]
        if since:
            argv += ["--since", since]
        if types:
            argv += ["--types", ",".join(types)]
        return argv + self.client._where()

    def events(self, follow=False, since=None, types=None, timeout=None, heartbeat=None):
        """Its events (docs/json.md "Events"), each a dict, in order.

        ``follow``: first the state, then each event as it happens, until the
        run ends (or ``timeout`` seconds). Keep a line's ``cursor`` and pass it
        as ``since`` to go on where you were, with no gap and no repeat.
        """
        self.client.version()
        argv = self._events_argv(follow, since, types, timeout, heartbeat)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.client.env)
        try:
            for line in proc.stdout:
                if line.strip():
                    event = json.loads(line)
                    if self.client.on_document:
                        self.client.on_document(event)
                    yield event
            err = proc.stderr.read()
            if proc.wait() != 0:
                raise DdpctlError(argv, proc.returncode, None, err)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()

    async def aevents(self, follow=False, since=None, types=None, timeout=None, heartbeat=None):
        """As events(), for asyncio: ``async for e in run.aevents(follow=True)``."""
        self.client.version()
        argv = self._events_argv(follow, since, types, timeout, heartbeat)
        proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE, env=self.client.env)
        try:
            while True:
                line = await proc.stdout.readline()
                if not line:
                    break
                if line.strip():
                    event = json.loads(line)
                    if self.client.on_document:
                        self.client.on_document(event)
                    yield event
            err = (await proc.stderr.read()).decode(errors="replace")
            if await proc.wait() != 0:
                raise DdpctlError(argv, proc.returncode, None, err)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()

    def wait(self, until="ended", timeout=None):
        """Waits, following its events, until its jobs started (``"started"``)
        or every one ended (``"ended"``); returns its status rows then.
        TimeoutError after ``timeout`` seconds."""
        if until not in ("started", "ended"):
            raise ValueError("until: 'started' or 'ended'")

        def started(rows):
            return any(r.get("start_time") or r.get("state") in ENDED | {"RUNNING", "COMPLETING"} for r in rows
                       if r.get("job_id"))

        for event in self.events(follow=True, timeout=timeout, heartbeat=30):
            kind = event.get("type")
            if until == "started" and (kind in ("started", "race_won") or
                                       (kind == "state" and started(event.get("rows") or []))):
                return self.status()
            if kind == "run_ended":
                return self.status()
        rows = self.status()
        jobs = [r for r in rows if r.get("job_id")]
        if until == "ended" and jobs and all(r.get("state") in ENDED for r in jobs):
            return rows
        if until == "started" and started(rows):
            return rows
        raise TimeoutError(f"run {self.id} has not {until} after {timeout} s")


class Sweep(Run):
    """A grid's sweep: its status rows are its cells."""

    def cells(self):
        return [r for r in self.status() if r.get("cell")]
