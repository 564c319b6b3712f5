"""The one error type for bad input; its message names the file and line."""


class InputError(Exception):
    """Malformed or inconsistent input. ``str(err)`` starts with ``path:line:`` when known."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
