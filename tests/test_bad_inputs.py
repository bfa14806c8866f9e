"""Bad inputs and misuse, one table: every case exits 2 with a message that names the file and line
(or the setting), prints no traceback, and leaves nothing in ``--out`` that would block the
corrected command (where a case gives one, the corrected command is run in the same ``--out``).

Placeholders in a case's files and arguments: ``{d}`` the case's folder, ``{out}`` its output
folder, ``{bench}`` a small built benchmark, ``{reward}`` a tiny reward model, ``{run}`` a finished
``eval bias`` folder of that model on that benchmark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from biasaware.cli import main

FINISHED = '{"per_bias": {}, "policy": "symmetric"}'  # a finished eval bias run's summary, as far as read


@dataclass
class Case:
    id: str
    argv: list[str]
    says: str  # a part of the message
    files: dict[str, str | bytes] = field(default_factory=dict)
    fix: list[str] | None = None  # the corrected command: must then succeed in the same --out
    out_may_exist: bool = False  # --out existed before the command (so it is not checked empty)


PAIR = {
    "id": "p1",
    "source": "t",
    "prompt": [{"role": "user", "content": "Which is larger?"}],
    "chosen": "9",
    "rejected": "1",
}
VIEW = {"prompt": PAIR["prompt"], "response_a": "9", "response_b": "1", "correct": "A"}
PROBE = {"id": "q1", "bias": "length", "category": "superficial_quality", "original": VIEW, "injected": VIEW}


def line(row: dict, **changes) -> str:
    row = {**row, **changes}
    return json.dumps({k: v for k, v in row.items() if v is not None}) + "\n"


def judgment(view="original", **changes) -> str:
    base = {"probe_id": "q1", "view": view, "judge": "j", "raw": "A", "verdict": "A", "correct": "A"}
    return line({**base, "meta": {"bias": "length"}}, **changes)


BOTH_VIEWS = judgment("original") + judgment("injected")
BUILD = ["build", "bench", "--n", "2", "--out", "{out}"]
EVAL_RM = ["eval", "bias", "--judge", "{reward}", "--mode", "reward", "--data"]
RUN_RM = [*EVAL_RM, "{bench}", "--out", "{out}"]
EVAL_ENDPOINT = ["eval", "bias", "--judge", "m", "--backend", "openai", "--base-url"]
RECIPE_CONFIG = "model_name_or_path: minilm-l6\nuse_cpu: true\n"
# a recipe's flags for a model that is not there and the training file t.jsonl
NO_MODEL = [
    "--config",
    "{d}/r.yaml",
    "--output_dir",
    "{out}",
    "--model_name_or_path",
    "{d}/no-model",
    "--train_file",
    "{d}/t.jsonl",
]
RUBRIC = {"criteria": "c", **{f"score{k}_description": f"d{k}" for k in range(1, 6)}}
ITEM = {"id": "a", "instruction": "What is 2+2?", "response": "4", "gold": 5}
PREFLIGHT_RM = ["preflight", "--judge", "{reward}", "--mode", "reward", "--out", "{out}", "--thresholds"]
RELEASE = [
    "release",
    "--checkpoint",
    "{reward}",
    "--report",
    "{run}",
    "--out",
    "{out}",
    "--allow-weak-general",
]
GENERAL_RM = ["eval", "general", "--judge", "{reward}", "--benchmark", "{d}/rb.jsonl", "--out", "{out}"]
ONE_PAIR = {"rb.jsonl": line({"prompt": "q", "chosen": "a b", "rejected": "c"})}
SCORE_RM = ["eval", "scoring", "--judge", "{reward}", "--mode", "reward", "--out", "{out}", "--data"]

CASES = [
    Case(  # a bench given as base pairs: said once, with what reads probes, not a missing field per row
        "build-train-source-is-probes",
        ["build", "train", "--source", "{d}/probes.jsonl", "--out", "{out}"],
        "probes.jsonl:1: a probe record, not a pair record; `biasaware eval bias --data` judges bias probes",
        {"probes.jsonl": line(PROBE) + line(PROBE, id="q2")},
    ),
    # one seed rule everywhere (0 to 2**32 - 1), checked before any work
    Case(
        "build-negative-seed",
        [*BUILD, "--seed", "-1"],
        "a seed is a whole number from 0 to 4294967295",
        fix=BUILD,
    ),
    Case(
        "eval-negative-seed",
        [*RUN_RM, "--limit", "1", "--seed", "-1"],
        "a seed is a whole number",
        fix=[*RUN_RM, "--limit", "1", "--seed", "0"],
    ),
    Case(
        "general-negative-seed",
        [
            "eval",
            "general",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--benchmark",
            "{d}/b.jsonl",
            "--out",
            "{out}",
            "--seed",
            "-5",
        ],
        "a seed is a whole number",
    ),
    Case(  # a reward model writes no reply: a generation budget would go unread (eval refuses it too)
        "preflight-max-tokens-of-a-reward-model",
        [*PREFLIGHT_RM[:-1], "--max-tokens", "5"],
        "--max-tokens 5: mode 'reward' writes no reply",
    ),
    Case(  # generate mode writes replies in batches of --batch-size: a token cap per batch would go unread
        "eval-max-batch-tokens-in-generate-mode",
        ["eval", "bias", "--judge", "{causal}", "--mode", "generate", "--data", "{bench}", "--out", "{out}"]
        + ["--max-batch-tokens", "4096"],
        "--max-batch-tokens 4096: mode 'generate' writes its replies in batches of batch_size",
    ),
    Case(
        "preflight-scoring-max-tokens-of-a-reward-model",
        [*PREFLIGHT_RM[:-1], "--scoring-max-tokens", "10"],
        "--scoring-max-tokens 10: mode 'reward' writes no reply",
    ),
    Case(
        "preflight-negative-seed",
        ["preflight", "--judge", "{reward}", "--out", "{out}", "--seed", "-1"],
        "a seed is a whole number",
    ),
    Case(
        "quickstart-negative-seed",
        ["quickstart", "--generative", "--seed", "-1", "--out", "{out}"],
        "a seed is a whole number",
    ),
    Case(
        "quickstart-negative-seeds",
        ["quickstart", "--generative", "--seeds", "0,-1", "--out", "{out}"],
        "--seeds '0,-1': expected seeds like 0-9 or 0,1,2",
    ),
    Case(
        "quickstart-huge-seed",
        ["quickstart", "--seed", "4294967296", "--out", "{out}"],
        "a seed is a whole number",
    ),
    Case(
        "sweep-negative-seed",
        ["sweep", "--seeds", "-1", "--out", "{out}"],
        "--seeds '-1': expected seeds like 0-9 or 0,1,2",
    ),
    *[
        Case(f"build-seed-{label}", [*BUILD, "--seed", value], "a seed is a whole number")
        for label, value in [("underscore", "1_000"), ("sign", "+5"), ("other-digits", "\u0663")]
    ],
    Case("release-data-empty-name", ["release", "--data", "{bench}", "--name", ""], "--name is empty"),
    Case(
        "release-data-with-model-options",
        ["release", "--data", "{bench}", "--probes", "3", "--private"],
        "which reads only --name and --license; leave out --probes, --private",
    ),
    Case(
        "release-private-without-push",
        ["release", "--checkpoint", "{reward}", "--report", "{run}", "--private", "--out", "{out}"],
        "nothing is pushed without --push-to-hub",
    ),
    Case(
        "release-name-and-push-differ",
        [*RELEASE, "--name", "you/judge-a", "--push-to-hub", "other/judge-b"],
        "--name you/judge-a and --push-to-hub other/judge-b differ",
        fix=[*RELEASE, "--name", "you/judge-a"],
    ),
    # a release's name and license go into a card's YAML and into code: checked, never pasted
    *[
        Case(
            f"release-name-{label}",
            [*RELEASE, "--name", name],
            "is not a Hugging Face repository id: NAME or OWNER/NAME, of letters",
            fix=[*RELEASE, "--name", "you/judge"],
        )
        for label, name in [
            ("quote", 'you/judge"); import os; os.system("id'),
            ("newline", "you/judge\nimport os"),
            ("path", "../../etc/evil"),
            ("three-parts", "a/b/c"),
            ("space", "my judge"),
        ]
    ],
    Case(
        "release-bench-not-there",
        [*RELEASE, "--bench", "{d}/nonexistent"],
        "--bench {d}/nonexistent: no such file or folder",
        fix=RELEASE,
    ),
    Case(
        "release-bad-license",
        [*RELEASE, "--license", "MIT License"],
        "not a license identifier of the Hugging Face Hub",
    ),
    Case(
        "release-data-bad-name",
        ["release", "--data", "{bench}", "--name", "a b"],
        "is not a Hugging Face repository id: NAME or OWNER/NAME, of letters",
    ),
    Case(
        "release-data-bad-license",
        ["release", "--data", "{bench}", "--license", "mine"],
        "not a license identifier",
    ),
    Case(
        "quickstart-no-arms",
        ["quickstart", "--generative", "--arms", "", "--out", "{out}"],
        "--arms names no arm",
    ),
    # ------------------------------------------------------------------------------ validate
    Case(
        "validate-not-utf8",
        ["validate", "{d}/latin.jsonl"],
        "latin.jsonl:1: not UTF-8 text",
        {"latin.jsonl": b"\xff\xfe{}\n"},
    ),
    Case("validate-empty-path", ["validate", ""], "validate: the path is empty"),
    Case(  # the original's answers, correct flipped: the views disagree (swapped, correct kept: the same)
        "validate-probe-views-disagree",
        ["validate", "{d}/p.jsonl"],
        "p.jsonl:2: injected.correct is 'A', the answer that is wrong in the original view (its response_b)",
        {
            "p.jsonl": line(PROBE, injected={**VIEW, "response_a": "1", "response_b": "9", "correct": "B"})
            + line(PROBE, id="q2", injected={**VIEW, "response_a": "1", "response_b": "9", "correct": "A"})
        },
    ),
    *(
        Case(  # a trace teaches its reply: one that contradicts its label, or gives no verdict, is refused
            f"validate-trace-{name}",
            ["validate", "{d}/t.jsonl", "--kind", "trace"],
            f"t.jsonl:1: field 'label' is A, but the completion {says}",
            {
                "t.jsonl": line(
                    {
                        "id": "t1",
                        "bias": "length",
                        "prompt": [{"role": "user", "content": "Which is better?"}],
                        "completion": [{"role": "assistant", "content": reply}],
                        "label": "A",
                    }
                )
            },
        )
        for name, reply, says in (
            ("other-verdict", "<think>B is right.</think><answer>B</answer>", "answers B"),
            ("no-verdict", "I think A", "gives no verdict in the judge format"),
        )
    ),
    Case(  # a split of one file would go unread, the whole file validated for it
        "validate-split-of-a-file",
        ["validate", "{d}/x.jsonl", "--split", "test"],
        "split 'test': {d}/x.jsonl is one file, read whole",
        {"x.jsonl": line(PAIR)},
        fix=["validate", "{d}/x.jsonl"],
    ),
    Case(  # an empty path is a mistake, not "no file": it ran every default, silently
        "build-empty-config",
        [*BUILD, "--config", ""],
        "build config: the path is empty",
        fix=BUILD,
    ),
    Case(  # natural cues are drawn from the cues of cue_rates that --biases names: here none (it went unread)
        "build-natural-biases-name-no-cue",
        [
            "build",
            "train",
            "--cues",
            "natural",
            "--augment",
            "balanced",
            "--biases",
            "gender",
            "--out",
            "{out}",
        ],
        "biases 'gender' names none of the cues of cue_rates (length, beauty",
    ),
    Case(  # an address without its scheme: the client retried a connection that could never be made
        "build-llm-base-url-not-an-address",
        [*BUILD, "--rewriter", "llm", "--llm-model", "m", "--llm-base-url", "localhost:8000/v1"],
        "setting llm.base_url: 'localhost:8000/v1' is not an http(s) address",
    ),
    Case(
        "eval-base-url-not-an-address",
        [*EVAL_ENDPOINT, "localhost:8000/v1", "--data", "{bench}", "--out", "{out}"],
        "setting 'base_url': 'localhost:8000/v1' is not an http(s) address",
    ),
    Case(  # a port out of range: the address said without its credentials, not as '***'
        "eval-base-url-port-out-of-range",
        [*EVAL_ENDPOINT, "http://bob:pw@127.0.0.1:99999/v1", "--data", "{bench}", "--out", "{out}"],
        "setting 'base_url': the port of 'http://***@127.0.0.1:PORT/v1' is not a number from 0 to 65535",
    ),
    Case(
        "build-split-of-a-file",
        ["build", "bench", "--n", "2", "--out", "{out}", "--source", "{d}/x.jsonl", "--split", "test"],
        "split 'test': {d}/x.jsonl is one file, read whole",
        {"x.jsonl": line(PAIR)},
    ),
    Case("quickstart-empty-out", ["quickstart", "--out", ""], "--out is empty: give a folder"),
    Case("quickstart-empty-real", ["quickstart", "--real", "", "--out", "{out}"], "--real is empty"),
    Case(
        "quickstart-not-a-finite-number",
        ["quickstart", "--generative", "--grpo-lr", "inf", "--out", "{out}"],
        "argument --grpo-lr: 'inf' is not a finite number",
    ),
    Case(
        "quickstart-a-negative-number-after-a-flag-is-its-value",
        ["quickstart", "--generative", "--grpo-lr", "-1e-3", "--out", "{out}"],
        "budget setting grpo_lr (--grpo-lr): must be above 0 (got -0.001)",
    ),
    Case(
        "quickstart-digits-of-another-script",
        ["quickstart", "--generative", "--reward-probes", "\u0663", "--out", "{out}"],
        "argument --reward-probes: '\u0663' is not a whole number",
    ),
    Case(
        "quickstart-a-count-too-large",
        ["quickstart", "--generative", "--start-steps", "9" * 30, "--out", "{out}"],
        "is not a whole number of at most 2147483647",
    ),
    Case("sweep-empty-out", ["sweep", "--out", ""], "--out is empty"),
    Case(
        "sweep-out-not-writable",
        ["sweep", "--out", "/proc/biasaware-test/out"],
        "--out /proc/biasaware-test/out: cannot write in /proc",
    ),
    *(
        Case(
            f"{argv[0]}-{argv[1]}-out-not-writable",
            [*argv, "--out", "/proc/biasaware-test/out"],
            "--out /proc/biasaware-test/out: cannot write in /proc",
        )
        for argv in (
            ["eval", "general", "--judge", "x", "--benchmark", "{d}/p.jsonl"],
            ["eval", "bias", "--rescore"],
            ["build", "real", "--real", "{d}"],
            ["preflight", "--judge", "x"],
        )
    ),
    Case(
        "quickstart-out-not-writable",
        ["quickstart", "--out", "/proc/biasaware-test/out"],
        "--out /proc/biasaware-test/out: cannot write in /proc",
    ),
    Case(
        "sweep-seeds-of-another-script", ["sweep", "--out", "{out}", "--seeds", "\u00b2"], "--seeds '\u00b2'"
    ),
    Case(
        "sweep-grid-key-twice",
        ["sweep", "--out", "{out}", "--grid", "learning_rate=1e-4", "--grid", "learning_rate=2e-4"],
        "--grid learning_rate is given twice",
    ),
    Case(
        "sweep-grid-not-finite",
        ["sweep", "--out", "{out}", "--grid", "learning_rate=nan"],
        "holds a value that is not a finite number",
    ),
    Case(
        "sweep-grid-repeated-value",
        ["sweep", "--out", "{out}", "--grid", "num_bias_negatives=0,0"],
        "repeats a value",
    ),
    Case(
        "sweep-grid-empty-value",
        ["sweep", "--out", "{out}", "--grid", "num_bias_negatives=0,,1"],
        "has an empty value",
    ),
    Case(
        "validate-repeated-key",
        ["validate", "{d}/dup.jsonl"],
        "dup.jsonl:1: field 'bias' is given twice in one object; keep one",
        {"dup.jsonl": '{"id": "p", "bias": "length", "bias": "authority"}\n'},
    ),
    Case(
        "validate-cut-off-line",
        ["validate", "{d}/cut.jsonl"],
        "cut.jsonl:1: invalid JSON (Unterminated string starting at column 8)",
        {"cut.jsonl": '{"id": "p\n'},
    ),
    Case(
        "validate-line-cut-after-a-key",  # the column where the line ends, not line 2's first
        ["validate", "{d}/cut.jsonl"],
        "cut.jsonl:1: invalid JSON (Expecting value at column 18)",
        {"cut.jsonl": '{"id": "p", "x": \n'},
    ),
    Case(
        "validate-deep-jsonl",
        ["validate", "{d}/deep.jsonl"],
        "deep.jsonl:1: invalid JSON (nested too deeply)",
        {"deep.jsonl": "[" * 100000 + "]" * 100000 + "\n"},
    ),
    Case(
        "validate-deep-json",
        ["validate", "{d}/deep.json"],
        "deep.json: invalid JSON (nested too deeply)",
        {"deep.json": "[" * 100000 + "]" * 100000},
    ),
    Case(
        "validate-bad-gzip",
        ["validate", "{d}/bad.jsonl.gz"],
        "bad.jsonl.gz: not a readable gzip file",
        {"bad.jsonl.gz": b"garbage"},
    ),
    Case(
        "validate-duplicate-id",
        ["validate", "{d}/dup.jsonl"],
        "dup.jsonl:2: id 'p1' repeats the record at",
        {"dup.jsonl": line(PAIR) * 2},
    ),
    Case(
        "validate-missing-field",
        ["validate", "{d}/x.jsonl"],
        "x.jsonl:1: field 'chosen' is missing",
        {"x.jsonl": line(PAIR, chosen=None)},
    ),
    Case(
        "validate-wrong-type",
        ["validate", "{d}/x.jsonl"],
        "x.jsonl:1: field 'chosen'",
        {"x.jsonl": line(PAIR, chosen=9)},
    ),
    Case(
        "validate-invalid-json",
        ["validate", "{d}/x.jsonl"],
        "x.jsonl:2: invalid JSON",
        {"x.jsonl": line(PAIR) + '{"id": "p2",}\n'},
    ),
    Case(
        "validate-not-an-object",
        ["validate", "{d}/x.jsonl"],
        "x.jsonl:1: expected a JSON object",
        {"x.jsonl": "[1, 2]\n"},
    ),
    Case("validate-missing-path", ["validate", "{d}/none.jsonl"], "none.jsonl: no such file or folder"),
    Case(
        "validate-unsupported-type",
        ["validate", "{d}/x.csv"],
        "x.csv: unsupported file type '.csv'",
        {"x.csv": "a,b\n"},
    ),
    Case(
        "validate-wrong-kind",
        ["validate", "--kind", "probe", "{d}/x.jsonl"],
        "x.jsonl:1: a pair record, not a probe record; `biasaware eval general --benchmark` judges pairs",
        {"x.jsonl": line(PAIR)},
    ),
    Case(
        "validate-scores-without-b",
        ["validate", "{d}/j.jsonl"],
        "j.jsonl:1: field 'scores': scores must hold exactly A and B",
        {"j.jsonl": judgment(scores={"A": 1.0})},
    ),
    Case(
        "validate-score-written-as-a-boolean",
        ["validate", "{d}/j.jsonl"],
        "j.jsonl:1: field 'scores.A': input should be a valid number (got true)",
        {"j.jsonl": judgment(scores={"A": True, "B": 2.0})},
    ),
    Case(
        "validate-score-written-as-text",
        ["validate", "{d}/s.jsonl"],
        "s.jsonl:1: field 'score': input should be a valid number (got a string '4')",
        {
            "s.jsonl": json.dumps(
                {"probe_id": "i1", "view": "baseline", "judge": "j", "raw": "", "score": "4"}
            )
            + "\n"
        },
    ),
    Case(
        "validate-unknown-bias",
        ["validate", "{d}/j.jsonl"],
        "j.jsonl:1: field 'meta': meta.bias 'lenght' is not one of the 12 biases",
        {"j.jsonl": judgment(meta={"bias": "lenght"})},
    ),
    Case(
        "validate-judgment-without-correct",
        ["validate", "{d}/j.jsonl"],
        "j.jsonl:1: correct is missing",
        {"j.jsonl": judgment(correct=None)},
    ),
    Case(
        "validate-empty-file",
        ["validate", "{d}/e.jsonl"],
        "e.jsonl: no records (pass --allow-empty",
        {"e.jsonl": ""},
    ),
    # --------------------------------------------------------------------------------- build
    Case(
        "build-typo-in-biases",
        [*BUILD, "--biases", "lenght"],
        "unknown bias 'lenght' (did you mean 'length'?)",
        fix=[*BUILD, "--biases", "length"],
    ),
    Case(  # a bad value from a config file is named with the file; the same from a flag without it
        "build-config-bad-value",
        ["build", "bench", "--config", "{d}/c.yaml", "--out", "{out}"],
        "error: {d}/c.yaml: setting n_per_bias: input should be a valid integer",
        {"c.yaml": 'n_per_bias: "5"\nbiases: length\n'},
        fix=["build", "bench", "--config", "{d}/c.yaml", "--n", "2", "--out", "{out}"],
    ),
    Case(  # a category, which --biases takes, is offered too
        "build-typo-in-a-category",
        [*BUILD, "--biases", "superficial"],
        "(did you mean 'superficial_quality'?); valid: the biases length,",
        fix=[*BUILD, "--biases", "superficial_quality"],
    ),
    Case(
        "build-out-is-a-file",
        ["build", "bench", "--n", "2", "--biases", "length", "--out", "{d}/afile"],
        "afile is a file; give a folder",
        {"afile": "x"},
    ),
    Case(
        "build-into-a-folder-of-other-files",  # a model folder, say: the build's files would mix with its
        ["build", "train", "--max-rows", "4", "--out", "{d}/model"],
        "model is not empty and holds no build (config.json, model.safetensors); use a new --out",
        {"model/config.json": "{}", "model/model.safetensors": ""},
    ),
    Case(
        "build-abbreviated-option",
        ["build", "train", "--n", "3", "--out", "{out}"],
        "biasaware build train: error: unrecognized arguments: --n 3",  # with the stage's usage
    ),
    Case(
        "build-conflicting-direction",
        [*BUILD, "--direction", "standard", "--mirror"],
        "--mirror and --direction standard disagree",
    ),
    Case(
        "eval-openai-without-a-key",
        ["eval", "bias", "--judge", "gpt-x", "--backend", "openai", "--data", "{bench}", "--out", "{out}"],
        "needs a key: set the environment variable OPENAI_API_KEY",
        fix=RUN_RM,
    ),
    Case(
        "rescore-corrupt-fingerprint",  # the one policy whose rule depends on the judge the record names
        ["eval", "bias", "--rescore", "--policy", "judgebiasbench", "--out", "{d}/r"],
        "fingerprint.json is not valid JSON; it records which judge made the judgments, whose template and mode "
        "decide what --policy judgebiasbench counts: restore it, or give another --policy",
        {"r/judgments.jsonl": BOTH_VIEWS, "r/fingerprint.json": "{oops"},
        out_may_exist=True,
    ),
    Case(
        "quickstart-corrupt-record",
        ["quickstart", "--out", "{d}/q"],
        "quickstart.json is not a quickstart run record",
        {"q/quickstart.json": "[1]"},
        out_may_exist=True,
    ),
    Case(
        "build-out-not-writable",
        ["build", "bench", "--n", "2", "--biases", "length", "--out", "/proc/biasaware-test/out"],
        "/proc/biasaware-test",
        out_may_exist=True,
    ),
    Case(
        "eval-out-not-writable",
        [*EVAL_RM, "{bench}", "--out", "/proc/biasaware-test"],
        "/proc/biasaware-test",
        out_may_exist=True,
    ),
    Case(
        "build-out-under-a-file",
        ["build", "bench", "--n", "2", "--biases", "length", "--out", "{d}/afile/sub"],
        "afile is a file; give a folder",
        {"afile": "x"},
    ),
    Case(
        "build-config-string-for-list",
        [*BUILD, "--biases", "gender", "--config", "{d}/c.yaml"],
        "identities",
        {"c.yaml": "identities:\n  gender: I am a woman.\n  race: [I am black.]\n"},
        fix=[*BUILD, "--biases", "gender"],
    ),
    Case(
        "build-config-bad-choice",
        [*BUILD, "--config", "{d}/c.yaml"],
        "unknown direction 'no'",
        {"c.yaml": "direction: 'no'\n"},
    ),
    Case(
        "build-config-unknown-key",
        [*BUILD, "--config", "{d}/c.yaml"],
        "c.yaml: unknown setting(s) n_per_biass, temprature; did you mean 'n_per_bias'?",
        {"c.yaml": "temprature: 0.5\nn_per_biass: 3\n"},
    ),
    Case(
        "build-config-invalid-yaml",
        [*BUILD, "--config", "{d}/c.yaml"],
        "c.yaml:2:1: invalid YAML",
        {"c.yaml": "biases: [length\n"},
    ),
    Case(
        "build-config-missing",
        [*BUILD, "--config", "{d}/none.yaml"],
        "build config {d}/none.yaml: no such file",
    ),
    Case(
        "build-config-not-a-mapping",
        [*BUILD, "--config", "{d}/c.yaml"],
        "c.yaml: a build config is a mapping",
        {"c.yaml": "- length\n"},
    ),
    Case(
        "build-config-string-for-number",
        [*BUILD, "--config", "{d}/c.yaml"],
        "bandwagon_percent",
        {"c.yaml": "bandwagon_percent: '90'\n"},
    ),
    Case(
        "build-config-llm-not-a-mapping",
        [*BUILD, "--config", "{d}/c.yaml", "--llm-model", "m"],
        "setting llm: must be a mapping of LLM settings",
        {"c.yaml": "llm: just-a-string\n"},
    ),
    Case(
        "build-config-llm-list",
        [*BUILD, "--config", "{d}/c.yaml"],
        "setting llm: must be a mapping of LLM settings",
        {"c.yaml": "llm: [1, 2]\n"},
    ),
    Case(
        "build-config-llm-word-for-number",
        [*BUILD, "--config", "{d}/c.yaml"],
        "setting llm.concurrency: expected int, got 'lots'",
        {"c.yaml": "llm: {concurrency: lots}\n"},
    ),
    Case(
        "build-config-llm-unused-but-wrong",  # the rule verifier calls no LLM: the section is still checked
        [*BUILD, "--config", "{d}/c.yaml"],
        "setting verifier_llm.temperature: expected float, got 'hot'",
        {"c.yaml": "verifier_llm: {temperature: hot}\n"},
    ),
    Case(
        "build-config-llm-number-for-model",
        [*BUILD, "--config", "{d}/c.yaml"],
        "setting llm.model: expected str, got 5",
        {"c.yaml": "llm: {model: 5}\n"},
    ),
    Case(
        "build-config-negative-max-rows",
        [*BUILD, "--config", "{d}/c.yaml"],
        "setting max_rows: must be at least 1",
        {"c.yaml": "max_rows: -3\n"},
    ),
    Case(
        "build-train-negatives-out-of-range",
        ["build", "train", "--out", "{d}/o", "--negatives", "13"],
        "setting n_negatives (--negatives): must be between 1 and 9, got 13",
    ),
    Case(
        "build-traces-rule-teacher-on-a-file",
        ["build", "traces", "--out", "{d}/o", "--source", "{d}/src.jsonl", "--teacher", "rule"],
        "ask a model: --teacher llm --llm-model NAME",
        {"src.jsonl": line(PAIR)},
    ),
    Case(
        "build-config-bad-rate",
        [*BUILD, "--config", "{d}/c.yaml"],
        "cue_rates",
        {"c.yaml": "cue_rates: {length: 2}\n"},
    ),
    Case(
        "build-source-missing", [*BUILD, "--source", "{d}/none.jsonl"], "none.jsonl: no such file or folder"
    ),
    Case(
        "build-source-malformed",
        [*BUILD, "--source", "{d}/src.jsonl", "--biases", "length"],
        "src.jsonl:2: field 'chosen' is missing",
        {"src.jsonl": line(PAIR) + line(PAIR, id="p2", chosen=None)},
    ),
    Case(
        "build-source-duplicate-id",
        [*BUILD, "--source", "{d}/src.jsonl", "--biases", "length"],
        "src.jsonl:2: id 'p1' repeats the record at",
        {"src.jsonl": line(PAIR) * 2},
    ),
    Case("build-llm-without-model", [*BUILD, "--rewriter", "llm"], "needs a model name"),
    Case("build-unknown-family", [*BUILD, "--families", "poetry"], "poetry"),
    Case("build-zero-count", [*BUILD, "--n", "0"], "must be at least 1 (got 0)"),
    Case(
        "build-option-of-another-stage", [*BUILD, "--negatives", "2"], "unrecognized arguments: --negatives"
    ),
    Case(
        "build-concurrency-without-an-endpoint",
        [
            "build",
            "bench",
            "--out",
            "{out}",
            "--rewriter",
            "llm",
            "--llm-backend",
            "transformers",
            "--llm-model",
            "m",
        ]
        + ["--concurrency", "4"],
        "setting llm.concurrency (--concurrency): the number of calls in flight to an endpoint (backend openai); "
        "backend 'transformers' runs the model here in batches",
    ),
    Case(
        "build-role-concurrency-without-an-endpoint",
        ["build", "bench", "--out", "{out}", "--config", "{d}/c.yaml"],
        "setting verifier_llm.concurrency: the number of calls in flight",
        {"c.yaml": "llm: {model: m, concurrency: 32}\nverifier_llm: {backend: vllm, concurrency: 2}\n"},
    ),
    Case(
        "build-train-typo-in-augment",
        ["build", "train", "--out", "{out}", "--augment", "balance"],
        "invalid choice: 'balance'",
    ),
    # ----------------------------------------------------------------------------- eval bias
    Case(
        "eval-data-missing",
        ["eval", "bias", "--judge", "{reward}", "--mode", "reward", "--data", "{d}/none", "--out", "{out}"],
        "none: no such file or folder",
        fix=RUN_RM,
    ),
    Case(
        "eval-data-a-general-benchmark",
        [*EVAL_RM, "{d}/llmbar.jsonl", "--out", "{out}"],
        "llmbar.jsonl: a general benchmark in the llmbar layout, not bias probes; `biasaware eval general",
        {"llmbar.jsonl": line({"input": "q", "output_1": "a", "output_2": "b", "label": 1})},
        fix=RUN_RM,
    ),
    Case(
        "eval-unknown-judge",
        ["eval", "bias", "--judge", "smolm2", "--data", "{bench}", "--out", "{out}"],
        "use a built-in name (smollm2-135m-instruct, minilm-l6)",
        fix=RUN_RM,
    ),
    Case(
        "eval-out-holds-other-files",
        ["eval", "bias", "--judge", "{reward}", "--mode", "reward", "--data", "{bench}", "--out", "{d}/mine"],
        "mine is not empty and holds no eval run (notes.txt); use a new --out",
        {"mine/notes.txt": "mine"},
        out_may_exist=True,
    ),
    Case(
        "eval-out-holds-someone-elses-fingerprint",
        ["eval", "bias", "--judge", "{reward}", "--mode", "reward", "--data", "{bench}", "--out", "{d}/fp"],
        "fingerprint.json is not the record of an eval run (no judge and items); use a new --out",
        {"fp/notes.txt": "mine", "fp/fingerprint.json": '{"sha": "abc", "tool": "other"}'},
        out_may_exist=True,
    ),
    Case(
        "eval-general-out-holds-other-files",
        [
            "eval",
            "general",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--benchmark",
            "{d}/p.jsonl",
            "--out",
            "{d}/mine",
        ],
        "mine is not empty and holds no eval run (notes.txt); use a new --out",
        {"mine/notes.txt": "mine", "p.jsonl": json.dumps(PAIR) + "\n"},
        out_may_exist=True,
    ),
    Case(
        "eval-out-is-the-data",
        ["eval", "bias", "--judge", "{reward}", "--mode", "reward", "--data", "{bench}", "--out", "{bench}"],
        "is the benchmark folder",
        out_may_exist=True,
    ),
    Case(
        "eval-probe-file-twice",
        ["eval", "bias", "--judge", "{reward}", "--mode", "reward", "--data", "{d}/twice", "--out", "{out}"],
        "twice/b.jsonl:1: id 'q1' repeats the record at",
        {"twice/a.jsonl": line(PROBE), "twice/b.jsonl": line(PROBE)},
    ),
    Case(
        "eval-unknown-template",
        [
            "eval",
            "bias",
            "--judge",
            "{reward}",
            "--template",
            "mtbnech",
            "--data",
            "{bench}",
            "--out",
            "{out}",
        ],
        "mtbnech",
    ),
    Case("eval-typo-in-biases", [*RUN_RM, "--biases", "lenght"], "unknown bias 'lenght'", fix=RUN_RM),
    Case("eval-zero-limit", [*RUN_RM, "--limit", "0"], "must be at least 1 (got 0)"),
    Case(
        "eval-out-is-a-file",
        [
            "eval",
            "bias",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--data",
            "{bench}",
            "--out",
            "{d}/afile",
        ],
        "afile",
        {"afile": "x"},
        out_may_exist=True,
    ),
    Case(
        "eval-without-judge",
        ["eval", "bias", "--data", "{bench}", "--out", "{out}"],
        "eval bias needs --judge (or --rescore with an earlier --out)",
    ),
    Case(
        "eval-bias-not-in-the-benchmark",
        [*RUN_RM, "--biases", "bandwagon"],
        "has no probes of bandwagon (it has: length, authority)",
    ),
    Case(
        "eval-reward-model-on-a-prompt-bias",
        [
            "eval",
            "bias",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--data",
            "{d}/bw.jsonl",
            "--out",
            "{out}",
        ],
        "no probes to judge (a reward model or pointwise judge skips bandwagon",
        {
            "bw.jsonl": line(
                PROBE,
                bias="bandwagon",
                category="context",
                injected={**VIEW, "context": "90% of people prefer Response B."},
            )
        },
    ),
    Case("eval-unknown-device", [*RUN_RM, "--device", "gpu"], "unknown device 'gpu'"),
    Case(
        "eval-pairs-as-probes",
        [
            "eval",
            "bias",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--data",
            "{d}/p.jsonl",
            "--out",
            "{out}",
        ],
        "p.jsonl:1: a pair record, not a probe record; `biasaware eval general --benchmark` judges pairs; `biasaware build "
        "bench --source FILE` makes bias probes of them",
        {"p.jsonl": line(PAIR)},
    ),
    Case(  # said at the file's first row, not a missing field per row, though another file comes first
        "eval-a-pair-file-among-probes",
        [*RUN_RM[:-4], "--data", "{d}/b", "--out", "{out}"],
        "b/pairs.jsonl:1: a pair record, not a probe record; `biasaware eval general --benchmark` judges pairs",
        {
            "b/a.jsonl": line(PROBE, injected={**VIEW, "response_a": "99"}),
            "b/pairs.jsonl": line(PAIR) + line(PAIR, id="p2"),
        },
    ),
    Case(
        "eval-data-is-a-manifest",
        [*RUN_RM[:-4], "--data", "{d}/b/manifest.json", "--out", "{out}"],
        "b/manifest.json is a build's manifest; give the build folder",
        {"b/manifest.json": json.dumps({"kind": "bench"})},
    ),
    Case("eval-another-stage-option", [*RUN_RM, "--benchmark", "x"], "unrecognized arguments: --benchmark"),
    # ------------------------------------------------------------------------------- rescore
    Case(
        "rescore-nothing-there",
        ["eval", "bias", "--rescore", "--out", "{d}/empty"],
        "judgments.jsonl",
        {"empty/.keep": ""},
        out_may_exist=True,
    ),
    Case(
        "rescore-empty-judgments",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "r/judgments.jsonl holds no judgments; nothing to score",
        {"r/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case(  # a bad value named as itself, not as a resumed build's other setting
        "build-typo-in-biases-over-a-build",
        ["build", "bench", "--n", "2", "--biases", "Lenth", "--out", "{d}/eb"],
        "unknown bias 'Lenth' (did you mean 'length'?)",
        {"eb/manifest.json": json.dumps({"kind": "bench", "config": {"biases": "length"}})},
        out_may_exist=True,
    ),
    Case(
        "rescore-without-meta-bias",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "have no meta.bias",
        {"r/judgments.jsonl": judgment(meta={}) + judgment("injected", meta={})},
        out_may_exist=True,
    ),
    Case(
        "rescore-unknown-bias",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "judgments.jsonl:1: field 'meta': meta.bias 'lenght'",
        {"r/judgments.jsonl": judgment(meta={"bias": "lenght"})},
        out_may_exist=True,
    ),
    Case(
        "rescore-without-correct",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "judgments.jsonl:2: correct is missing",
        {"r/judgments.jsonl": judgment() + judgment("injected", correct=None)},
        out_may_exist=True,
    ),
    Case(
        "rescore-unknown-view",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "judgments.jsonl:2: view 'sideways'",
        {"r/judgments.jsonl": judgment() + judgment("sideways")},
        out_may_exist=True,
    ),
    Case(
        "rescore-one-view-only",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "no probe has judgments on both views",
        {"r/judgments.jsonl": judgment()},
        out_may_exist=True,
    ),
    Case(
        "rescore-invalid-json",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "judgments.jsonl:2: invalid JSON",
        {"r/judgments.jsonl": judgment() + "{oops\n" + judgment("injected")},
        out_may_exist=True,
    ),
    Case(
        "rescore-repeated-view",
        ["eval", "bias", "--rescore", "--out", "{d}/r"],
        "judgments.jsonl:3: probe_id and view ('q1', 'original') repeats",
        {"r/judgments.jsonl": BOTH_VIEWS + judgment()},
        out_may_exist=True,
    ),
    # ------------------------------------------------------------------------------- general
    Case(
        "general-benchmark-missing",
        [
            "eval",
            "general",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--benchmark",
            "{d}/none.jsonl",
            "--out",
            "{out}",
        ],
        "none.jsonl: no such file or folder",
    ),
    Case(
        "general-bad-row",
        [
            "eval",
            "general",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--benchmark",
            "{d}/jb.jsonl",
            "--out",
            "{out}",
        ],
        "jb.jsonl:1: field 'label' must be 'A>B' or 'B>A'",
        {"jb.jsonl": line({"question": "q", "response_A": "x", "response_B": "y", "label": "A=B"})},
    ),
    Case(
        "general-unknown-columns",
        [
            "eval",
            "general",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--benchmark",
            "{d}/x.jsonl",
            "--out",
            "{out}",
        ],
        "unrecognised benchmark columns",
        {"x.jsonl": line({"q": 1})},
    ),
    Case(
        "general-split-of-a-file",
        [*GENERAL_RM, "--split", "test"],
        "split 'test': {d}/rb.jsonl is one file, read whole",
        ONE_PAIR,
        fix=GENERAL_RM,
    ),
    Case(  # a folder of plain JSONL files is read whole too, as one file is
        "general-split-of-a-folder-of-files",
        ["eval", "general", "--judge", "{reward}", "--benchmark", "{d}", "--out", "{out}", "--split", "test"],
        "split 'test': {d} is a folder of data files, read whole",
        ONE_PAIR,
        fix=GENERAL_RM,
    ),
    Case(
        "general-given-scoring-items",
        GENERAL_RM,
        "rb.jsonl:1: an item to score (one response and its gold score), not a preference pair",
        {"rb.jsonl": line(ITEM)},
    ),
    Case(  # a probe folder handed to eval general: named as probes, with the command that judges them
        "general-given-bias-probes",
        GENERAL_RM,
        "rb.jsonl:1: a bias probe (an original and an injected view), not a preference pair; "
        "`biasaware eval bias --data` judges probes",
        {"rb.jsonl": line(PROBE)},
    ),
    Case(
        "general-max-tokens-of-a-reward-model",
        [*GENERAL_RM, "--max-tokens", "9"],
        "--max-tokens 9: mode 'reward' writes no reply",
        ONE_PAIR,
        fix=GENERAL_RM,
    ),
    Case(  # typed at its default value: typed all the same, and still unread
        "general-max-tokens-at-its-default",
        [*GENERAL_RM, "--max-tokens", "512"],
        "--max-tokens 512: mode 'reward' writes no reply",
        ONE_PAIR,
        fix=GENERAL_RM,
    ),
    Case(
        "general-without-benchmark",
        ["eval", "general", "--judge", "{reward}", "--out", "{out}"],
        "eval general needs --benchmark (or --rescore with an earlier --out)",
    ),
    # ------------------------------------------------------------------------------- scoring
    Case(
        "scoring-bad-item",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:2: field 'gold' is not a score from 1 to 5 (got 9)",
        {"s.jsonl": line(ITEM) + line(ITEM, id="b", gold=9), "good.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/good.jsonl"],
    ),
    Case(  # a typo of a field would be read as no value: the gold or the references lost unsaid
        "scoring-item-with-an-unknown-field",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:2: unknown field 'glod'; did you mean 'gold'? (put extra data under 'meta')",
        {"s.jsonl": line(ITEM) + line(ITEM, id="b", gold=None, glod=3), "good.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/good.jsonl"],
    ),
    Case(  # true made text would be an id the file never wrote
        "scoring-item-id-that-is-no-id",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:2: field 'id' is True: an item's id is text or a whole number",
        {"s.jsonl": line(ITEM) + line(ITEM, id=True), "good.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/good.jsonl"],
    ),
    Case(  # named as missing, not as a null value
        "scoring-item-without-a-response",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:1: field 'response' is missing",
        {"s.jsonl": line(ITEM, response=None)},
    ),
    Case(
        "scoring-reviewer-without-writer",
        [*SCORE_RM, "{d}/good.jsonl", "--reference-reviewer", "m", "--reference-backend", "openai"],
        "--reference-reviewer m, --reference-backend openai set up the reference writer, and none is given",
        {"good.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/good.jsonl"],
    ),
    Case(  # the default backend and the attempts, typed: they too set up a writer that is not there
        "scoring-backend-and-attempts-without-writer",
        [*SCORE_RM, "{d}/good.jsonl", "--reference-backend", "transformers", "--reference-attempts=2"],
        "--reference-backend transformers, --reference-attempts 2 set up the reference writer, and none is given",
        {"good.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/good.jsonl"],
    ),
    Case(  # a folder of bias probes: the first row is no item to score, said with its file
        "scoring-given-a-bench-folder",
        [*SCORE_RM, "{bench}"],
        "{bench}/authority-mirror.jsonl:1: a probe record, not a scoring record; `biasaware eval bias --data` judges",
        {"good.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/good.jsonl"],
    ),
    Case(
        "scoring-given-pairs",
        [*SCORE_RM, "{d}/pairs.jsonl"],
        "pairs.jsonl:1: a preference pair (rewardbench layout), not an item to score",
        {"pairs.jsonl": line({"prompt": "q", "chosen": "a", "rejected": "b"}) * 30, "good.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/good.jsonl"],
    ),
    Case(
        "scoring-biggen-rubric-lacks-a-level",
        [*SCORE_RM, "{d}/b.json"],
        "b.json: record 'x': field 'score_rubric' is missing score3_description",
        {
            "b.json": json.dumps(
                {"x": {"input": "Q", "response": "r", "score_rubric": {**RUBRIC, "score3_description": ""}}}
            )
        },
    ),
    Case(
        "scoring-no-instruction",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:1: no instruction: give 'instruction'",
        {"s.jsonl": line(ITEM, instruction=None)},
    ),
    Case(
        "scoring-bad-template",
        [*SCORE_RM, "{d}/s.jsonl", "--templates", "desc,dsc"],
        "scoring template 'dsc': unknown part 'dsc'",
        {"s.jsonl": line(ITEM)},
        fix=[*SCORE_RM, "{d}/s.jsonl"],  # a reward model reads no scoring template
    ),
    Case(
        "scoring-without-data",
        ["eval", "scoring", "--judge", "{reward}", "--out", "{out}"],
        "eval scoring needs --data (or",
    ),
    Case(
        "scoring-rescore-without-run", ["eval", "scoring", "--rescore", "--out", "{out}"], "--rescore needs"
    ),
    Case(
        "scoring-pointwise-reward",
        [*RUN_RM, "--pointwise", "rubric"],
        "a reward model already scores each response alone",
    ),
    # ----------------------------------------------------------------------------- preflight
    Case(
        "preflight-threshold-order",
        [
            *PREFLIGHT_RM,
            "{d}/t.yaml",
        ],
        "t.yaml: bsr: warn (0.3) must be at or below fail (0.2)",
        {"t.yaml": "bsr: {warn: 0.3, fail: 0.2}\n"},
    ),
    Case(
        "preflight-unknown-threshold",
        [
            *PREFLIGHT_RM,
            "{d}/t.yaml",
        ],
        "t.yaml: unknown setting 'bsrr'",
        {"t.yaml": "bsrr: {warn: 0.1, fail: 0.2}\n"},
    ),
    Case(
        "preflight-thresholds-missing",
        [
            *PREFLIGHT_RM,
            "{d}/none.yaml",
        ],
        "none.yaml: no such file",
    ),
    Case(
        "preflight-out-holds-other-files",
        ["preflight", "--judge", "{reward}", "--mode", "reward", "--out", "{d}/mine"],
        "mine is not empty and holds no preflight (notes.txt); use a new --out",
        {"mine/notes.txt": "mine"},
        out_may_exist=True,
    ),
    Case(
        "preflight-out-is-an-eval-folder",
        ["preflight", "--judge", "{reward}", "--mode", "reward", "--out", "{d}/ev"],
        "ev is not empty and holds no preflight (fingerprint.json, judgments.jsonl)",
        {"ev/fingerprint.json": '{"judge": {}, "items": {}}', "ev/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case(
        "preflight-unknown-judge",
        ["preflight", "--judge", "smollm2-135m-instrct", "--out", "{out}"],
        "'smollm2-135m-instrct' names no local file or folder",
    ),
    Case(
        "judge-name-no-hub-could-hold",
        ["eval", "bias", "--judge", "heuristic:length", "--data", "{d}/none", "--out", "{out}"],
        "'heuristic:length' names no local file or folder, nor a model name the hub could hold",
    ),
    Case("preflight-bad-per-bias", ["preflight", "--judge", "x", "--per-bias", "0"], "must be at least 1"),
    # ------------------------------------------------------------------------------- compare
    Case(
        "compare-out-is-a-folder",
        ["eval", "compare", "--runs", "{run}", "{d}/other", "--out", "{d}"],
        "is a folder; give a JSON file path",
        {"other/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case(
        "compare-out-not-writable",
        ["eval", "compare", "--runs", "{run}", "{d}/other", "--out", "/proc/biasaware-test/c.json"],
        "/proc/biasaware-test",
        {"other/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case(
        "compare-out-inside-a-run",
        ["eval", "compare", "--runs", "{run}", "{d}/other", "--out", "{run}/summary.json"],
        "--out {run}/summary.json is inside the compared run {run}: it would write among that run's files",
        {"other/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case(
        "compare-out-under-a-file",
        ["eval", "compare", "--runs", "{run}", "{d}/other", "--out", "{d}/afile/c.json"],
        "--out {d}/afile/c.json: {d}/afile is a file; give a JSON file path in a folder",
        {"other/judgments.jsonl": "", "afile": "x"},
        out_may_exist=True,
    ),
    Case(
        "compare-empty-out",
        ["eval", "compare", "--runs", "{run}", "{d}/other", "--out", ""],
        "--out is empty: give a JSON file path",
        {"other/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case("compare-the-same-run-twice", ["eval", "compare", "--runs", "{run}", "{run}"], "names {run} twice"),
    Case("compare-run-without-judgments", ["eval", "compare", "--runs", "{run}", "{d}/none"], "none"),
    Case(  # named as without --baseline
        "compare-missing-run-with-a-baseline",
        ["eval", "compare", "--runs", "{d}/none", "{run}", "--baseline", "{run}"],
        "--runs {d}/none: no such folder",
    ),
    Case("compare-one-run", ["eval", "compare", "--runs", "{run}"], "--runs: give two folders"),
    Case(
        "eval-resumed-in-another-dtype",
        [*RUN_RM[:-1], "{run}", "--dtype", "float16"],  # judged in float32 (bfloat16 on a GPU)
        "there, 'float16' now)",
        out_may_exist=True,
    ),
    Case(
        "rescore-with-a-judge",
        ["eval", "bias", "--rescore", "--out", "{run}", "--judge", "another"],
        "--judge another is not used",
    ),
    Case(
        "rescore-with-judge-settings",  # a rescore loads no model: these would be ignored
        ["eval", "bias", "--rescore", "--out", "{run}", "--mode", "direct", "--concurrency", "4"],
        "--mode direct, --concurrency 4 are not used",
    ),
    Case(
        "rescore-with-the-input",  # a rescore reads the judgments only: another benchmark would relabel them
        ["eval", "general", "--rescore", "--out", "{run}", "--benchmark", "{d}/rb.jsonl", "--limit", "2"],
        "--benchmark {d}/rb.jsonl, --limit 2 are not used",
    ),
    Case(
        "general-a-pair-id-twice",
        [
            "eval",
            "general",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--benchmark",
            "{d}/rb.jsonl",
            "--out",
            "{out}",
        ],
        "rb.jsonl:2: pair id 'p1' repeats the row at {d}/rb.jsonl:1",
        {"rb.jsonl": '{"id": "p1", "prompt": "q", "chosen": "a", "rejected": "b"}\n' * 2},
    ),
    Case(
        "scoring-gold-not-a-number",  # true, "5" or [4, "x"] is no gold score: never read as 1, 5 or 4
        [
            "eval",
            "scoring",
            "--judge",
            "{reward}",
            "--mode",
            "reward",
            "--data",
            "{d}/items.jsonl",
            "--out",
            "{out}",
        ],
        "items.jsonl:1: field 'gold': input should be a valid number (got true)",
        {"items.jsonl": '{"id": "a", "instruction": "2+2?", "response": "4", "gold": true}\n'},
    ),
    Case(
        "scoring-templates-that-name-none",  # neither the defaults nor the baseline alone
        [
            "eval",
            "scoring",
            "--judge",
            "{reward}",
            "--data",
            "{d}/items.jsonl",
            "--out",
            "{out}",
            "--templates",
            ",",
        ],
        "--templates ',' names no template; leave it out for the defaults",
    ),
    Case(  # a problem of a field read under another name names the row's own field
        "scoring-gold-read-from-human-score",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:1: field 'human_score' is not a score from 1 to 5 (got 7)",
        {"s.jsonl": line({**ITEM, "gold": None, "human_score": 7})},
    ),
    Case(
        "scoring-prometheus-rubric-line-missing",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:1: field 'orig_score3_description'",
        {
            "s.jsonl": line(
                {
                    "orig_instruction": "x",
                    "orig_response": "y",
                    "orig_criteria": "c",
                    **{f"orig_score{k}_description": "d" for k in (1, 2, 4, 5)},
                    "gold": 3,
                }
            )
        },
    ),
    Case(  # a row without an id takes its row number, here another row's id
        "scoring-row-number-is-another-rows-id",
        [*SCORE_RM, "{d}/s.jsonl"],
        "s.jsonl:3: has no id, so its row number '3' stands for one, and the record at",
        {
            "s.jsonl": line({**ITEM, "id": "3"})
            + line({**ITEM, "id": "b"})
            + line({k: v for k, v in ITEM.items() if k != "id"})
        },
    ),
    Case(  # the seed drew the rubric orders judged: a rescore keeps the recorded one, so a --seed went unread
        "scoring-rescore-with-a-seed",
        ["eval", "scoring", "--rescore", "--out", "{run}", "--seed", "5"],
        "--seed 5 is not used",
    ),
    Case(
        "rescore-with-a-reference-writer",
        ["eval", "scoring", "--rescore", "--out", "{run}", "--reference-writer", "w"],
        "--reference-writer w is not used",
    ),
    Case(
        "build-a-device-that-is-not-there",
        ["build", "bench", "--n", "2", "--biases", "length", "--device", "cuda:7", "--out", "{out}"],
        "cuda:7",
        fix=["build", "bench", "--n", "2", "--biases", "length", "--out", "{out}"],
    ),
    Case(
        "compare-unfinished-run",
        ["eval", "compare", "--runs", "{run}", "{d}/bad"],
        "bad: an `eval bias` run that did not finish (no summary.json); run its command again",
        {"bad/fingerprint.json": "{}", "bad/judgments.jsonl": ""},
    ),
    Case(
        "compare-general-run",
        ["eval", "compare", "--runs", "{run}", "{d}/bad"],
        "bad is an `eval general` run; eval compare compares `eval bias` runs",
        {"bad/judgments.jsonl": "", "bad/summary.json": '{"benchmark": "b.jsonl"}'},
    ),
    Case(
        "compare-corrupt-fingerprint",
        ["eval", "compare", "--runs", "{run}", "{d}/bad"],
        "bad/fingerprint.json: not valid JSON",
        {"bad/fingerprint.json": '{"judge": 5', "bad/judgments.jsonl": "", "bad/summary.json": FINISHED},
    ),
    Case(
        "compare-fingerprint-not-an-object",
        ["eval", "compare", "--runs", "{run}", "{d}/bad"],
        "a run fingerprint is a JSON object, got a JSON list",
        {"bad/fingerprint.json": "[]", "bad/judgments.jsonl": "", "bad/summary.json": FINISHED},
    ),
    Case(
        "eval-base-url-without-the-openai-backend",
        [
            "eval",
            "bias",
            "--judge",
            "served",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--data",
            "{bench}",
            "--out",
            "{out}",
        ],
        "use backend 'openai' (--backend openai)",
    ),
    Case(
        "release-data-a-file",
        ["release", "--data", "{d}/rows.jsonl"],
        "rows.jsonl is a file; give the folder",
        {"rows.jsonl": ""},
    ),
    # a build folder whose manifest is broken: each names the manifest and what is wrong with it
    *[
        Case(
            f"release-data-{label}",
            ["release", "--data", "{d}/rd"],
            says,
            {"rd/manifest.json": manifest, **files},
        )
        for label, manifest, says, files in [
            ("corrupt-manifest", "{", "rd/manifest.json: not valid JSON", {"rd/length.jsonl": ""}),
            ("manifest-not-an-object", "[1, 2]", "a build manifest is a JSON object, got a JSON list", {}),
            (
                "outputs-a-string",
                '{"outputs": "length.jsonl"}',
                "field 'outputs' is a list of file names",
                {"rd/length.jsonl": ""},
            ),
            ("outputs-outside", '{"outputs": ["../x.jsonl"]}', "not a file of", {"x.jsonl": ""}),
            ("no-outputs", '{"kind": "probe"}', "field 'outputs' is missing", {"rd/length.jsonl": ""}),
        ]
    ],
    Case(
        "compare-a-run-twice-with-a-baseline",
        ["eval", "compare", "--runs", "{run}", "{run}", "--baseline", "{d}"],
        "a run is given twice",
    ),
    # ---------------------------------------------------------------------------- quickstart
    Case(
        "quickstart-out-is-a-file",
        ["quickstart", "--out", "{d}/afile"],
        "afile",
        {"afile": "x"},
        out_may_exist=True,
    ),
    Case(
        "quickstart-another-seed",
        ["quickstart", "--out", "{d}/q", "--seed", "1"],
        "holds a quickstart run with other settings (seed: 0 there, 1 now); use a new --out",
        {"q/quickstart.json": '{"seed": 0}', "q/eval/x/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case(  # refused before anything is built: its judgments would be of another dtype
        "quickstart-another-dtype",
        ["quickstart", "--out", "{d}/q", "--dtype", "bfloat16"],
        "holds a quickstart run with other settings (dtype: 'float32' (the default) there, 'bfloat16' now)",
        {"q/quickstart.json": '{"seed": 0}', "q/eval/x/judgments.jsonl": ""},
        out_may_exist=True,
    ),
    Case(
        "quickstart-a-folder-of-other-things",
        ["quickstart", "--out", "{d}/q"],
        "is not empty and holds no quickstart run",
        {"q/notes.txt": "mine"},
        out_may_exist=True,
    ),
    Case(
        "quickstart-unknown-device",
        ["quickstart", "--out", "{out}", "--device", "tpu"],
        "unknown device 'tpu'",
    ),
    # ----------------------------------------------------------------------- sweep, release
    Case("sweep-bad-grid", ["sweep", "--out", "{out}", "--grid", "num_bias_negatives"], "expected KEY=V1,V2"),
    Case(
        "sweep-bad-seeds",
        ["sweep", "--out", "{out}", "--seeds", "zero"],
        "--seeds 'zero': expected seeds like 0-9 or 0,1,2",
    ),
    Case(
        "sweep-config-invalid-yaml",
        ["sweep", "--out", "{out}", "--config", "{d}/s.yaml"],
        "s.yaml:1:",
        {"s.yaml": "grid: {a: [1}\n"},
    ),
    Case(
        "sweep-config-key-twice",
        ["sweep", "--out", "{out}", "--config", "{d}/s.yaml"],
        "s.yaml:3:1: invalid YAML (key 'grid' is given twice in one mapping)",
        {"s.yaml": "grid:\n  learning_rate: [1.0e-4]\ngrid:\n  learning_rate: [2.0e-4]\n"},
    ),
    Case(
        "release-report-not-an-eval",
        ["release", "--checkpoint", "{reward}", "--report", "{d}", "--out", "{out}"],
        "summary.json: no such file (the report: an `eval bias` or `eval real` output folder)",
    ),
    # ------------------------------------------------------------------------------- recipes
    Case(
        "recipe-config-missing",
        ["recipe:reward", "--config", "{d}/none.yaml"],
        "recipe config {d}/none.yaml: no such file",
    ),
    Case(
        "recipe-config-a-folder",
        ["recipe:reward", "--config", "{d}"],
        "recipe config {d}: a folder; give a file",
    ),
    Case(
        "recipe-config-invalid-yaml",
        ["recipe:reward", "--config", "{d}/r.yaml"],
        "r.yaml:2:1: invalid YAML",
        {"r.yaml": "learning_rate: [1\n"},
    ),
    Case(
        "recipe-config-misspelled-key",
        ["recipe:reward", "--config", "{d}/r.yaml"],
        "r.yaml: unknown setting(s) 'lerning_rate' (did you mean 'learning_rate'?)",
        {"r.yaml": RECIPE_CONFIG + "lerning_rate: 1e-5\n"},
    ),
    Case(  # traces carry their own prompts: settings that shape training rows' prompts went unread
        "recipe-sft-traces-with-verdict-settings",
        ["recipe:sft", "--config", "{d}/r.yaml", "--output_dir", "{out}", "--both_orders", "true"],
        "both_orders shape(s) the judge prompts of training rows (targets: verdicts)",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case(  # loaded and tokenized, never evaluated: eval_strategy is no by default
        "recipe-reward-eval-file-never-evaluated",
        ["recipe:reward", "--config", "{d}/r.yaml", "--output_dir", "{out}", "--eval_file", "{d}/e.jsonl"],
        "eval_file is evaluated every eval_steps with eval_strategy steps",
        {"r.yaml": RECIPE_CONFIG},
    ),
    *(  # values a recipe took and then trained nothing with, or failed on after the model loaded
        Case(
            f"recipe-{recipe}-{flag}-{value}",
            [
                f"recipe:{recipe}",
                "--config",
                "{d}/r.yaml",
                "--output_dir",
                "{out}",
                f"--{flag}",
                value,
                *more,
            ],
            said,
            {"r.yaml": RECIPE_CONFIG},
        )
        for recipe, flag, value, more, said in (
            (
                "grpo",
                "temperature",
                "0",
                [],
                "temperature: above 0 (GRPO samples its completions at it); got 0.0",
            ),
            ("grpo", "max_completion_length", "0", [], "max_completion_length: at least 1 token; got 0"),
            ("sft", "max_length", "-5", [], "max_length: at least 1 token; got -5"),
            (
                "grpo",
                "rewards",
                "swap_consistency",
                ["--reward_weights", "1.0"],
                "only both_orders: true puts",
            ),
            (
                "reward",
                "center_rewards_coefficient",
                "0.5",
                [],
                "center_rewards_coefficient: 0.5: TRL's settings",
            ),
            ("reward", "label_smoothing_factor", "0.3", [], "label_smoothing_factor: 0.3: TRL's settings"),
        )
    ),
    Case(  # a build's record beside its data: read as rows, it gave a line per field
        "recipe-train-file-a-manifest",
        [
            "recipe:reward",
            "--config",
            "{d}/r.yaml",
            "--output_dir",
            "{out}",
            "--train_file",
            "{d}/manifest.json",
        ],
        "manifest.json: a record biasaware keeps beside data, not training rows; give the data file beside it",
        {"r.yaml": RECIPE_CONFIG, "manifest.json": json.dumps({"kind": "train", "rows": 8})},
    ),
    Case(  # it named select_pool's derived -12, a value never given
        "recipe-grpo-negative-select-prompts",
        ["recipe:grpo", "--config", "{d}/r.yaml", "--output_dir", "{out}", "--select_prompts", "-3"],
        "select_prompts: a number of prompts, at least 1 (or 0: no selection); got -3",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case(  # SFT would teach a reply that contradicts its label
        "recipe-sft-trace-contradicting-its-label",
        ["recipe:sft", "--config", "{d}/r.yaml", "--output_dir", "{out}", "--train_file", "{d}/t.jsonl"],
        "t.jsonl:1: field 'label' is A, but the completion answers B",
        {
            "r.yaml": RECIPE_CONFIG,
            "t.jsonl": line(
                {
                    "id": "t1",
                    "bias": "length",
                    "prompt": [{"role": "user", "content": "Which is better?"}],
                    "completion": [{"role": "assistant", "content": "<think>B.</think><answer>B</answer>"}],
                    "label": "A",
                }
            ),
        },
    ),
    Case(  # transformers would train into ./trainer_output, unsaid
        "recipe-without-an-output-dir",
        ["recipe:reward", "--config", "{d}/r.yaml"],
        "no output_dir: set where the trained model goes",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case(  # a YAML number skips argparse's own check: 1.5 steps failed in training, after the model loaded
        "recipe-config-a-fraction-for-a-count",
        ["recipe:reward", "--config", "{d}/r.yaml"],
        "r.yaml: setting 'max_steps': expected int, got 1.5",
        {"r.yaml": RECIPE_CONFIG + "max_steps: 1.5\n"},
    ),
    Case(  # a string argparse would refuse, overridden by a flag: argparse never reads it, the file is still wrong
        "recipe-config-a-word-for-a-number-a-flag-overrides",
        ["recipe:reward", "--config", "{d}/r.yaml", "--warmup_steps", "0"],
        "r.yaml: setting 'warmup_steps': expected float, got 'abc'",
        {"r.yaml": RECIPE_CONFIG + "warmup_steps: abc\n"},
    ),
    Case(
        "recipe-a-negative-number-after-a-flag-is-its-value",
        ["recipe:reward", "--config", "{d}/r.yaml", "--max_grad_norm", "-inf"],
        "max_grad_norm: a finite number; got -inf (0 turns gradient clipping off)",
        {"r.yaml": RECIPE_CONFIG},
    ),
    *(
        Case(
            f"recipe-blank-{key}",
            ["recipe:reward", "--config", "{d}/r.yaml", "--output_dir", "{out}"],
            f"r.yaml: setting '{key}' is left blank; give it a value, or leave the line out",
            {"r.yaml": RECIPE_CONFIG + f"{key}:\n"},
        )
        for key in ("train_file", "max_steps", "tau")
    ),
    Case(
        "recipe-blank-output-dir",
        ["recipe:reward", "--config", "{d}/r.yaml"],
        "no output_dir: set where the trained model goes",
        {"r.yaml": RECIPE_CONFIG + "output_dir:\n"},
    ),
    Case(
        "recipe-no-model",
        ["recipe:reward", "--config", "{d}/r.yaml", "--output_dir", "{out}"],
        "no model_name_or_path: the model to train from",
        {"r.yaml": "use_cpu: true\n"},
    ),
    Case(
        "recipe-empty-train-file",
        ["recipe:reward", "--config", "{d}/r.yaml", "--output_dir", "{out}", "--train_file", ""],
        "train_file is empty",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case(
        "recipe-trust-remote-code",
        ["recipe:sft", "--config", "{d}/r.yaml", "--output_dir", "{out}", "--trust_remote_code", "true"],
        "trust_remote_code: true: the recipes load a model folder or hub name as it is",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case(
        "recipe-config-not-a-mapping",
        ["recipe:sft", "--config", "{d}/r.yaml"],
        "r.yaml: a recipe config is a mapping",
        {"r.yaml": "- 1\n"},
    ),
    Case(
        "recipe-unknown-flag",
        ["recipe:grpo", "--config", "{d}/r.yaml", "--lerning_rate", "1"],
        "--lerning_rate",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case("recipe-no-settings", ["recipe:reward"], "no settings: give --config FILE"),
    Case(
        "recipe-two-configs",
        ["recipe:reward", "--config", "{d}/r.yaml", "--config", "{d}/r.yaml"],
        "--config is given twice: a recipe reads one config file",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case("recipe-config-without-its-file", ["recipe:sft", "--config"], "--config needs a file"),
    Case(
        "recipe-config-with-equals-is-read",
        ["recipe:reward", "--config={d}/r.yaml"],
        "r.yaml: unknown setting(s) 'lerning_rate'",
        {"r.yaml": RECIPE_CONFIG + "lerning_rate: 1e-5\n"},
    ),
    Case(
        "recipe-abbreviated-flag",
        ["recipe:reward", "--config", "{d}/r.yaml", "--learning_rat", "1e-3"],
        "--learning_rat",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case(
        "recipe-output-dir-is-a-file",
        ["recipe:reward", "--config", "{d}/r.yaml", "--output_dir", "{d}/afile"],
        "output_dir {d}/afile: {d}/afile is a file",
        {"r.yaml": RECIPE_CONFIG, "afile": "x"},
    ),
    Case(  # named as the setting, which a config and a flag both set
        "recipe-config-output-dir-not-writable",
        ["recipe:reward", "--config", "{d}/r.yaml"],
        "error: output_dir /proc/biasaware-test/out: cannot write in /proc",
        {"r.yaml": RECIPE_CONFIG + "output_dir: /proc/biasaware-test/out\n"},
    ),
    Case(
        "recipe-output-dir-not-writable",
        ["recipe:reward", "--config", "{d}/r.yaml", "--output_dir", "/proc/biasaware-test/out"],
        "output_dir /proc/biasaware-test/out: cannot write in /proc",
        {"r.yaml": RECIPE_CONFIG},
    ),
    Case(
        "recipe-missing-model",
        ["recipe:reward", *NO_MODEL],
        "no-model",
        {
            "r.yaml": RECIPE_CONFIG,
            "t.jsonl": line(
                {"id": "r1", "prompt": [{"role": "user", "content": "q"}], "chosen": "a b", "rejected": "c"}
            ),
        },
    ),
    *(
        Case(  # the training file is read before the model loads: a typo in it costs no model load
            f"recipe-{recipe}-bad-rows-before-the-model",
            [f"recipe:{recipe}", *NO_MODEL],
            "t.jsonl:1: invalid JSON",
            {"r.yaml": RECIPE_CONFIG, "t.jsonl": "{oops\n"},
        )
        for recipe in ("reward", "grpo", "sft")
    ),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_models):
    """The finished things the cases refer to: a benchmark, a reward model, an eval run."""
    root = tmp_path_factory.mktemp("world")
    assert (
        main(["build", "bench", "--n", "3", "--biases", "length,authority", "--out", str(root / "bench")])
        == 0
    )
    places = {"bench": str(root / "bench"), "reward": str(tiny_models["reward"]), "run": str(root / "run")}
    places["causal"] = str(tiny_models["causal"])
    assert main([a.format(out=places["run"], **places) for a in RUN_RM]) == 0
    return places


def files_under(folder) -> list[str]:
    return (
        sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
        if folder.is_dir()
        else []
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_exits_2_naming_where_and_leaves_nothing_in_the_way(
    case, world, tmp_path, monkeypatch, cli
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # hub names are decided from the cache, at once
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    places = {**world, "d": str(tmp_path), "out": str(tmp_path / "out")}
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    code, text = cli([a.format(**places) for a in case.argv])
    assert code == 2, text
    assert case.says.format(**places) in text, text
    assert "Traceback" not in text
    if not case.out_may_exist:
        assert files_under(tmp_path / "out") == [], "a failed command left files in --out"
    if case.fix:
        code, text = cli([a.format(**places) for a in case.fix])
        assert code == 0, text


def test_an_unwritable_out_is_refused_before_the_built_in_model_is_converted(tmp_path, monkeypatch, cli):
    """The generative study reads its model's configuration before it claims --out; on a first run that
    converts the built-in model (about 20 s on 2 cores), which a folder it cannot write must not cost."""
    monkeypatch.setenv("BIASAWARE_CACHE", str(tmp_path / "cache"))
    code, text = cli(["quickstart", "--generative", "--out", "/proc/biasaware-test/out"])
    assert code == 2 and "--out /proc/biasaware-test/out: cannot write in /proc" in text, text
    assert not (tmp_path / "cache").exists(), "the model was converted before --out was checked"


@pytest.mark.parametrize("cut", [0.5, 0.0])
def test_damaged_weights_are_a_user_error_and_leave_nothing(world, tmp_path, cut, cli):
    """A weight file cut short (an interrupted copy) or empty: exit 2 naming the cause, no folder left
    behind, and the command with whole weights then runs in the same --out."""
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(world["reward"], broken)
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: int(weights.stat().st_size * cut)])
    argv = [a.format(**{**world, "reward": broken, "out": tmp_path / "out"}) for a in RUN_RM]
    code, text = cli(argv)
    assert code == 2 and "weight files are damaged or incomplete" in text and "Traceback" not in text, text
    assert files_under(tmp_path / "out") == []
    code, text = cli([a.format(**{**world, "out": tmp_path / "out"}) for a in RUN_RM])
    assert code == 0, text


def test_a_bench_changed_since_its_build_is_refused_before_judging(world, tmp_path, cli):
    """A split file emptied or deleted after the build would be read as a bias with nothing to measure."""
    import shutil

    for change in ("emptied", "deleted"):
        bench = tmp_path / change
        shutil.copytree(world["bench"], bench)
        target = bench / "length.jsonl"
        target.write_text("") if change == "emptied" else target.unlink()
        argv = [a.format(**{**world, "bench": bench, "out": tmp_path / f"out-{change}"}) for a in RUN_RM]
        code, text = cli(argv)
        says = (
            "is empty, yet its build wrote rows into it"
            if change == "emptied"
            else "the manifest names this file"
        )
        assert code == 2 and says in text and "Traceback" not in text, text
        assert not (tmp_path / f"out-{change}").exists()


def test_a_setting_the_mode_does_not_read_is_refused_and_does_not_split_its_folder(world, tmp_path, cli):
    """--max-tokens is a generation budget: given to a reward run it is refused (it would go unread), and a
    reward run's record holds none, so a resume is never split by it."""
    import shutil

    shutil.copytree(world["run"], tmp_path / "run")
    before = (tmp_path / "run" / "fingerprint.json").read_text()
    argv = [a.format(**{**world, "out": tmp_path / "run"}) for a in RUN_RM]
    code, text = cli([*argv, "--max-tokens", "50"])
    assert code == 2 and "--max-tokens 50: mode 'reward' writes no reply" in text, text
    assert (tmp_path / "run" / "fingerprint.json").read_text() == before
    assert "max_tokens" not in json.loads(before)["judge"]
    code, text = cli(argv)
    assert code == 0 and "found in" in text, text


def test_the_table_covers_every_entry_point():
    """At least 40 cases, over build, validate, eval (bias, general, compare, rescore), quickstart,
    sweep, release and the recipes."""
    assert len(CASES) >= 40 and len({c.id for c in CASES}) == len(CASES)
    prefixes = {c.id.split("-")[0] for c in CASES}
    assert {"validate", "build", "eval", "rescore", "general", "compare", "quickstart", "recipe"} <= prefixes
    assert {"scoring", "preflight"} <= prefixes


def test_a_build_that_keeps_nothing_fails_and_an_empty_bias_is_warned_about(tmp_path, monkeypatch, cli):
    """A verifier that drops every authority item (a judge answering "A" to both orders): alone,
    the build fails and leaves nothing; with another bias, it warns that authority's file is empty."""
    from biasaware.judging.fake_server import FakeChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "x")
    always_a = lambda messages: "<think>\nA.\n</think>\n<answer>A</answer>"  # noqa: E731
    with FakeChatServer(always_a) as server:
        argv = ["build", "bench", "--out", str(tmp_path / "out"), "--n", "4", "--verifier", "llm"]
        argv += ["--llm-model", "m", "--llm-base-url", server.base_url]
        code, text = cli([*argv, "--biases", "authority"])
        assert code == 2 and "the build kept nothing (authority: 4 sampled, 4 dropped" in text
        assert files_under(tmp_path / "out") == []
        code, text = cli([*argv, "--biases", "authority,bandwagon"])
    assert code == 0 and "warning: " in text and "authority.jsonl is empty" in text
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["empty"] == ["authority-mirror.jsonl", "authority.jsonl"]


def test_compare_says_what_each_run_judged_when_their_probes_differ(world, tmp_path, cli):
    """Two runs of one benchmark, one a --limit and --biases subset: the refusal names each run's sample."""
    sub = str(tmp_path / "sub")
    argv = [a.format(out=sub, **world) for a in RUN_RM]
    assert cli([*argv, "--limit", "1", "--biases", "length"])[0] == 0
    compare = ["eval", "compare", "--runs", sub, world["run"], "--baseline", world["run"]]
    code, text = cli(compare)
    assert code == 2 and "Traceback" not in text, text
    assert "sub: --limit 1 --seed 0, biases length; run: every probe, biases authority, length" in text, text
