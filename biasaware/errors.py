"""Errors a user can cause and fix. The CLI prints them without a traceback and exits non-zero."""


class BiasAwareError(Exception):
    """A user-facing error: bad input, a missing file or package, an unknown name."""


class RecordError(BiasAwareError):
    """One or more records break the data contract; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        shown = "\n".join(self.problems[:20])
        more = f"\n... and {len(self.problems) - 20} more" if len(self.problems) > 20 else ""
        super().__init__(shown + more)
