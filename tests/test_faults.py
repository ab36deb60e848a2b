"""Backend faults at a set rate, through the real anthropic SDK and an httpx mock transport that speaks the
Messages API: 429 (with retry-after), 529, 500, read timeouts, truncated bodies and malformed bodies. Every
rollout ends as a row -- complete, or with its error recorded -- and every retry waited at least the backoff
(and at least what a 429 asked for)."""
import hashlib, importlib, json, threading, time
from collections import defaultdict
import pytest
httpx = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")
from whilelab.core import shopfront, canonical_json
from whilelab.axes import agent_axes
from whilelab.cover import covering_array, plan_cells
from whilelab.defaults import RolloutOptions
from whilelab.rollout import situation_from_cell, rollouts
from whilelab.roles import ClaudeAgent
from whilelab.backends import ClaudeBackend
from whilelab.standins import TemplateUser

KEY = "sk-ant-api03-FAULTSUITEKEYneverinarow0123456789"
OPTS = RolloutOptions(backoff_base_s=0.02, backoff_cap_s=0.08, max_retries=4, concurrency=32)
RETRY_AFTER = 0.05
PHRASINGS = 3
KINDS = ("429", "529", "500", "timeout", "truncated", "malformed")
SPEC = shopfront()
SITS = [situation_from_cell(c, SPEC, seed=1) for c in plan_cells(covering_array(agent_axes(SPEC), seed=0))]

def draw(*parts) -> float: return int(hashlib.sha256(repr(parts).encode()).hexdigest()[:8], 16) / 2**32

class FaultyAPI:
    """Answers each request with a fault at `rate` (decided from the request body and how often that body was
    seen, so the same conversation meets the same faults at any concurrency), else a short text turn."""
    def __init__(self, rate):
        self.rate, self.lock, self.log = rate, threading.Lock(), defaultdict(list)    # body -> [(time, outcome)]
    def __call__(self, request):
        body = request.content
        with self.lock:
            attempt = len(self.log[body])
            u = draw(body, attempt)
            kind = KINDS[int(draw(body, attempt, "kind") * len(KINDS))] if u < self.rate else "ok"
            self.log[body].append((time.monotonic(), kind))
        if kind == "timeout": raise httpx.ReadTimeout("read timed out", request=request)
        if kind == "truncated": return httpx.Response(200, content=b'{"id": "msg_1", "type": "mess', headers={"content-type": "application/json"})
        if kind == "malformed": return httpx.Response(200, json={"unexpected": True})
        if kind != "ok":
            status = int(kind)
            return httpx.Response(status, json={"type": "error", "error": {"type": "overloaded_error" if status == 529 else "api_error", "message": "x"}},
                                  headers={"retry-after": str(RETRY_AFTER)} if status == 429 else {})
        msgs = json.loads(body)["messages"]
        turns = sum(m["role"] == "assistant" for m in msgs)
        looked = isinstance(msgs[-1]["content"], list) and msgs[-1]["content"][0].get("type") == "tool_result"
        content = [{"type": "text", "text": f"Reply {turns}: " + ("I have noted that." if looked else "Let me check.")}]
        if not looked: content.append({"type": "tool_use", "id": f"toolu_{turns}", "name": "get_order", "input": {"order_id": "#W1234"}})
        return httpx.Response(200, json={"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content,
                                         "stop_reason": "end_turn" if looked else "tool_use", "stop_sequence": None,
                                         "usage": {"input_tokens": 10, "output_tokens": 5}})

def run(rate):
    api = FaultyAPI(rate)
    agent = ClaudeAgent(backend=ClaudeBackend(api_key=KEY, transport=httpx.MockTransport(api), opts=OPTS, concurrency=16))
    rows = rollouts(SITS, SPEC, agent, TemplateUser(), PHRASINGS, 1, seed=1, opts=OPTS, progress=False)
    return api, rows

@pytest.fixture(scope="module")
def faulty(): return run(0.3)

def test_every_rollout_ends_as_a_row_complete_or_with_its_error(faulty):
    api, rows = faulty
    assert len(rows) == len(SITS) * PHRASINGS and len({(r["situation_id"], r["phrasing"]) for r in rows}) == len(rows)
    faults = [k for log in api.log.values() for _, k in log if k != "ok"]
    assert len(faults) > 100 and set(faults) == set(KINDS)                        # every kind was injected, many times
    failed = [r for r in rows if r["error"]]
    for r in failed:
        assert any(s in r["error"] for s in ("no content", "attempts")), r["error"]   # says what went wrong
        assert r["messages"][0]["role"] == "user" and KEY not in canonical_json(r)
    for r in rows:
        if r["error"]: continue
        said = [m for m in r["messages"] if m["role"] == "assistant"]
        assert said and all(m["content"].startswith(f"Reply {i}:") for i, m in enumerate(said))   # no turn silently lost
    assert 0 < len(failed) < len(rows)        # malformed bodies end rollouts; retries save the rest

def test_retries_wait_at_least_the_backoff_and_the_retry_after(faulty):
    api, _ = faulty
    checked = 0
    for body, log in api.log.items():
        if sum(k in ("ok", "malformed") for _, k in log) > 1: continue     # two rollouts sent this same body: their attempts interleave
        for a, ((t0, kind), (t1, _)) in enumerate(zip(log, log[1:])):
            if kind in ("ok", "malformed"): break          # a conversation's body is sent again only after a transient fault
            least = 0.5 * min(OPTS.backoff_cap_s, OPTS.backoff_base_s * 2 ** a)   # the jitter keeps at least half the step
            if kind == "429": least = max(least, RETRY_AFTER)
            assert t1 - t0 >= least - 0.002, (kind, a, t1 - t0, least)
            checked += 1
    assert checked > 100

def test_a_backend_that_always_fails_gives_error_rows_not_silence():
    api, rows = run(1.0)
    assert len(rows) == len(SITS) * PHRASINGS and all(r["error"] for r in rows)
    sent = sum(len(log) for log in api.log.values())
    assert len(rows) < sent <= len(rows) * (OPTS.max_retries + 1)      # retried, and gave up after the retries: no more
