"""Builds with the LLM rewriter, verifier and teacher against the localhost fault-injecting endpoint."""

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from biasaware.data.builders import BuildConfig, build_bench, build_traces, build_train
from biasaware.errors import BiasAwareError
from biasaware.io import read_records, validate_rows
from biasaware.judging.fake_server import MARK, FakeChatServer, default_responder


def llm_cfg(server, tmp_path, name="cache", **kw):
    llm = {
        "model": "fake-judge",
        "base_url": server.base_url,
        "cache_dir": str(tmp_path / name),
        "concurrency": 4,
        "backoff": 0.01,
        "max_backoff": 0.05,
        "timeout": 0.3,
        "progress": False,
    }
    base = dict(corpus_size=300, rewriter="llm", verifier="llm", llm=llm, chunk_size=8, direction="standard")
    return BuildConfig(**{**base, **kw})


def outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.jsonl"))}


def test_llm_bench_build_rewrites_verifies_and_reruns_for_free(tmp_path):
    with FakeChatServer(fault_rate=0.2, hang=0.6) as server:
        cfg = llm_cfg(server, tmp_path, biases="authority,gender,position", n_per_bias=16)
        manifest = build_bench(cfg, tmp_path / "out")
        probes = read_records(tmp_path / "out", "probe")
        auth = [p for p in probes if p.bias == "authority"]
        assert auth and all(p.injected.wrong_text.endswith(" [+authority]") for p in auth)
        assert not any(MARK.search(p.injected.correct_text) for p in auth)
        # 16 authority items x 2 rewrites; 2 content biases x 16 items x 2 orders judged
        llm = manifest["llm"]
        assert llm["rewriter"]["calls"] - llm["rewriter"]["retries"] == 32
        assert llm["verifier"]["calls"] - llm["verifier"]["retries"] == 64
        assert sum(server.fault_counts.values()) > 0 and llm["verifier"]["failures"] == 0
        # the fake judge flips ~10% of verdicts: some items drop, and position is never judged
        b = manifest["biases"]
        assert b["gender"]["dropped"] + b["authority"]["dropped"] > 0 and b["position"]["kept"] == 16
        assert validate_rows(tmp_path / "out", "probe")[2] == []
        served = server.requests
        build_bench(cfg, tmp_path / "out")  # a rerun of a finished build makes no call at all
        assert server.requests == served
        manifest = build_bench(cfg, tmp_path / "again")  # a new folder: every answer from the cache
        assert server.requests == served and manifest["llm"]["rewriter"]["cache_hits"] == 32
        assert outputs(tmp_path / "again") == outputs(tmp_path / "out")


def _run_cli(config: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "biasaware.cli", "build", "bench", "--config", str(config), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # a shell's background job (CI) ignores SIGINT, and so would the child: give it back Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_llm_build_killed_three_times_equals_uninterrupted(tmp_path):
    settings = dict(biases="authority,length,gender", n_per_bias=24)
    with FakeChatServer(fault_rate=0.2, hang=0.6, latency=0.02) as reference:
        build_bench(llm_cfg(reference, tmp_path, "ref-cache", **settings), tmp_path / "ref")
        unique = len(reference.served)
    with FakeChatServer(fault_rate=0.2, hang=0.6, latency=0.02) as server:
        cfg = llm_cfg(server, tmp_path, **settings)
        config = tmp_path / "build.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    k: getattr(cfg, k)
                    for k in (
                        *settings,
                        "corpus_size",
                        "rewriter",
                        "verifier",
                        "llm",
                        "chunk_size",
                        "direction",
                    )
                }
            )
        )
        out = tmp_path / "out"
        for threshold in (unique // 5, unique // 2, 3 * unique // 4):  # killed three times
            proc = _run_cli(config, out)
            deadline = time.time() + 60
            while sum(server.served.values()) < threshold and proc.poll() is None and time.time() < deadline:
                time.sleep(0.005)
            assert proc.poll() is None, proc.stderr.read().decode()
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        proc = _run_cli(config, out)
        assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()
        assert outputs(out) == outputs(tmp_path / "ref") and len(outputs(out)) == 3
        # only calls in flight at a kill (at most `concurrency` each time) may have been answered twice
        repeated = sum(n - 1 for n in server.served.values())
        assert len(server.served) == unique and repeated <= 3 * 4, repeated
        # the manifest counts the calls of the killed runs too (all but their last second's)
        manifest = json.loads((out / "manifest.json").read_text())
        last = sum(s["calls"] for s in manifest["llm"].values())
        total = manifest["llm_cumulative"]
        assert (
            total["rewriter"]["runs"] == 4
            and last < sum(s["calls"] for s in total.values()) <= server.requests
        )
        requests = server.requests
        assert _run_cli(config, out).wait(timeout=60) == 0 and server.requests == requests
        assert json.loads((out / "manifest.json").read_text()) == manifest  # a no-op rerun rewrites nothing


@pytest.mark.parametrize(
    "stop, status, said",
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
def test_ctrl_c_stops_a_build_and_keeps_every_answer_that_arrived(tmp_path, stop, status, said):
    """SIGINT (or SIGTERM: `kill`, a batch system's time limit) mid-build: queued calls never start, and
    every answer that arrived (in flight at the interrupt included) is in the cache, so the rerun asks only
    for the rest."""
    settings = dict(biases="authority,length", n_per_bias=24)
    with FakeChatServer(latency=0.2) as server:
        cfg = llm_cfg(server, tmp_path, **settings)
        cfg.llm["concurrency"] = 4
        config = tmp_path / "build.yaml"
        fields = (*settings, "corpus_size", "rewriter", "verifier", "llm", "chunk_size", "direction")
        config.write_text(yaml.safe_dump({k: getattr(cfg, k) for k in fields}))
        proc = _run_cli(config, tmp_path / "out")
        deadline = time.time() + 60
        while sum(server.served.values()) < 12 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.01)
        proc.send_signal(stop)
        assert proc.wait(timeout=120) == status, proc.stderr.read().decode()
        assert (
            proc.stderr.read().decode().endswith(f"{said}: the same command goes on from what was finished\n")
        )
        first = dict(server.served)
        assert _run_cli(config, tmp_path / "out").wait(timeout=120) == 0
        repeated = sum(n - 1 for n in server.served.values())
        assert repeated == 0 and len(first) < len(server.served), (repeated, len(first), len(server.served))


def test_failed_calls_leave_items_for_a_rerun(tmp_path):
    def broken(messages):
        text = default_responder(messages)
        request = re.search(r"<request>(.*?)</request>", messages[-1]["content"], re.DOTALL)
        # both sides of a pair share the question: an item fails whole
        return "I'd rather not." if "<rewritten>" in text and request and "7" in request.group(1) else text

    with FakeChatServer(broken) as server:
        cfg = llm_cfg(server, tmp_path, biases="sycophancy", n_per_bias=30, verifier="none")
        cfg.llm["max_retries"] = 1
        with pytest.raises(BiasAwareError, match=r"item\(s\) are undecided.*rerun the same command"):
            build_bench(cfg, tmp_path / "out")
        assert not (tmp_path / "out" / "sycophancy.jsonl").exists()
        decided = (tmp_path / "out" / ".work" / "bench-sycophancy.jsonl").read_text().splitlines()
        assert 0 < len(decided) < 30
        port = int(server.base_url.split(":")[2].split("/")[0])
    with FakeChatServer() as elsewhere:  # another server's replies would be mixed in: refused
        cfg.llm["base_url"] = elsewhere.base_url
        with pytest.raises(BiasAwareError, match="other settings \\(llm.endpoint: "):
            build_bench(cfg, tmp_path / "out")
        assert elsewhere.requests == 0
    with FakeChatServer(port=port) as healthy:  # the server started again at its address
        cfg.llm["base_url"] = healthy.base_url
        manifest = build_bench(cfg, tmp_path / "out")
        assert manifest["biases"]["sycophancy"]["kept"] == 30
        assert healthy.requests == 2 * (30 - len(decided))  # only the undecided items were asked again


def test_mirror_rewrites_add_the_cue_to_the_right_answer(tmp_path):
    # the fake rewriter marks an added feature with " [+bias]" (the fake verifier distrusts marks:
    # the rule verifier checks the claims instead)
    with FakeChatServer() as server:
        for mirror in (False, True):
            cfg = llm_cfg(
                server,
                tmp_path,
                biases="superficial_quality",
                n_per_bias=4,
                direction="mirror" if mirror else "standard",
                verifier="rule",
            )
            build_bench(cfg, tmp_path / str(mirror))
            probes = read_records(tmp_path / str(mirror), "probe")
            assert len({p.bias for p in probes}) == 7
            for p in probes:
                marked = p.injected.correct_text if mirror else p.injected.wrong_text
                plain = p.injected.wrong_text if mirror else p.injected.correct_text
                assert marked.endswith(f" [+{p.bias}]") and not MARK.search(plain)


def test_llm_train_rows_verify_every_negative(tmp_path):
    with FakeChatServer() as server:
        # the fake verifier tosses a seeded coin on unmarked pairs: 30 rows keep a few
        cfg = llm_cfg(server, tmp_path, max_rows=30, n_negatives=2)
        manifest = build_train(cfg, tmp_path / "out")
        rows = read_records(tmp_path / "out" / "train.jsonl", "train")
        assert manifest["rows"] + manifest["dropped"] == 30 and manifest["rows"] == len(rows) > 0
        # chosen vs the original rejected and vs 2 negatives, both orders
        assert manifest["llm"]["verifier"]["calls"] == 30 * 3 * 2
        rewritten = [n for r in rows for n in r.bias_negatives if n.bias not in ("gender", "race")]
        assert all(n.text.endswith(f" [+{n.bias}]") for n in rewritten)


LLM_TEACHER = {
    "rewriter": "template",
    "verifier": "rule",
    "teacher": "llm",
}  # only the teacher calls the endpoint


def test_traces_rule_teacher_and_llm_teacher(tmp_path):
    manifest = build_traces(BuildConfig(corpus_size=300, n_traces_per_bias=10), tmp_path / "rule")
    rows = read_records(tmp_path / "rule" / "traces.jsonl", "trace")
    assert manifest["teacher"] == "rule" and len(rows) == sum(
        m["traces"] for m in manifest["biases"].values()
    )
    assert {r.bias for r in rows} == set(manifest["biases"]) and len(manifest["biases"]) == 12
    from biasaware.judging.judge_format import parse_judgment

    assert all(parse_judgment(r.completion[0].content).verdict == r.label for r in rows)
    assert all(r.prompt[-1].role == "user" and "<response_a>" in r.prompt[-1].content for r in rows)
    security = build_traces(
        BuildConfig(corpus_size=300, n_traces_per_bias=4, biases="security"), tmp_path / "keys"
    )
    keys = [r for r in read_records(tmp_path / "keys" / "traces.jsonl", "trace") if r.bias == "masterkey"]
    assert security["biases"]["masterkey"]["traces"] == len(keys) == 4
    assert all(
        re.search(r'says only ".*", which does not answer', r.completion[0].content, re.S) for r in keys
    )

    with FakeChatServer() as server:
        cfg = llm_cfg(server, tmp_path, **LLM_TEACHER, biases="bandwagon,position", n_traces_per_bias=20)
        manifest = build_traces(cfg, tmp_path / "llm")
        rows = read_records(tmp_path / "llm" / "traces.jsonl", "trace")
        for bias in ("bandwagon", "position"):
            m = manifest["biases"][bias]
            assert m["traces"] + m["wrong_verdict"] + m["bad_format"] == m["kept"] == 20
        # the fake teacher guesses when nothing marks a side: about half are wrong and dropped
        assert 0 < len(rows) < 40 and all(
            parse_judgment(r.completion[0].content).verdict == r.label for r in rows
        )


def test_a_traces_build_reads_its_own_settings_and_a_wrong_endpoint_blocks_nothing(tmp_path):
    """A finished traces build is the same build under a bench's or rows' settings and under ``teacher: rule``
    or ``auto`` on the built-in corpus; a teacher endpoint that answered nothing (a wrong port, after the
    probes were decided) does not lock the folder to that endpoint: the corrected command resumes the
    probes and asks the right one; once it answered, another endpoint is another build."""
    rule = BuildConfig(corpus_size=300, n_traces_per_bias=3, biases="length,authority")
    build_traces(rule, tmp_path / "rule")
    for cfg in (
        replace(rule, n_per_bias=10, direction="standard", n_negatives=2, max_rows=5),
        replace(rule, teacher="rule", verifier="rule"),
        replace(rule, llm={"model": "m", "base_url": "http://127.0.0.1:9/v1"}),  # auto: rule here
    ):
        assert build_traces(cfg, tmp_path / "rule")["reused"]
    with pytest.raises(BiasAwareError, match=r"other settings \(n_traces_per_bias: 3 there, 4 now\)"):
        build_traces(replace(rule, n_traces_per_bias=4), tmp_path / "rule")

    with FakeChatServer() as server:
        port = urlsplit(server.base_url).port
    with FakeChatServer() as other:
        cfg = llm_cfg(other, tmp_path, **LLM_TEACHER, biases="length", n_traces_per_bias=4)
    cfg.llm.update(base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)  # nothing listens there
    with pytest.raises(BiasAwareError, match="teacher: the endpoint is unreachable"):
        build_traces(cfg, tmp_path / "out")
    assert (tmp_path / "out" / ".work" / "traces-length.jsonl").stat().st_size  # the probes were decided
    cfg.llm["base_url"] = (
        f"http://127.0.0.1:{port}/v2"  # wrong again: the folder keeps a stamp, these settings
    )
    with pytest.raises(BiasAwareError, match="teacher: the endpoint is unreachable"):
        build_traces(cfg, tmp_path / "out")
    with pytest.raises(BiasAwareError, match=r"other settings \(seed: 0 there, 1 now\)"):
        build_traces(replace(cfg, seed=1), tmp_path / "out")  # the decided probes are seed 0's
    with FakeChatServer() as server:
        cfg.llm["base_url"] = server.base_url
        manifest = build_traces(cfg, tmp_path / "out")
        assert manifest["biases"]["length"]["kept"] == 4 and server.requests == 4
    with (
        FakeChatServer() as elsewhere,
        pytest.raises(BiasAwareError, match="other settings \\(llm.endpoint: "),
    ):
        build_traces(replace(cfg, llm={**cfg.llm, "base_url": elsewhere.base_url}), tmp_path / "out")


def test_a_model_that_turns_an_auto_verifier_into_the_llm_is_another_build(tmp_path):
    """On a source without known answers, ``auto`` verifies with no one until a model is set, then with the
    LLM: the probes decided unverified are not kept as if the LLM had passed them."""
    from biasaware.data.corpus import builtin_pairs
    from biasaware.io import write_jsonl

    rows = [{**p.to_dict(), "meta": {}} for p in builtin_pairs(60)]  # no claims: no known answers
    write_jsonl(tmp_path / "pairs.jsonl", rows[:20])
    cfg = BuildConfig(
        source=str(tmp_path / "pairs.jsonl"), biases="length", n_per_bias=3, direction="standard"
    )
    assert build_bench(cfg, tmp_path / "out")["verifier"] == "none"
    with FakeChatServer() as server:
        llm = {
            "model": "m",
            "base_url": server.base_url,
            "cache_dir": str(tmp_path / "cache"),
            "progress": False,
        }
        with pytest.raises(
            BiasAwareError,
            match="other settings \\(llm.endpoint: None there, .*; llm.model: .. there, .m. now\\)",
        ):
            build_bench(replace(cfg, llm=llm), tmp_path / "out")
        assert server.requests == 0


def test_a_teacher_whose_replies_are_all_unusable_is_named_not_the_verifier(tmp_path):
    """Every item verified, every teacher reply out of the judge format: the build keeps nothing and the
    error says the teacher's replies were the cause (it used to blame the verifier)."""
    with FakeChatServer(responder=lambda messages: "I would rather not say.") as server:
        cfg = llm_cfg(server, tmp_path, **LLM_TEACHER, biases="bandwagon", n_traces_per_bias=3)
        with pytest.raises(BiasAwareError) as err:
            build_traces(cfg, tmp_path / "out")
    text = str(err.value)
    assert "3 kept but the teacher's replies gave 0 wrong verdicts and 3 not in the judge format" in text
    assert "the teacher's replies gave no usable trace" in text and "verifier dropped" not in text
    assert not (tmp_path / "out" / "traces.jsonl").exists()


def test_a_traces_build_whose_verifier_dropped_every_item_does_not_speak_of_the_teacher(tmp_path):
    """A verifier that judged and dropped every item is named as such; one none of whose replies reads as a verdict
    is named for its replies (not the data: other biases would not help)."""
    for reply, said in (
        ("<answer>A</answer>", "(length: 2 sampled, 2 dropped): the llm verifier dropped every item"),
        (
            "no idea",
            "(length: 2 sampled, 2 dropped): the llm verifier's replies gave no readable verdict (4 of 4 not",
        ),
    ):
        with FakeChatServer(responder=lambda messages, reply=reply: reply) as server:
            cfg = llm_cfg(
                server,
                tmp_path,
                name=reply,
                rewriter="template",
                teacher="llm",
                biases="length",
                n_traces_per_bias=2,
            )
            with pytest.raises(BiasAwareError) as err:
                build_traces(cfg, tmp_path / "out")
        text = str(err.value)
        assert said in text, text
        assert "teacher" not in text


def test_a_rewriter_that_changes_no_text_is_named_not_the_verifier(tmp_path):
    """Every rewrite returns its text as it was: every probe is dropped as having no cue, and the error says
    so (it blamed the verifier, which never saw an item)."""

    def unchanged(messages):
        text = re.search(r"<text((?: #\w+)?)>\n?(.*?)\n?</text\1>", messages[-1]["content"], re.DOTALL)
        return f"<rewritten>\n{text.group(2)}\n</rewritten>"

    with FakeChatServer(unchanged) as server:
        cfg = llm_cfg(server, tmp_path, biases="authority", n_per_bias=3, verifier="none")
        with pytest.raises(BiasAwareError) as err:
            build_bench(cfg, tmp_path / "out")
    text = str(err.value)
    assert "no cue could be written into any item (every rewrite left its text as it was)" in text
    assert "verifier dropped" not in text and "check the rewriter" in text


def test_secret_never_reaches_outputs_or_logs(tmp_path, monkeypatch, capfd):
    secret = "sk-live-SECRET-abc123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with FakeChatServer(api_key=secret) as server:
        cfg = llm_cfg(server, tmp_path, biases="authority", n_per_bias=4)
        from biasaware.cli import main

        config = tmp_path / "c.yaml"
        config.write_text(yaml.safe_dump({"llm": cfg.llm, "rewriter": "llm", "corpus_size": 300}))
        assert (
            main(
                [
                    "-v",
                    "build",
                    "bench",
                    "--config",
                    str(config),
                    "--out",
                    str(tmp_path / "out"),
                    "--biases",
                    "authority",
                    "--n",
                    "4",
                ]
            )
            == 0
        )
        assert server.bad_auth == 0 and server.requests > 0
    captured = capfd.readouterr()
    assert secret not in captured.out + captured.err and "llm rewriter (fake-judge)" in captured.out
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_local_transformers_teacher(tmp_path):
    llm = {
        "backend": "transformers",
        "model": "smollm2-135m-instruct",
        "max_tokens": 64,
        "cache_dir": str(tmp_path),
    }
    cfg = BuildConfig(corpus_size=300, teacher="llm", llm=llm, biases="bandwagon,gender", n_traces_per_bias=3)
    try:
        manifest = build_traces(cfg, tmp_path / "out")
    except BiasAwareError as exc:  # a 135M model rarely keeps the format: no trace at all is an error
        counts = re.findall(
            r"(\d+) kept but the teacher's replies gave (\d+) wrong verdicts and (\d+) not", str(exc)
        )
        assert len(counts) == 2 and all(int(k) == int(w) + int(b) == 3 for k, w, b in counts), str(exc)
        return
    assert manifest["llm"]["teacher"]["calls"] == 6 and manifest["llm"]["teacher"]["completion_tokens"] > 0
    for m in manifest["biases"].values():  # each reply is accounted for
        assert m["traces"] + m["wrong_verdict"] + m["bad_format"] == m["kept"] == 3


def test_a_role_on_a_local_backend_keeps_the_endpoints_concurrency_out_of_its_own_settings():
    """The shared llm section's concurrency is for its endpoint; a role that runs a local model is not refused
    for it (its own section does not set one), and its spec is the merge of the two."""
    cfg = BuildConfig(
        llm={"model": "m", "concurrency": 32},
        verifier_llm={"backend": "transformers", "model": "smollm2-135m-instruct"},
    )
    assert cfg.llm_spec("verifier").backend == "transformers"
    with pytest.raises(BiasAwareError, match="setting verifier_llm.concurrency"):
        BuildConfig(llm={"model": "m"}, verifier_llm={"backend": "transformers", "concurrency": 2})


def test_a_local_model_whose_rewrites_have_no_block_is_named_with_what_to_change(
    tiny_models, tmp_path, capsys
):
    """A local rewriter that never writes the <rewritten> block: the build stops naming the cause, and says that a
    rerun would decode the same replies (no 'rerun the same command')."""
    from biasaware.cli import main

    out = tmp_path / "o"
    argv = [
        "build",
        "bench",
        "--out",
        str(out),
        "--biases",
        "authority",
        "--n",
        "2",
        "--direction",
        "standard",
    ]
    argv += ["--rewriter", "llm", "--llm-backend", "transformers", "--llm-model", str(tiny_models["causal"])]
    argv += ["--verifier", "none", "--config", str(tmp_path / "c.yaml")]
    (tmp_path / "c.yaml").write_text(
        f"llm:\n  cache_dir: {tmp_path / 'cache'}\n  progress: false\n  max_tokens: 8\n"
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "rewriter: MalformedReply: no <rewritten>...</rewritten> block in the reply" in err
    assert "the rewriter's local model wrote replies without the requested format" in err
    assert "rerun the same command" not in err


def test_a_build_whose_endpoint_is_gone_stops_and_its_calls_still_count(tmp_path):
    """An endpoint that is gone: the build stops soon, naming it, and keeps nothing; the corrected run (the
    endpoint back at the same address) counts the failed run's calls too (same settings), while the calls
    of a run under other settings that kept nothing are not counted in this build's."""
    with FakeChatServer() as server:
        cfg = llm_cfg(server, tmp_path, biases="authority", n_per_bias=12)
        cfg = dataclasses.replace(cfg, llm={**cfg.llm, "max_retries": 1})
        port = urlsplit(server.base_url).port
    counts = tmp_path / "out" / ".work" / "llm"
    seen: list[Path] = []
    for run in (dataclasses.replace(cfg, n_per_bias=6), cfg):  # other settings first, then these
        with pytest.raises(BiasAwareError, match="rewriter: the endpoint is unreachable"):
            build_bench(run, tmp_path / "out")
        seen += [f for f in counts.glob("*.json") if f not in seen]
    failed = json.loads(seen[1].read_text())
    tried = failed["roles"]["rewriter"]["calls"]
    assert tried > 0 and failed["roles"]["rewriter"]["failures"] > 0
    with FakeChatServer(port=port) as server:
        manifest = build_bench(cfg, tmp_path / "out")
        total = manifest["llm_cumulative"]["rewriter"]
        assert total["runs"] == 2 and total["calls"] == tried + manifest["llm"]["rewriter"]["calls"]
    assert not seen[0].exists()  # the run under other settings, which kept nothing, counts in no build


def test_the_fake_endpoint_runs_from_the_command_line(tmp_path):
    """``python -m biasaware.judging.fake_server`` serves until Ctrl-C, printing its address; a build asks it."""
    server = subprocess.Popen(
        [sys.executable, "-m", "biasaware.judging.fake_server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        # Ctrl-C as in a terminal: a shell's background job (CI started with `&`) ignores SIGINT, and so would
        # the server it inherits that from
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = server.stdout.readline()
        base_url = re.search(r"serving (http://\S+)", line).group(1)
        cfg = BuildConfig(
            corpus_size=300,
            biases="length",
            n_per_bias=2,
            rewriter="llm",
            verifier="none",
            llm={
                "model": "any",
                "base_url": base_url,
                "cache_dir": str(tmp_path / "cache"),
                "progress": False,
            },
        )
        assert build_bench(cfg, tmp_path / "out")["llm"]["rewriter"]["calls"] > 0
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=10) == 0
