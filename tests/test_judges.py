"""The judge factory, token-budget batching, over-long inputs, progress output and multi-process
evaluation (2 gloo processes on the CPU must write the judgments a single process writes)."""

import json
import os
import re
import socket
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biasaware.cli import main
from biasaware.data.builders import BuildConfig, build_bench
from biasaware.devices import where
from biasaware.errors import BiasAwareError
from biasaware.evaluation.runner import load_probes, run_bias_eval
from biasaware.evaluation.summaries import summarize
from biasaware.io import read_records
from biasaware.judging.judges import (
    DirectVerdictJudge,
    GenerativeJudge,
    JudgeSpec,
    RewardModelJudge,
    forward_batch_size,
    judge_chunks,
    load_judge,
    token_batches,
)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    build_bench(BuildConfig(n_per_bias=24, corpus_size=600, direction="standard"), out)
    return out


# ------------------------------------------------------------------------------------------ factory
def test_load_judge_builds_each_mode(tiny_models, tmp_path):
    causal, reward = str(tiny_models["causal"]), str(tiny_models["reward"])
    assert isinstance(load_judge(JudgeSpec(name=reward, mode="reward")), RewardModelJudge)
    direct = load_judge(JudgeSpec(name=causal, mode="direct", batch_size=3))
    assert isinstance(direct, DirectVerdictJudge) and direct.batch_size == 3
    gen = load_judge(JudgeSpec(name=causal, template="mtbench", cache_dir=str(tmp_path)))
    assert isinstance(gen, GenerativeJudge) and gen.template.name == "mtbench"
    assert direct.judge([]) == [] and load_judge(JudgeSpec(name=reward, mode="reward")).judge([]) == []
    s, here = direct.summary(), where()  # what "auto" means on this machine
    assert s["device"] == here["device"] and s["dtype"] == here["dtype"] and s["context"] == 4096
    assert gen.summary()["device"] == here["device"]  # resolved without loading weights


def test_a_batch_size_left_out_is_the_device_s(tiny_models):
    """8 views a batch on the CPU and for a generating judge; 64 for a forward judge on a GPU, where a
    forward of 64 short views costs about what one of 8 does (max_batch_tokens still bounds a batch)."""
    import torch

    assert forward_batch_size(torch.device("cpu")) == 8 and forward_batch_size("cpu") == 8
    assert forward_batch_size(torch.device("cuda", 0)) == 64 and forward_batch_size("cuda:1") == 64
    assert forward_batch_size(torch.device("mps")) == 8
    spec = JudgeSpec(name=str(tiny_models["reward"]), mode="reward", device="cpu")
    assert spec.batch_size is None and spec.llm_spec().batch_size == 8
    judge = load_judge(spec)
    assert judge.batch_size == 8 and judge.summary()["batch_size"] == 8
    assert load_judge(spec.model_copy(update={"batch_size": 5})).batch_size == 5  # given: as given


def test_explicit_dtype_reaches_the_weights(tiny_models):
    judge = load_judge(JudgeSpec(name=str(tiny_models["reward"]), mode="reward", dtype="bfloat16"))
    assert next(judge.model.parameters()).dtype.__repr__() == "torch.bfloat16"
    assert judge.summary()["dtype"] == "bfloat16"


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"name": "x", "mode": "scores"}, "setting 'mode'"),
        ({"name": "x", "template": "mt-bench"}, "unknown template 'mt-bench'"),
        ({"name": "x", "batch_size": 0}, "setting 'batch_size'"),
        ({"name": "x", "mode": "reward", "backend": "openai"}, "needs backend 'transformers'"),
        ({"name": "x", "temperatur": 0.5}, "unknown setting 'temperatur'; valid settings: name, mode"),
        ({"name": ""}, "setting 'name'"),
    ],
)
def test_bad_specs_are_user_errors(settings, message):
    with pytest.raises(BiasAwareError, match=message):
        JudgeSpec.create(**settings)


@pytest.mark.parametrize("mode", ["reward", "direct", "generate"])
def test_eval_bias_resolves_the_judge_once(monkeypatch, spy_on, tiny_models, bench, tmp_path, mode):
    """From the command to the loaded model: the device and dtype are resolved once, the model's
    folder once, its weights hashed once, and a generative judge's tokenizer loaded once."""
    import transformers

    import biasaware.devices
    import biasaware.evaluation.runner  # noqa: F401 (loaded, so its references are spied on)
    import biasaware.io
    from biasaware.judging.models import ModelFolders

    device, hashed, folders, tokenizer = (
        spy_on(biasaware.devices.resolve),
        spy_on(biasaware.io.files_sha256),
        [0],
        [0],
    )
    monkeypatch.setattr(ModelFolders, "of", classmethod(_counted(folders, ModelFolders.of.__func__)))
    tok = transformers.AutoTokenizer.from_pretrained
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", _counted(tokenizer, tok))
    model = tiny_models["reward" if mode == "reward" else "causal"]
    argv = ["eval", "bias", "--judge", str(model), "--mode", mode, "--limit", "1", "--data", str(bench)]
    if mode == "generate":
        argv += ["--max-tokens", "4", "--template", "verdict"]
    assert main([*argv, "--out", str(tmp_path / "e")]) == 0
    assert (len(device), folders, len(hashed), tokenizer) == (1, [1], 1, [1])


def _counted(calls: list[int], real):
    def spy(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    return spy


@pytest.mark.parametrize("command", ["eval general", "eval scoring", "preflight"])
def test_every_judging_command_resolves_the_judge_once(monkeypatch, spy_on, tiny_models, tmp_path, command):
    """As on eval bias: the device and dtype, and the model's folder, are resolved once a command."""
    import biasaware.devices
    import biasaware.evaluation.preflight  # noqa: F401 (loaded, so its references are spied on)
    from biasaware.judging.models import ModelFolders

    device, folders = spy_on(biasaware.devices.resolve), [0]
    monkeypatch.setattr(ModelFolders, "of", classmethod(_counted(folders, ModelFolders.of.__func__)))
    data = tmp_path / "data.jsonl"
    if command == "eval general":
        rows = [
            {"prompt": f"q{i}", "chosen": "yes " * i, "rejected": "no", "subset": "s"} for i in range(1, 4)
        ]
        argv = ["eval", "general", "--judge", str(tiny_models["reward"]), "--benchmark", str(data)]
    elif command == "eval scoring":
        rows = [{"id": f"i{i}", "instruction": f"Q{i}?", "response": "an answer"} for i in range(2)]
        judge = ["--judge", str(tiny_models["causal"]), "--mode", "direct", "--templates", "desc"]
        argv = ["eval", "scoring", *judge, "--data", str(data)]
    else:
        rows = []
        argv = ["preflight", "--judge", str(tiny_models["reward"]), "--per-bias", "1", "--scoring-pairs", "1"]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main([*argv, "--out", str(tmp_path / "out")]) in (0, 1)  # preflight: 1 when the tiny judge fails
    assert (len(device), folders) == (1, [1])


def test_the_cli_and_quickstart_build_judges_through_load_judge(spy_on, tiny_models, bench, tmp_path):
    import inspect

    import biasaware.evaluation.runner
    import biasaware.experiments.parts
    import biasaware.experiments.quickstart
    import biasaware.judging.judges

    built = spy_on(biasaware.judging.judges.load_judge)
    args = ["eval", "bias", "--judge", str(tiny_models["reward"]), "--mode", "reward", "--limit", "1"]
    assert main([*args, "--data", str(bench), "--out", str(tmp_path / "e"), "--max-batch-tokens", "999"]) == 0
    (resolved,) = built[-1]
    assert resolved.spec.mode == "reward" and resolved.spec.max_batch_tokens == 999
    assert "evaluate_judge(" in inspect.getsource(biasaware.experiments.quickstart.run_quickstart)
    assert "evaluate_bias(" in inspect.getsource(
        biasaware.experiments.parts.evaluate_judge
    )  # which loads through
    assert "load_judge(" in inspect.getsource(biasaware.evaluation.runner.start_judge)


def test_the_judge_kind_is_read_from_the_folder(tiny_models, bench, tmp_path, capsys):
    """No --mode: a sequence-classification folder is judged as a reward model, a causal LM as a
    generative judge; a --mode that contradicts the folder is exit 2 naming what it holds."""
    import json

    from biasaware.judging.judges import JudgeSpec
    from biasaware.judging.models import folder_kind

    reward, causal = str(tiny_models["reward"]), str(tiny_models["causal"])
    assert JudgeSpec.create(name=reward).mode == "reward"
    assert JudgeSpec.create(name=causal).mode == "generate"
    assert JudgeSpec.create(name=causal, mode="direct").mode == "direct"
    assert JudgeSpec.create(name="minilm-l6").mode == "reward"
    assert (
        JudgeSpec.create(name="smollm2-135m-instruct", mode="reward").mode == "reward"
    )  # a built-in's kinds
    assert JudgeSpec.create(name="gpt-4o-mini", backend="openai").mode == "generate"
    assert folder_kind(str(tmp_path / "absent")) is None
    args = ["eval", "bias", "--judge", reward, "--limit", "1", "--data", str(bench)]
    assert main([*args, "--out", str(tmp_path / "e")]) == 0
    assert json.loads((tmp_path / "e" / "summary.json").read_text())["run"]["mode"] == "reward"
    capsys.readouterr()
    assert main([*args, "--mode", "generate", "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err
    assert "sequence-classification" in err and "--mode reward" in err and "Traceback" not in err
    assert not (tmp_path / "g").exists()
    # a prompt format means nothing to a reward model: refused, not recorded in the folder's fingerprint
    assert main([*args, "--template", "mtbench", "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert "template 'mtbench'" in err and "mode 'reward'" in err and "Traceback" not in err
    assert not (tmp_path / "t").exists()
    wrong = [
        "eval",
        "bias",
        "--judge",
        causal,
        "--mode",
        "reward",
        "--data",
        str(bench),
        "--out",
        str(tmp_path / "r"),
    ]
    assert main(wrong) == 2
    assert "causal language model" in capsys.readouterr().err
    card = tmp_path / "carded"  # a trained folder's card says what it is, before its config does
    card.mkdir()
    (card / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    (card / "biasaware_card.json").write_text(json.dumps({"recipe": "reward"}))
    assert folder_kind(str(card))[0] == "reward"


# ----------------------------------------------------------------------------------------- batching
@given(
    st.lists(st.integers(1, 300), max_size=60), st.integers(1, 9), st.one_of(st.none(), st.integers(1, 900))
)
def test_token_batches_cover_every_item_once_within_both_limits(lengths, size, budget):
    batches = token_batches(lengths, size, budget)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)  # length-sorted
    for b in batches:
        assert 1 <= len(b) <= size
        if budget is not None and len(b) > 1:
            assert len(b) * max(lengths[i] for i in b) <= budget


def test_token_budget_does_not_change_scores(tiny_models, bench):
    views = [v for p in load_probes(bench, limit=2) for v in (p.original, p.injected)]
    base = load_judge(JudgeSpec(name=str(tiny_models["reward"]), mode="reward", batch_size=64))
    tight = load_judge(
        JudgeSpec(name=str(tiny_models["reward"]), mode="reward", batch_size=64, max_batch_tokens=200)
    )
    assert len(tight.prepare(views).batches) > len(base.prepare(views).batches)
    for a, b in zip(base.judge(views), tight.judge(views), strict=True):
        assert a.verdict == b.verdict and a.scores == pytest.approx(b.scores, abs=1e-5)


def test_a_direct_judge_runs_the_shared_prefix_once_and_gives_each_whole_prompt_s_verdict(tiny_models, bench):
    """The ids every view of a call starts with run once; each view's P(A) is that of its whole prompt
    run alone and unpadded (computed here with the model directly), within float rounding; a model
    whose forward takes no cache runs whole prompts and gives the same."""
    import torch

    views = [v for p in load_probes(bench, limit=2) for v in (p.original, p.injected)]
    # float32 on the CPU: compared within 1e-6 below
    judge = load_judge(JudgeSpec(name=str(tiny_models["causal"]), mode="direct", batch_size=3, device="cpu"))
    prepared = judge.prepare(views)
    units = [prepared.ids[i] for b in prepared.batches for i in b]
    assert len({len(u) for u in units}) > 1 and len(prepared.batches) > 1  # padding within batches
    common = next(k for k in range(min(map(len, units))) if len({u[k] for u in units}) > 1)
    assert prepared.prefix == common > 20  # the template's opening, not a stray token
    alone = []
    with torch.inference_mode():
        for ids in prepared.ids:
            logp = judge.model(input_ids=torch.tensor([ids])).logits[0, -1].float().log_softmax(-1)
            a, b = (logp[judge.token_ids[x]].logsumexp(-1) for x in "AB")
            alone.append(torch.sigmoid(a - b).item())
    shared = judge.judge(views)
    assert [o.scores["A"] for o in shared] == pytest.approx(alone, abs=1e-6)
    assert [o.verdict for o in shared] == ["A" if p > 0.5 else "B" for p in alone]
    assert [o.scores for o in judge.judge(views)] == [o.scores for o in shared]  # the prefix is not consumed
    judge.cache_arg = None  # as for a model without a cache argument
    assert judge.prepare(views).prefix == 0
    assert [o.scores["A"] for o in judge.judge(views)] == pytest.approx(alone, abs=1e-6)


def test_pipelined_chunks_equal_one_call_per_chunk(tiny_models, bench):
    """judge_chunks queues chunk k+1 before collecting chunk k: same outputs, same order."""
    views = [v for p in load_probes(bench, limit=3) for v in (p.original, p.injected)]
    chunks = [views[i : i + 7] for i in range(0, len(views), 7)]
    for mode, path in (("direct", "causal"), ("reward", "reward")):
        judge = load_judge(JudgeSpec(name=str(tiny_models[path]), mode=mode, batch_size=4))
        piped = [o for outs in judge_chunks(judge, chunks) for o in outs]
        plain = [o for c in chunks for o in judge.judge(c)]
        assert [(o.verdict, o.scores) for o in piped] == [(o.verdict, o.scores) for o in plain]


# ---------------------------------------------------------------------------------------- over-long
def test_overlong_views_are_skipped_counted_and_reported(tiny_models, bench, tmp_path, capsys):
    probes = load_probes(bench, ["length", "authority"], limit=6)
    rm = load_judge(JudgeSpec(name=str(tiny_models["reward"]), mode="reward", max_length=60))
    path = run_bias_eval(rm, probes, tmp_path / "rm")
    judgments = read_records(path, "judgment")
    long = [j for j in judgments if j.meta.get("overlong")]
    assert long and len(long) < len(judgments)  # the length bias makes some injected views longer
    said = capsys.readouterr().out  # the stage's line counts the views read, and the overlong apart
    assert f": {len(judgments) - len(long)} views judged in" in said
    assert f"; {len(long)} over the judge's context, not judged" in said
    for j in long:
        assert (
            j.verdict == "invalid" and j.meta["overlong"]["limit"] == 60 and j.meta["overlong"]["tokens"] > 60
        )
        assert "not judged" in j.raw and j.scores is None
    for j in judgments:
        if not j.meta.get("overlong"):
            assert j.verdict in ("A", "B", "tie") and j.scores is not None
    s = summarize(judgments)
    assert s["overlong_views"] == len(long) == sum(b["overlong"] for b in s["per_bias"].values())
    # the CLI says so too, exit 0, no traceback
    args = ["eval", "bias", "--judge", str(tiny_models["causal"]), "--mode", "direct", "--max-length", "300"]
    assert main([*args, "--data", str(bench), "--limit", "3", "--out", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    assert "did not fit the judge's context" in out
    assert "did not fit the judge's context" in (tmp_path / "d" / "report.md").read_text()
    assert re.search(r"warning: \d+ of \d+ views did not fit the context of \S+ \(300 tokens", out)
    # nearly every view over the limit: the run measures nothing, so it is an error, and the
    # corrected command into the same folder is not blocked by what it wrote
    tight = [*args[:-1], "150", "--data", str(bench), "--limit", "3", "--out", str(tmp_path / "t")]
    assert main(tight) == 2
    assert "the judge cannot read these inputs" in capsys.readouterr().err
    assert main([*args, "--data", str(bench), "--limit", "3", "--out", str(tmp_path / "t")]) == 0


def test_overlong_generation_prompts_are_not_sent(tiny_models, bench, tmp_path):
    probes = load_probes(bench, ["length"], limit=2)
    spec = JudgeSpec(name=str(tiny_models["causal"]), max_tokens=4, max_length=100, cache_dir=str(tmp_path))
    outs = load_judge(spec).judge([p.injected for p in probes])
    assert all(o.overlong and o.overlong[1] == 100 and o.verdict == "invalid" for o in outs)


def test_an_endpoint_s_context_refusal_is_counted_not_fatal(bench, tmp_path):
    from biasaware.judging.fake_server import FakeChatServer

    probes = load_probes(bench, ["length"], limit=6)
    with FakeChatServer(context_words=120) as server:
        spec = JudgeSpec(name="m", backend="openai", base_url=server.base_url, cache_dir=str(tmp_path / "c"))
        judge = load_judge(spec)
        judgments = read_records(run_bias_eval(judge, probes, tmp_path / "out"), "judgment")
    long = [j for j in judgments if j.meta.get("overlong")]
    assert long and len(long) < len(judgments) and judge.client.stats.failures == 0
    assert all(j.verdict == "invalid" and j.meta["overlong"]["limit"] == 120 for j in long)
    assert all(j.meta["overlong"]["tokens"] > 120 for j in long)
    # every input refused: the advice is the served model's context, which no option here changes
    with FakeChatServer(context_words=5) as server:
        spec = JudgeSpec(name="m", backend="openai", base_url=server.base_url, cache_dir=str(tmp_path / "c2"))
        with pytest.raises(
            BiasAwareError, match="the endpoint refused nearly every input .* Serve a model"
        ) as err:
            run_bias_eval(load_judge(spec), probes, tmp_path / "out2")
    assert "--mode" not in str(err.value) and not (tmp_path / "out2" / "judgments.jsonl").exists()


def test_an_endpoint_reply_without_text_is_the_judge_s_invalid_verdict_not_a_failure(bench, tmp_path):
    """A reply whose content is null (a content filter, a refusal) is an empty reply: for a judge, an invalid
    verdict, counted, not retried until the run fails."""
    from biasaware.judging.fake_server import FakeChatServer

    probes = load_probes(bench, ["length"], limit=3)
    with FakeChatServer(lambda messages: None) as server:
        spec = JudgeSpec(name="m", backend="openai", base_url=server.base_url, cache_dir=str(tmp_path / "c"))
        judge = load_judge(spec)
        judgments = read_records(run_bias_eval(judge, probes, tmp_path / "out"), "judgment")
    assert judgments and all(j.verdict == "invalid" and j.raw == "" for j in judgments)
    assert judge.client.stats.failures == 0 and max(server.served.values()) == 1  # none asked twice


@pytest.mark.slow
def test_minilm_never_crashes_on_inputs_past_its_512_positions(tmp_path):
    """The crash a user hit: LLMBar pairs longer than MiniLM's 512 positions."""
    from biasaware.evaluation.runner import run_general_eval
    from biasaware.evaluation.summaries import summarize_general
    from biasaware.records import PreferencePair

    long = "word " * 700
    pairs = [
        PreferencePair(
            id=f"p{i}",
            source="t",
            prompt=[{"role": "user", "content": "q"}],
            chosen=long if i == 0 else "yes",
            rejected="no",
        )
        for i in range(3)
    ]
    judge = load_judge(JudgeSpec(name="minilm-l6", mode="reward"))
    s = summarize_general(read_records(run_general_eval(judge, pairs, tmp_path), "judgment"))
    assert s["overall"]["overlong"] == 1 and s["overall"]["n"] == 3


# ----------------------------------------------------------------------------------------- progress
def cli(*args, env=None):
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "biasaware.cli", *args], capture_output=True, text=True, env=env
    )


def test_progress_bars_when_asked_one_line_per_stage_otherwise(tiny_models, bench, tmp_path):
    args = ["--judge", str(tiny_models["reward"]), "--mode", "reward", "--data", str(bench), "--limit", "2"]
    quiet = cli("eval", "bias", *args, "--out", str(tmp_path / "a"))
    assert quiet.returncode == 0, quiet.stderr
    assert "view/s" not in quiet.stderr and "INFO" not in quiet.stderr  # not a terminal: no bar, no logs
    assert "[judge] reward: 36 views judged in" in quiet.stdout
    again = cli("eval", "bias", *args, "--out", str(tmp_path / "a"))
    assert (
        "0 views judged" in again.stdout
        and f"36 found in {tmp_path / 'a'} from an earlier run" in again.stdout
    )
    shown = cli("eval", "bias", *args, "--out", str(tmp_path / "b"), "--progress", "on", "-v")  # after it too
    assert shown.returncode == 0, shown.stderr
    assert "judge reward: 100%" in shown.stderr and "view/s" in shown.stderr  # the bar, with its rate
    assert "INFO biasaware.evaluation.runner" in shown.stderr  # -v adds logs
    build = cli(
        "--progress", "on", "build", "bench", "--n", "3", "--biases", "length", "--out", str(tmp_path / "c")
    )
    assert build.returncode == 0 and "bench bench-length: 100%" in build.stderr


def test_the_bar_moves_per_batch_and_a_long_run_is_estimated_with_a_limit(
    tiny_models, bench, tmp_path, monkeypatch, capsys
):
    """One chunk of 2 x 36 views in batches of 4: the bar moves per batch, not once per chunk; a
    run that would take longer than LONG_RUN_S prints its estimate and the --limit that fits."""
    from biasaware import progress
    from biasaware.evaluation.runner import load_probes, run_bias_eval

    moves = []
    real = progress.ChunkProgress._to
    monkeypatch.setattr(progress.ChunkProgress, "_to", lambda self, n: (moves.append(n), real(self, n)))
    monkeypatch.setattr(progress, "ESTIMATE_AFTER_S", 0.0)
    monkeypatch.setattr(progress, "LONG_RUN_S", 1e-6)  # every run is long here
    # on the CPU: a GPU's batches run asynchronously, and the bar moves at the chunk's end
    judge = load_judge(JudgeSpec(name=str(tiny_models["causal"]), mode="direct", batch_size=4, device="cpu"))
    probes = load_probes(bench, ["length"], 18)
    run_bias_eval(judge, probes, tmp_path / "a", chunk=256)
    assert len(set(moves)) >= 8 and max(moves) == 36 == moves[-1]  # 9 batches, then the chunk's end
    assert moves == sorted(moves)
    out = capsys.readouterr().out
    assert "[judge] estimate: about" in out and "for 36 views" in out
    assert "--limit 1 (probes per bias and side; 18 now)" in out


# ------------------------------------------------------------------------------------ multi-process
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_gloo_processes_write_what_one_process_writes(tiny_models, bench, tmp_path):
    """576 views in chunks of 256: process 0 judges chunks 0 and 2, process 1 chunk 1; the merged
    judgments.jsonl is byte-identical to a single-process run, and the reports agree."""
    args = ["eval", "bias", "--judge", str(tiny_models["causal"]), "--mode", "direct", "--data", str(bench)]
    one = cli(*args, "--out", str(tmp_path / "one"), env={"OMP_NUM_THREADS": "1"})  # torchrun's setting
    assert one.returncode == 0, one.stderr
    launch = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(free_port()),
        "-m",
        "biasaware.cli",
        *args,
        "--out",
        str(tmp_path / "two"),
    ]
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    two = subprocess.run(launch, capture_output=True, text=True, env=env, timeout=300)
    # a failed rank's traceback comes first in stderr, torchrun's summary of the failure last: show both
    assert two.returncode == 0, two.stdout[-2000:] + two.stderr[:6000] + "\n...\n" + two.stderr[-1500:]
    assert "views judged" in two.stdout and "on rank 0 of 2" in two.stdout
    assert two.stdout.count("wrote ") == 1  # only process 0 reports
    a, b = (tmp_path / d / "judgments.jsonl" for d in ("one", "two"))
    assert a.read_bytes() == b.read_bytes() and len(a.read_text().splitlines()) == 576
    assert not (tmp_path / "two" / ".shards").exists()
    sa, sb = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("one", "two"))
    assert sa["overall"] == sb["overall"] and sa["per_bias"] == sb["per_bias"]


def test_judging_forces_its_lines_to_the_disk_once_a_chunk_and_a_kill_loses_none(
    tiny_models, bench, tmp_path, monkeypatch
):
    """Each judged view's line is flushed as it is written (a killed process loses none); the disk is
    forced (fsync) once a chunk, not once a view."""
    import biasaware.io

    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(biasaware.io.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    probes = load_probes(bench)
    judge = load_judge(JudgeSpec(name=str(tiny_models["reward"]), mode="reward"))
    judge.chunk_views = 64
    real = judge.prepare
    seen = []

    def killed_after_two_chunks(views):
        if len(seen) == 2:
            raise KeyboardInterrupt
        lines = tmp_path / "ev" / "judgments.jsonl"
        seen.append(len(lines.read_text().splitlines()) if lines.exists() else 0)
        return real(views)

    judge.prepare = killed_after_two_chunks
    with pytest.raises(KeyboardInterrupt):
        run_bias_eval(judge, probes, tmp_path / "ev")
    lines = (tmp_path / "ev" / "judgments.jsonl").read_text().splitlines()
    assert seen[0] == 0 and seen[1] > 0 and len(lines) > seen[1]  # both chunks' lines are there
    assert 2 <= len(synced) <= 3  # a sync after each chunk (and on close), not one per line


def test_a_shard_left_by_a_killed_process_is_resumed_and_merged(tiny_models, bench, tmp_path):
    """Process 1 of an earlier 2-process run finished its chunk and process 0 was killed: a single
    process judges only the rest and merges both into the file an uninterrupted run writes."""
    from biasaware.devices import Ranks

    class Rank1Alone(Ranks):
        def barrier(self):  # the other process is gone
            pass

    probes = load_probes(bench)
    judge = load_judge(JudgeSpec(name=str(tiny_models["reward"]), mode="reward"))
    run_bias_eval(judge, probes, tmp_path / "straight")
    run_bias_eval(judge, probes, tmp_path / "resumed", ranks=Rank1Alone(1, 2))
    shard = next((tmp_path / "resumed" / ".shards").glob("*.jsonl"))
    in_shard = len(shard.read_text().splitlines())
    total = len((tmp_path / "straight" / "judgments.jsonl").read_text().splitlines())
    assert 0 < in_shard < total  # chunk 1 of 2 (its distinct views, each recorded for every probe of it)
    assert not (tmp_path / "resumed" / "judgments.jsonl").exists()  # process 1 does not merge
    prepared = []
    real = judge.prepare
    judge.prepare = lambda views: prepared.append(len(views)) or real(views)
    run_bias_eval(judge, probes, tmp_path / "resumed")
    assert prepared == [judge.chunk_views]  # chunk 0 alone is judged again
    a, b = (tmp_path / d / "judgments.jsonl" for d in ("straight", "resumed"))
    assert a.read_bytes() == b.read_bytes() and not (tmp_path / "resumed" / ".shards").exists()


def test_a_judge_that_cannot_load_fails_before_any_output(bench, tmp_path, capsys):
    """A reward-only model asked for in generate mode: exit 2 and no --out folder."""
    out = tmp_path / "out"
    args = [
        "eval",
        "bias",
        "--judge",
        "minilm-l6",
        "--mode",
        "generate",
        "--data",
        str(bench),
        "--out",
        str(out),
    ]
    assert main(args) == 2
    assert "mode 'generate' does not fit minilm-l6" in capsys.readouterr().err and not out.exists()
    # vLLM loads the folder too: a reward model is refused there before any output, as with transformers
    assert main([*args[:4], "--backend", "vllm", *args[6:]]) == 2
    assert "needs backend 'transformers' (got 'vllm')" in capsys.readouterr().err and not out.exists()


def test_a_reward_judge_without_a_trained_head_says_so(tiny_models, capsys):
    """A model whose reward head is not in its checkpoint (a language model read as a reward model)
    is judged with a warning on stderr; a trained reward model loads without one."""
    from biasaware.judging.judges import RewardModelJudge
    from biasaware.judging.models import load_model

    model, _ = load_model(str(tiny_models["causal"]), "reward")
    assert model.biasaware_fresh  # the score head was drawn, not loaded
    spec = JudgeSpec.model_construct(
        **{
            **JudgeSpec(name=str(tiny_models["reward"])).model_dump(),
            "name": str(tiny_models["causal"]),
            "mode": "reward",
        }
    )
    untrained = RewardModelJudge(spec)
    assert "has no trained reward head" in capsys.readouterr().err
    trained = RewardModelJudge(JudgeSpec(name=str(tiny_models["reward"]), mode="reward"))
    assert "no trained reward head" not in capsys.readouterr().err
    # the run records it, and the reports say it at their top
    from biasaware.evaluation.reports import check_lines, real_markdown

    assert untrained.summary()["untrained_head"] == model.biasaware_fresh
    assert "untrained_head" not in trained.summary()
    flagged = check_lines({"run": untrained.summary(), "judge_check": None})
    assert flagged and flagged[0].startswith("**No trained reward head: ")
    real = {
        "judge": "j",
        "limit": 1,
        "seed": 0,
        "judge_summary": untrained.summary(),
        "sets": {},
        "probes": {},
    }
    assert "**No trained reward head: " in real_markdown(real)
    assert "No trained reward head" not in real_markdown({**real, "judge_summary": trained.summary()})
