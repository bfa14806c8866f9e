"""The data contract: one record type per pipeline stage, enforced on every read.

==============  ====================================================================
kind            fields
==============  ====================================================================
``pair``        id, source, prompt (chat messages, last turn is the user's), chosen,
                rejected, meta
``probe``       id, bias, category, original (View), injected (View), meta
``train``       id, prompt, chosen, rejected, bias_negatives [{bias, text}], meta
``judgment``    probe_id, view, judge, raw, verdict (A | B | tie | invalid), scores,
                correct, meta
``trace``       id, bias, prompt (judge prompt messages), completion (the assistant
                reply in the judge format), label (A | B), meta: SFT rows in TRL's
                conversational prompt-completion layout
``scoring``     id, prompt, response, rubric (criteria, score1..5_description), references
                (score level -> reference answer), gold (1-5), meta: one response to grade
``score``       probe_id (the item), view (the prompt template), judge, raw, score, meta
==============  ====================================================================

A :class:`View` is what a pairwise judge sees, not a rendered prompt: the prompt, response A,
response B, which of the two is correct, extra context shown to the judge (e.g. a majority
opinion note) and text placed between the two answers (e.g. a reflection phrase). Each judge
format renders a view its own way.

Validation is pydantic's; :func:`format_problems` turns its errors into one line per problem,
``file:line: field 'chosen' is missing``. Unknown top-level fields are refused (extra data
goes under ``meta``) so a typo such as ``choosen`` never passes silently.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import unicodedata
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from biasaware.errors import BiasAwareError, RecordError, closest_named
from biasaware.taxonomy import BIAS_NAMES, BIASES, SECURITY_PROBES

Verdict = Literal["A", "B", "tie", "invalid"]
NonEmpty = Annotated[str, Field(min_length=1)]


INVISIBLE = (
    "Cc",
    "Cf",
    "Cs",
    "Co",
    "Cn",
    "Mn",
    "Me",
)  # control, format, surrogate, private, unassigned, marks
BLANK_LOOKING = frozenset("\u3164\u2800\uffa0\u115f\u1160")  # Hangul fillers and the braille blank


def visible(text: str) -> bool:
    """Whether ``text`` shows anything, as valid text: a character that is not white space, not of an
    invisible Unicode category (:data:`INVISIBLE`: control and format characters such as zero-width
    spaces, lone surrogates, combining marks alone) and not a blank-looking letter
    (:data:`BLANK_LOOKING`); and no lone surrogate anywhere (such a text cannot be encoded)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return any(
        not ch.isspace() and unicodedata.category(ch) not in INVISIBLE and ch not in BLANK_LOOKING
        for ch in text
    )


NOTHING_SHOWN = "is empty or whitespace only (or shows nothing: invisible characters only)"


def encoding_problem(text: str) -> str | None:
    """A lone surrogate (text no tokenizer can encode), named with its place; ``None`` when there is none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid text: a lone surrogate {text[exc.start]!r} at character {exc.start}"
    return None


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be judged, in words that follow its name, or ``None``: text that cannot be
    encoded (:func:`encoding_problem`), else text that shows nothing."""
    return encoding_problem(text) or (None if visible(text) else NOTHING_SHOWN)


def _encodable(value: str) -> str:
    problem = encoding_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _not_blank(value: str) -> str:
    problem = text_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


@functools.cache
def _unseen() -> re.Pattern[str]:
    """Characters that show nothing and are not white space: control and format characters (zero-width
    spaces, joiners, direction marks, the byte-order mark) and blank-looking letters (:data:`BLANK_LOOKING`).
    Built on first use (a pass over every code point, about a tenth of a second)."""
    unseen = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cc", "Cf")}
    ranges: list[list[int]] = []  # as ranges: a class of single characters is ten times slower to match
    for c in sorted((unseen | {ord(ch) for ch in BLANK_LOOKING}) - {c for c in unseen if chr(c).isspace()}):
        if ranges and c == ranges[-1][1] + 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]")


def shown_as(text: str) -> str:
    """What a reader sees of ``text``: its canonical Unicode form (NFC: an ``e`` and a combining accent are
    ``é``; not the compatibility form, which would make ``x²`` ``x2``), without characters that show nothing
    (:func:`_unseen`), white space collapsed to one space.

    >>> shown_as("Paris\\u200b is  the cafe\\u0301.\\n") == shown_as("Paris is the caf\\u00e9.")
    True
    >>> shown_as("x\\u00b2") == shown_as("x2")
    False
    """
    if not text.isascii():
        text = _unseen().sub("", unicodedata.normalize("NFC", text))
    elif _ASCII_UNSEEN.search(text):  # plain ASCII is its own NFC form; its unseen characters are controls
        text = _ASCII_UNSEEN.sub("", text)
    return " ".join(text.split())


_ASCII_UNSEEN = re.compile("[\x00-\x08\x0e-\x1b\x7f]")  # the ASCII controls that are not white space


def same_answer(a: str, b: str) -> str | None:
    """Whether ``b`` is ``a`` to a judge: ``None`` when it is another answer, else what follows "is identical
    to X" in a refusal: ``""`` for the same text, or the words for one that differs only in white space,
    characters that show nothing or Unicode form (:func:`shown_as`), which a judge would read as one answer
    twice."""
    if a == b:
        return ""
    if shown_as(a) == shown_as(b):
        return " but for white space, invisible characters or Unicode form"
    return None


def _rejected_differs(value: str, info: ValidationInfo) -> str:
    _not_blank(value)
    chosen = info.data.get("chosen")
    if isinstance(chosen, str) and (but := same_answer(chosen, value)) is not None:
        raise ValueError(f"is identical to 'chosen'{but}")
    return value


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (``null``, an array, a string): not Python's type names.

    >>> json_kind(None), json_kind([1]), json_kind("x"), json_kind(True), json_kind(2.5)
    ('null', 'an array', 'a string', 'true/false', 'a number')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    kinds = ((list, "an array"), (str, "a string"), (int | float, "a number"), (dict, "an object"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def json_shown(value: Any) -> str:
    """A value as an error shows it: its JSON kind and a short form (``a number 5``, ``null``, ``true``)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return f"{json_kind(value)} {_short(value)}"


def _known_bias(value: str) -> str:
    if value not in BIASES:
        raise ValueError(
            f"unknown bias {value!r}; valid: {', '.join(BIAS_NAMES)}, or a security probe ({', '.join(SECURITY_PROBES)})"
        )
    return value


def _json_dict(value: Any) -> Any:
    """Accept a dict, or a JSON string holding one (how Parquet files store ``meta``)."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError("is a string but not a JSON object") from None
    return value


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, strict=False)

    def key(self) -> Any:
        """What must be unique within one input (its ``id``; a judgment: probe id and view)."""
        return getattr(self, "id", None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, ``meta`` last so files read top-down."""
        data = self.model_dump(mode="json")
        if "meta" in data:
            data["meta"] = data.pop("meta")
        return data


Role = Literal["system", "user", "assistant"]
ROLES: tuple[str, ...] = get_args(Role)


class Message(_Record):
    role: Role
    content: str

    check_content_ok = field_validator("content")(_encodable)


def chat_messages(prompt: Any) -> list[dict[str, str]]:
    """A prompt as chat messages: a non-empty string is one user turn; a list must hold messages of
    the roles system, user and assistant, the last a non-empty user turn. Anything else is a
    :class:`BiasAwareError` that shows what was given."""
    if isinstance(prompt, str) and prompt.strip():
        problem = text_problem(prompt)
        if problem is not None:
            raise BiasAwareError(f"a prompt {problem}; got {prompt!r:.80}")
        return [{"role": "user", "content": prompt}]
    try:
        if not isinstance(prompt, list):
            raise ValueError("empty" if isinstance(prompt, str) else f"not a list: {type(prompt).__name__}")
        return [m.model_dump() for m in _check_prompt([_message(i, m) for i, m in enumerate(prompt)])]
    except ValueError as exc:
        raise BiasAwareError(
            "a prompt is a non-empty string or a list of {'role': 'system' | 'user' | 'assistant', 'content': ...} "
            f"messages ending with the user's ({exc}); got {prompt!r:.80}"
        ) from None


def _message(i: int, message: Any) -> Message:
    """Message ``i`` of a prompt, or a ``ValueError`` that says what is wrong with it."""
    if not isinstance(message, dict):
        raise ValueError(f"message {i} is a {type(message).__name__}, not a mapping")
    try:
        return Message(**message)
    except TypeError as exc:  # a key that is not a string
        raise ValueError(f"message {i}: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "its fields"
        raise ValueError(f"message {i}: {where}: {error_words(first)}") from None


def _check_prompt(messages: list[Message]) -> list[Message]:
    if not messages:
        raise ValueError("must hold at least one message")
    if messages[-1].role != "user":
        raise ValueError(f"last message must be the user turn, got role {messages[-1].role!r}")
    if not visible(messages[-1].content):
        raise ValueError(f"last user message {NOTHING_SHOWN}")
    return messages


GROUPING_META = ("bias", "pair_id", "direction", "key_type", "subset", "cue_on", "augment")
"""``meta`` keys the toolkit groups records by (dictionary keys, set members): each must be a JSON scalar."""


def _scalar_grouping_meta(value: dict[str, Any]) -> dict[str, Any]:
    """Refuse a list or an object under a key in :data:`GROUPING_META` (``{"bias": []}``): the toolkit
    hashes those values, so one that cannot be a dictionary key is named here, not met as a crash later."""
    for key in GROUPING_META:
        if isinstance(value.get(key), (list, dict)):
            raise ValueError(f"meta.{key} must be a string or a number, got {json_shown(value[key])}")
    return value


# meta keys read as yes or no (a probe's side: the cue on the better answer): "false" would read as true
FLAG_META = ("mirror",)


def _flag_meta(value: dict[str, Any]) -> dict[str, Any]:
    """Refuse a key of :data:`FLAG_META` that is not a JSON boolean."""
    for key in FLAG_META:
        if key in value and not isinstance(value[key], bool):
            raise ValueError(f"meta.{key} must be true or false, got {json_shown(value[key])}")
    return value


class _HasMeta(_Record):
    meta: dict[str, Any] = Field(default_factory=dict)

    check_meta_json = field_validator("meta", mode="before")(_json_dict)
    check_meta_scalars = field_validator("meta")(_scalar_grouping_meta)
    check_meta_flags = field_validator("meta")(_flag_meta)


class PreferencePair(_HasMeta):
    """A base preference pair: ``chosen`` is better than ``rejected`` for ``prompt``."""

    id: NonEmpty
    source: NonEmpty
    prompt: list[Message]
    chosen: str
    rejected: str

    check_prompt_ok = field_validator("prompt")(_check_prompt)
    check_chosen_ok = field_validator("chosen")(_not_blank)

    check_rejected = field_validator("rejected")(_rejected_differs)

    def user_turn(self) -> str:
        return self.prompt[-1].content


class View(_Record):
    """One pairwise presentation of an item: what the judge sees and which answer is correct."""

    prompt: list[Message]
    response_a: str
    response_b: str
    correct: Literal["A", "B"]
    context: str = ""
    between: str = ""

    check_prompt_ok = field_validator("prompt")(_check_prompt)
    check_a_ok = field_validator("response_a", "response_b")(_not_blank)

    @property
    def correct_text(self) -> str:
        return self.response_a if self.correct == "A" else self.response_b

    @property
    def wrong_text(self) -> str:
        return self.response_b if self.correct == "A" else self.response_a

    def reversed(self) -> View:
        """The same view with its two answers in the other order."""
        return self.model_copy(
            update={
                "response_a": self.response_b,
                "response_b": self.response_a,
                "correct": "B" if self.correct == "A" else "A",
            }
        )


class BiasProbe(_HasMeta):
    """One benchmark item: the same pair seen without (original) and with (injected) the bias."""

    id: NonEmpty
    bias: str
    category: str
    original: View
    injected: View

    check_bias_known = field_validator("bias")(_known_bias)

    @field_validator("category")
    @classmethod
    def _category_matches(cls, value: str, info: ValidationInfo) -> str:
        bias = info.data.get("bias")
        if bias in BIASES and value != BIASES[bias].category:
            raise ValueError(f"is {value!r} but bias {bias!r} belongs to {BIASES[bias].category!r}")
        return value

    @model_validator(mode="after")
    def _two_answers(self) -> BiasProbe:
        """Each view holds two different answers."""
        for side in ("original", "injected"):
            view = getattr(self, side)
            if (but := same_answer(view.response_a, view.response_b)) is not None:
                raise ValueError(f"{side}.response_b is identical to {side}.response_a{but}")
        o, i = self.original, self.injected
        answers = {o.response_a: "A", o.response_b: "B"}
        placed = (answers.get(i.response_a), answers.get(i.response_b))
        if placed in (("A", "B"), ("B", "A")):  # the original's two answers, in either order: one is right
            right = placed[0] if i.correct == "A" else placed[1]
            if right != o.correct:
                raise ValueError(
                    f"injected.correct is {i.correct!r}, the answer that is wrong in the original view (its "
                    f"response_{right.lower()}): the two views disagree on which answer is better"
                )
        return self


def probe_problem(probe: BiasProbe) -> str | None:
    """A probe read for use whose injected view is its original: no cue was written in, so it measures
    nothing (a builder drops such a probe, counted as ``no_cue``)."""
    return (
        "injected is identical to original: no cue was written in"
        if probe.injected == probe.original
        else None
    )


class BiasNegative(_Record):
    bias: str
    text: str

    check_text_ok = field_validator("text")(_not_blank)

    check_bias_known = field_validator("bias")(_known_bias)


class TrainingRow(_HasMeta):
    """A bias-augmented training row: one chosen, the original rejected, and bias negatives."""

    id: NonEmpty
    prompt: list[Message]
    chosen: str
    rejected: str
    bias_negatives: list[BiasNegative] = Field(default_factory=list)

    check_prompt_ok = field_validator("prompt")(_check_prompt)
    check_chosen_ok = field_validator("chosen")(_not_blank)
    check_rejected = field_validator("rejected")(_rejected_differs)

    @model_validator(mode="after")
    def _negatives_differ_from_chosen(self) -> TrainingRow:
        for i, negative in enumerate(self.bias_negatives):
            if (but := same_answer(self.chosen, negative.text)) is not None:
                raise ValueError(f"bias_negatives[{i}].text is identical to 'chosen'{but}")
        return self


# a judge's score as written: a number (a model's NaN included), never true or the text "0.5"
Number = Annotated[float, Field(strict=True)]


class Judgment(_HasMeta):
    """One per-instance prediction of a judge on one view of one item."""

    probe_id: NonEmpty
    view: NonEmpty
    judge: NonEmpty
    raw: str
    verdict: Verdict
    scores: dict[str, Number] | None = None
    correct: Literal["A", "B"] | None = None

    def key(self) -> Any:
        return (self.probe_id, self.view)

    @field_validator("scores")
    @classmethod
    def _both_scores(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is not None and set(value) != {"A", "B"}:
            raise ValueError(f"scores must hold exactly A and B, got {sorted(value)}")
        return value

    @field_validator("meta")
    @classmethod
    def _known_meta_bias(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "bias" not in value:
            return value
        bias = value["bias"]
        shown = f"{bias!r}" if isinstance(bias, str) else json_shown(bias)
        if not isinstance(bias, str) or bias not in BIASES:
            raise ValueError(
                f"meta.bias {shown} is not one of the 12 biases ({', '.join(BIAS_NAMES)}) or a security "
                f"probe ({', '.join(SECURITY_PROBES)})"
            )
        return value

    @model_validator(mode="after")
    def _bias_judgment_is_scorable(self) -> Judgment:
        """A bias judgment (``meta.bias`` set, as ``eval bias`` writes) is scored against its
        probe's correct answer on one of the two views: both must be there. A master-key probe has a
        third, ``reversed``: its injected view with the answers in the other order."""
        if "bias" in self.meta:
            views = (
                ("original", "injected", "reversed")
                if self.meta["bias"] == "masterkey"
                else ("original", "injected")
            )
            if self.view not in views:
                raise ValueError(
                    f"view {self.view!r}: a {self.meta['bias']} judgment is of the {', '.join(views[:-1])} or the "
                    f"{views[-1]} view"
                )
            if self.correct is None:
                raise ValueError("correct is missing: a bias judgment is scored against the correct answer")
        return self


class TraceRow(_HasMeta):
    """A teacher reasoning trace for SFT: the judge prompt and the teacher's reply (verdict == label)."""

    id: NonEmpty
    bias: str
    prompt: list[Message]
    completion: list[Message]
    label: Literal["A", "B"]

    check_prompt_ok = field_validator("prompt")(_check_prompt)

    @field_validator("completion")
    @classmethod
    def _one_reply(cls, value: list[Message]) -> list[Message]:
        if len(value) != 1 or value[0].role != "assistant" or not value[0].content.strip():
            raise ValueError("must be one non-empty assistant message")
        return value

    check_bias_known = field_validator("bias")(_known_bias)


RUBRIC_KEYS = ("criteria", *(f"score{k}_description" for k in range(1, 6)))


class ScoringItem(_HasMeta):
    """One response to grade alone against a rubric (``eval scoring``): optional reference answers
    by score level (``"5"``: a full-mark reference) and an optional gold score (1-5)."""

    id: NonEmpty
    prompt: list[Message]
    response: str
    rubric: dict[str, str] | None = None
    references: dict[str, str] = Field(default_factory=dict)
    gold: float | None = Field(None, strict=True)  # a number as written: true or "5" is not a score

    check_prompt_ok = field_validator("prompt")(_check_prompt)
    check_response_ok = field_validator("response")(_not_blank)

    @field_validator("rubric")
    @classmethod
    def _five_levels(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return value
        missing = [k for k in RUBRIC_KEYS if not str(value.get(k) or "").strip()]
        if missing:
            raise ValueError(
                f"is missing {', '.join(missing)} (a rubric has criteria and five level descriptions)"
            )
        extra = sorted(set(value) - set(RUBRIC_KEYS))
        if extra:
            raise ValueError(f"has unknown key(s) {', '.join(extra)}; valid: {', '.join(RUBRIC_KEYS)}")
        return value

    @field_validator("references")
    @classmethod
    def _levels(cls, value: dict[str, str]) -> dict[str, str]:
        bad = sorted(k for k in value if k not in {"1", "2", "3", "4", "5"})
        if bad:
            raise ValueError(f"keys must be score levels 1-5, got {', '.join(map(repr, bad))}")
        blank = sorted(k for k, v in value.items() if not v.strip())
        if blank:
            raise ValueError(f"level {blank[0]} is empty")
        return value

    @field_validator("gold")
    @classmethod
    def _gold_range(cls, value: float | None) -> float | None:
        if value is not None and not 1 <= value <= 5:
            raise ValueError(f"is not a score from 1 to 5 (got {value:g})")
        return value


class ScoreJudgment(_HasMeta):
    """One pointwise score of a judge: an item (``probe_id``) under one prompt template (``view``);
    ``score`` is ``None`` when the reply held no readable score (invalid)."""

    probe_id: NonEmpty
    view: NonEmpty
    judge: NonEmpty
    raw: str
    score: Number | None = None

    def key(self) -> Any:
        return (self.probe_id, self.view)


RECORD_TYPES: dict[str, type[_Record]] = {
    "pair": PreferencePair,
    "probe": BiasProbe,
    "train": TrainingRow,
    "judgment": Judgment,
    "trace": TraceRow,
    "scoring": ScoringItem,
    "score": ScoreJudgment,
}


def guess_kind(row: dict[str, Any]) -> str:
    """Guess a record kind from the keys of one row (used when ``--kind`` is not given)."""
    if "original" in row or "injected" in row:
        return "probe"
    if "probe_id" in row and "score" in row and "verdict" not in row:
        return "score"
    if "probe_id" in row or "verdict" in row:
        return "judgment"
    if "rubric" in row or "references" in row or ("response" in row and "chosen" not in row):
        return "scoring"
    if "bias_negatives" in row:
        return "train"
    if "completion" in row:
        return "trace"
    return "pair"


def resolve_kind(kind: str) -> type[_Record]:
    try:
        return RECORD_TYPES[kind]
    except KeyError:
        raise BiasAwareError(
            f"unknown record kind {kind!r}; valid kinds: {', '.join(RECORD_TYPES)}"
        ) from None


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in loc).replace(".[", "[")


# pydantic's bound errors, said as the toolkit says a limit: (its context key, the words)
BOUNDS = {
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "above"),
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "below"),
}


def _number(value: Any) -> str:
    """A bound or a value as written: ``0``, ``-1``, ``0.5`` (a float with no fraction without ``.0``)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def error_words(error: dict[str, Any]) -> str:
    """One pydantic error's message in the toolkit's words: a bound as ``must be at least 0``, others
    without pydantic's ``Value error, `` prefix and starting in lower case (``input should be ...``), to
    follow a field's name."""
    if error.get("type") in BOUNDS and error.get("ctx"):
        key, words = BOUNDS[error["type"]]
        return f"must be {words} {_number(error['ctx'][key])}"
    msg = str(error.get("msg", "")).removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def settings_at(model: type[BaseModel], loc: tuple) -> list[str]:
    """The setting names of the (nested) model a settings file's ``loc`` is in: ``("per_bias", "length",
    "bsrr")`` of a model whose ``per_bias`` maps names to models is one of that model's settings. A place
    that is no model's (a list's item, a plain value) gives ``[]``."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(current, type) and issubclass(current, BaseModel) and part in current.model_fields:
            current = current.model_fields[part].annotation
        elif isinstance(part, str) and getattr(current, "__origin__", None) is dict:
            current = get_args(current)[1]  # a mapping's value, under its key
        else:
            return []
        models = [
            a for a in (get_args(current) or (current,)) if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        current = models[0] if models and getattr(current, "__origin__", None) is not dict else current
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def format_problems(
    where: str, err: ValidationError, valid: list[str] | type[BaseModel] | None = None
) -> list[str]:
    """One readable line per pydantic error, prefixed with ``where`` (e.g. ``data.jsonl:3``). ``valid``: the
    settings of a settings file (or its model, whose nested settings are then named where they are), an
    unknown one named with the closest of them (a record's extra data goes under ``meta`` instead)."""
    lines = []
    for e in err.errors(include_url=False):
        loc = tuple(e.get("loc", ()))
        msg = error_words(e)
        field = _field_name(loc)
        kind = e.get("type")
        if kind == "missing":
            lines.append(f"{where}: field '{field}' is missing")
        elif kind == "extra_forbidden" and valid is not None:
            names = valid if isinstance(valid, list) else settings_at(valid, loc)
            lines.append(
                f"{where}: unknown field '{field}'; {closest_named(str(loc[-1]) if loc else field, names)}"
            )
        elif kind == "extra_forbidden":
            lines.append(f"{where}: unknown field '{field}' (put extra data under 'meta')")
        else:
            got = e.get("input")
            shown = f" (got {json_shown(got)})" if kind and kind.endswith("_type") else ""
            shown = f" (got {_number(got)})" if kind in BOUNDS else shown
            msg = msg or "is invalid"
            sep = " " if msg.startswith("is ") else ": "
            if not field:  # a check across fields names them in its message
                lines.append(f"{where}: {msg}{shown}")
            else:
                lines.append(f"{where}: field '{field}'{sep}{msg}{shown}")
    return lines


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def renamed_fields(problems: list[str], names: dict[str, str], note: str = "") -> list[str]:
    """Problem lines with each record field named as the user's row names it (``names``: record field -> the
    row's own name, e.g. ``gold`` -> ``human_score``); ``note``, formatted with ``field``, follows the name
    (`` (mapped to {field})``)."""
    for field_name, own in names.items():
        shown = f"field '{own}'" + note.format(field=field_name)
        problems = [p.replace(f"field '{field_name}'", shown) for p in problems]
    return problems


def parse_record(kind: str | type[_Record], row: Any, where: str = "<record>") -> _Record:
    """Validate one row (a dict) as ``kind``; raise :class:`RecordError` with readable problems."""

    cls = resolve_kind(kind) if isinstance(kind, str) else kind
    if not isinstance(row, dict):
        raise RecordError([f"{where}: expected a JSON object, got {json_kind(row)}"])
    try:
        return cls.model_validate(row)
    except ValidationError as err:
        raise RecordError(format_problems(where, err)) from None
