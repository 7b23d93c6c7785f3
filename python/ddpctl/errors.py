"""What ddpctl said went wrong, as exceptions (docs/json.md "The envelope")."""


class DdpctlError(Exception):
    """A command of ddpctl failed: its exit status and its error envelope.

    ``errors`` holds the envelope's errors, each a dict with ``message`` and,
    where ddpctl knows them, ``file``, ``line``, ``column`` and ``field``;
    ``exit`` is the exit status (docs/json.md "Exit statuses"); ``document``
    the whole envelope; ``argv`` the command that was run.
    """

    def __init__(self, argv, exit, document=None, stderr=""):
        self.argv = list(argv)
        self.exit = exit
        self.document = document or {}
        self.errors = list(self.document.get("errors") or [])
        self.stderr = stderr
        first = self.errors[0] if self.errors else {}
        self.file = first.get("file")
        self.line = first.get("line")
        self.column = first.get("column")
        self.field = first.get("field")
        text = "; ".join(e.get("text") or e.get("message", "") for e in self.errors)
        if not text:
            text = (stderr or "").strip() or f"exit status {exit}"
        super().__init__(f"ddpctl {' '.join(self.argv[1:3])}: {text}")


class IncompatibleBinary(DdpctlError):
    """The ddpctl binary does not speak the document versions this package reads."""

    def __init__(self, argv, message):
        self.argv = list(argv)
        self.exit = None
        self.document = {}
        self.errors = [{"message": message}]
        self.stderr = ""
        self.file = self.line = self.column = self.field = None
        Exception.__init__(self, message)
