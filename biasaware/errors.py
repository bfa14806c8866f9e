"""Errors a user can cause and fix. The CLI prints them without a traceback and exits non-zero."""

import difflib
import re


class BiasAwareError(Exception):
    """A user-facing error: bad input, a missing file or package, an unknown name."""


class RecordError(BiasAwareError):
    """One or more records break the data contract; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        shown = "\n".join(self.problems[:20])
        more = f"\n... and {len(self.problems) - 20} more" if len(self.problems) > 20 else ""
        super().__init__(shown + more)


class OtherKindError(BiasAwareError):
    """A file of records of another kind than the one read (``found``, not ``expected``): one line, not
    every row's missing fields."""

    def __init__(self, message: str, found: str, expected: str):
        self.found, self.expected = found, expected
        super().__init__(message)


def closest(name: str, valid) -> str | None:
    """The one of ``valid`` a mistyped ``name`` most likely meant (difflib's closest), else ``None``."""
    return next(iter(difflib.get_close_matches(str(name), [str(v) for v in valid], n=1)), None)


def closest_named(name: str, valid) -> str:
    """What follows "unknown X 'name';" in a message: the closest of ``valid`` (``did you mean 'x'?``), else
    every valid name."""
    close = closest(name, valid)
    return f"did you mean {close!r}?" if close else f"valid: {', '.join(map(str, valid))}"


SEED_MAX = 2**32 - 1  # numpy's and torch's seeds; Python's random takes any integer, the others do not


def check_seed(seed: object, what: str = "--seed") -> int:
    """One rule for every seed a user gives (a command's ``--seed``, the Python API's ``seed=``): a
    whole number from 0 to :data:`SEED_MAX`, checked before any work, so a bad seed never fails
    halfway and leaves a folder the corrected command is refused."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise BiasAwareError(f"{what} {seed!r}: a seed is a whole number from 0 to {SEED_MAX}")
    return seed


def check_count(value: object, what: str, minimum: int = 1, note: str = "") -> int:
    """A count a user gives (``limit``, ``per_bias``, ``group_size``): a whole number of at least
    ``minimum`` (not a bool, a float or a string), checked before any work."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BiasAwareError(f"{what}: a whole number of at least {minimum}{note}; got {value!r}")
    return value


def negative_values(args: list[str]) -> list[str]:
    """``args`` with a negative number after a ``--flag`` joined to it (``--flag=-1e-3``): argparse takes
    ``-inf`` or ``-1e-3`` there for another flag and says the flag "expected one argument", where the
    value's own check has something to say."""
    args = list(args)
    for i in range(len(args) - 1, 0, -1):
        flag, alone = args[i - 1], i + 1 == len(args) or args[i + 1].startswith("-")
        if flag.startswith("--") and flag != "--" and "=" not in flag and alone and _negative_number(args[i]):
            args[i - 1 : i + 1] = [f"{flag}={args[i]}"]  # a flag of several values is left to argparse
    return args


def _negative_number(arg: str) -> bool:
    """A negative number argparse would take for a flag: not ``-5`` or ``-0.5``, which it reads as values
    (and so, after a flag of several values, as the next one)."""
    if not arg.startswith("-") or arg.startswith("--") or re.fullmatch(r"-\d+|-\d*\.\d+", arg):
        return False
    try:
        float(arg)
    except ValueError:
        return False
    return True
