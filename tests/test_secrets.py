"""Secrets: an API key set in the environment never appears in anything a run that uses it produces -- rows,
the run folder, exported training sets, log records (the SDKs' and httpx's at DEBUG included), what the
run prints, and the text of exceptions -- even when the server echoes the key back in its error bodies.
Two keys are tried: one in Anthropic's format and one in a format no pattern knows (a gateway's token)."""
import asyncio, importlib, json, logging, traceback
import pytest
httpx = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")
from whilelab.core import canonical_json, redact
from whilelab.defaults import SimOptions, RolloutOptions, GradeOptions
from whilelab.simulate import simulate
from whilelab.roles import ClaudeAgent, ClaudeUser, claude_judge
from whilelab.backends import ClaudeBackend, BackendError
from whilelab.grade import grade
from whilelab.cut import cut_sft, cut_dpo, cut_grpo, cut_rm, cut_kto, export

FAST = RolloutOptions(backoff_base_s=0.001, backoff_cap_s=0.002, max_retries=1, concurrency=8)
KEYS = ["sk-ant-api03-SECRETSUITEkeyABCDEFGHIJ0123456789xyz", "gw7Qx2LmZ9pR4tK8vN3bH6cJ"]

def server(key):
    """A Messages API that answers most requests, and fails with an error body quoting the caller's key on every 7th, the judge's first
    and every request with the system prompt 'echo-me'."""
    n = {"i": 0, "judge": 0}
    def handler(request):
        sent = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        assert sent == key
        body = json.loads(request.content); n["i"] += 1
        system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]   # cached: a text block
        n["judge"] += "grade" in system
        if n["i"] % 7 == 0 or system == "echo-me" or n["judge"] == 1:
            return httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error", "message": f"bad request for key {sent}"}})
        if "grade" in system:
            return httpx.Response(200, json=msg([{"type": "text", "text": "LABEL: pass\nREASON: fine."}]))
        text = "Hello, where is my order?" if not any(m["role"] == "assistant" for m in body["messages"]) else "###STOP###"
        if "###STOP###" in system: return httpx.Response(200, json=msg([{"type": "text", "text": text}]))
        return httpx.Response(200, json=msg([{"type": "text", "text": "I can help with that."}]))
    return handler

def msg(content):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content,
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}

@pytest.mark.parametrize("key", KEYS)
def test_a_key_in_the_environment_appears_in_no_output(key, tmp_path, monkeypatch, caplog, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    caplog.set_level(logging.DEBUG)                                        # every logger, the SDK's and httpx's included
    for name in ("anthropic", "httpx", "httpcore", "httpx2", "whilelab"): logging.getLogger(name).setLevel(logging.DEBUG)
    transport = httpx.MockTransport(server(key))
    backend = ClaudeBackend(transport=transport, opts=FAST)                 # the key comes from the environment
    sim = simulate(ClaudeAgent(backend=backend), options=SimOptions(k_samples=2, search=None, rollout=FAST),
                   user=ClaudeUser(backend=backend), out=tmp_path / "run", progress=True)
    assert any(r["error"] for r in sim.rows) and any(not r["error"] for r in sim.rows)   # the echoing errors happened, and real turns
    texts, failures = [], []
    same_family = GradeOptions(allow_same_family=True)                     # a Claude judge on Claude rows, knowingly
    with pytest.warns(UserWarning, match="gave no label"):                 # the judge's first call meets an echoing 400
        judged = grade(sim.rows, sim.spec, claude_judge(sim.spec.policy, backend=backend), opts=same_family)
    assert judged.ungraded.get("judge failed", 0) >= 1                      # that row is left ungraded, with the reason
    texts += [canonical_json(r) for r in judged] + [str(judged.report())]
    graded = grade(sim.rows, sim.spec)
    for cut in (cut_sft, cut_dpo, cut_grpo, cut_rm, cut_kto):
        sel = cut(graded, sim.spec)
        if sel.rows: export(sel, tmp_path / "export")
    if importlib.util.find_spec("inspect_ai"):                              # the run as an Inspect eval log, in plain JSON
        import whilelab.interop                                            # (scanned with the run folder's files below)
        sim.to_inspect(tmp_path / "inspect" / "run.json")
    try: asyncio.run(backend.create("echo-me", [{"role": "user", "content": "x"}]))   # a direct call that fails with the echo
    except BackendError as e: failures.append(e)
    assert len(failures) == 1, failures                                    # the echoing direct call raised
    texts += [t for e in failures for t in (str(e), repr(e), "".join(traceback.format_exception(e)))]
    out = capsys.readouterr()
    texts += [out.out, out.err, caplog.text] + [r.getMessage() for r in caplog.records]
    texts += [canonical_json(r) for r in graded]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"rows.jsonl", "plan.nc", "coverage.nc", "summary.json", "coverage.png"}
    assert any(p.suffix == ".parquet" for p in files)
    leaks = [p for p in files if key.encode() in p.read_bytes()] + [t[:200] for t in texts if key in t]
    assert not leaks, leaks
    assert sum("[redacted]" in canonical_json(r) for r in sim.rows) > 0    # the echoes were there, and were cut

def test_redact_removes_the_value_of_any_secret_variable(monkeypatch):
    monkeypatch.setenv("MY_GATEWAY_TOKEN", "plainword-but-secret-123")
    assert redact("got plainword-but-secret-123 back") == "got [redacted] back"
    monkeypatch.setenv("SHORT_KEY", "abc")                                  # too short to be a key: left alone
    assert redact("abc") == "abc"
