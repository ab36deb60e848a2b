"""Strict test servers for the two wire formats whilelab's backends speak: the Anthropic Messages API and
OpenAI-compatible chat completions (plus completions with echo, for reference scoring).

Each checks a request the way the real API does -- required fields, strict role alternation, non-empty
content, tool_use / tool_result pairing, tool-call answers, name patterns -- and answers 400 with the
provider's own error body when it would be refused, so a request the real API refuses fails here first.
A `reply(body)` function (the scenario of one test) answers the requests that pass.

`handler(...)` plugs into an SDK's httpx MockTransport; `serve(...)` runs the same handler on a real local
socket, for what only a real connection shows (clients closed on the loop that opened them)."""

import contextlib, importlib, json, re, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

httpx = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # tool names both APIs accept
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")  # tool_use ids the Messages API accepts


class Refused(Exception):
    "A request the real API would answer with 400; the message is what it says."


def _need(cond, msg):
    if not cond:
        raise Refused(msg)


def check_messages(body: dict):
    "Refuse a Messages API request the way api.anthropic.com does."
    for f in ("model", "max_tokens", "messages"):
        _need(f in body, f"{f}: Field required")
    _need(isinstance(body["max_tokens"], int) and body["max_tokens"] >= 1, "max_tokens: must be a positive integer")
    msgs = body["messages"]
    _need(isinstance(msgs, list) and msgs, "messages: at least one message is required")
    _need(msgs[0]["role"] == "user", "messages: the first message must use the user role")
    # the API reads a final assistant turn as a prefill to continue; whilelab never means one (issue 35)
    _need(msgs[-1].get("role") != "assistant", "messages: the request ends with an assistant turn, which the API "
                                               "continues as a prefill instead of answering")
    system = body.get("system", "")
    _need(
        isinstance(system, str) or all(b.get("type") == "text" for b in system),
        "system: must be a string or text blocks",
    )
    names = [t.get("name") for t in body.get("tools") or []]
    for i, t in enumerate(body.get("tools") or []):
        _need(
            isinstance(t.get("name"), str) and NAME.match(t["name"]),
            f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'",
        )
        _need(
            isinstance(t.get("input_schema"), dict) and t["input_schema"].get("type") == "object",
            f"tools.{i}.input_schema.type: Input should be 'object'",
        )
    _need(len(names) == len(set(names)), "tools: Tool names must be unique")
    pending = set()  # tool_use ids the next user turn must answer
    for i, m in enumerate(msgs):
        _need(m.get("role") in ("user", "assistant"), f"messages.{i}.role: Input should be 'user' or 'assistant'")
        _need(
            i == 0 or m["role"] != msgs[i - 1]["role"],
            f"messages.{i}: roles must alternate between 'user' and 'assistant'",
        )
        content, last = m.get("content"), i == len(msgs) - 1
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        _need(
            isinstance(blocks, list) and (blocks or (last and m["role"] == "assistant")),
            f"messages.{i}: all messages must have non-empty content except for the optional final assistant message",
        )
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if pending:
            _need(
                m["role"] == "user" and set(results) >= pending,
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{sorted(pending)}",
            )
        _need(
            set(results) <= pending,
            f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
            f"{sorted(set(results) - pending)}",
        )
        kinds = [b.get("type") for b in blocks]
        _need(
            kinds[: len(results)] == ["tool_result"] * len(results),
            f"messages.{i}: tool_result blocks must come first in a user message",
        )
        pending = set()
        for j, b in enumerate(blocks):
            where = f"messages.{i}.content.{j}"
            if b.get("type") == "text":
                _need(
                    isinstance(b.get("text"), str) and b["text"] != "",
                    f"{where}: text content blocks must be non-empty",
                )
                _need(
                    not (last and m["role"] == "assistant" and b["text"] != b["text"].rstrip()),
                    "final assistant content cannot end with trailing whitespace",
                )
            elif b.get("type") == "tool_use":
                _need(m["role"] == "assistant", f"{where}: tool_use blocks are only allowed in assistant messages")
                _need(
                    TOOL_ID.match(str(b.get("id", ""))), f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                )
                _need(
                    NAME.match(str(b.get("name", ""))),
                    f"{where}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'",
                )
                _need(isinstance(b.get("input"), dict), f"{where}.input: Input should be a valid dictionary")
                pending.add(b["id"])
            elif b.get("type") == "tool_result":
                _need(m["role"] == "user", f"{where}: tool_result blocks are only allowed in user messages")
            else:
                raise Refused(f"{where}.type: unknown content block type {b.get('type')!r}")


def strict_schema_problem(s, path: str = "parameters"):
    """Where a strict function schema breaks the structured-outputs rules (every object closes with
    `additionalProperties: false` and requires every property it lists), or None."""
    if isinstance(s, list):
        return next(filter(None, (strict_schema_problem(x, f"{path}[{i}]") for i, x in enumerate(s))), None)
    if not isinstance(s, dict):
        return None
    if s.get("type") == "object" or "properties" in s:
        if s.get("additionalProperties") is not False:
            return f"In context={path}, 'additionalProperties' is required to be supplied and to be false."
        if sorted(s.get("required", [])) != sorted(s.get("properties", {})):
            return (f"In context={path}, 'required' is required to be supplied and to be an array including every "
                    "key in properties.")
    for k in ("properties", "$defs", "definitions"):
        for name, sub in (s.get(k) or {}).items():
            if (w := strict_schema_problem(sub, f"{path}.{k}.{name}")):
                return w
    for k in ("items", "anyOf", "oneOf", "allOf"):
        if k in s and (w := strict_schema_problem(s[k], f"{path}.{k}")):
            return w
    return None


def check_chat(body: dict):
    "Refuse a chat-completions request the way an OpenAI-compatible server does."
    for f in ("model", "messages"):
        _need(f in body, f"Missing required parameter: '{f}'.")
    msgs = body["messages"]
    _need(isinstance(msgs, list) and msgs, "[] is too short - 'messages'")
    for i, t in enumerate(body.get("tools") or []):
        _need(
            t.get("type") == "function" and NAME.match(str(t.get("function", {}).get("name", ""))),
            f"Invalid 'tools[{i}].function.name': string does not match pattern '^[a-zA-Z0-9_-]{{1,64}}$'.",
        )
        if t.get("function", {}).get("strict"):
            w = strict_schema_problem(t["function"].get("parameters"))
            _need(w is None, f"Invalid schema for function '{t['function'].get('name')}': {w}")
    pending = set()
    for i, m in enumerate(msgs):
        role = m.get("role")
        _need(
            role in ("system", "developer", "user", "assistant", "tool"),
            f"Invalid value: '{role}'. Supported values are: 'system', " "'assistant', 'user', 'tool'.",
        )
        if role == "tool":
            _need(
                m.get("tool_call_id") in pending,
                f"Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                "message with 'tool_calls'.",
            )
            pending.discard(m["tool_call_id"])
            continue
        _need(
            not pending,
            f"An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {sorted(pending)}",
        )
        if role == "assistant":
            calls = m.get("tool_calls") or []
            _need(
                m.get("content") or calls,
                f"Invalid 'messages[{i}]': an assistant message needs 'content' or 'tool_calls'.",
            )
            for j, c in enumerate(calls):
                f = c.get("function", {})
                _need(
                    c.get("type") == "function" and NAME.match(str(f.get("name", ""))),
                    f"Invalid 'messages[{i}].tool_calls[{j}].function.name': string does not match pattern.",
                )
                _need(
                    isinstance(f.get("arguments"), str),
                    f"Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': " "expected a string.",
                )
                pending.add(c.get("id"))
        else:
            _need(isinstance(m.get("content"), (str, list)), f"Invalid type for 'messages[{i}].content'.")
    _need(
        not pending,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.",
    )


def check_completions(body: dict):
    for f in ("model", "prompt"):
        _need(f in body, f"Missing required parameter: '{f}'.")
    lp = body.get("logprobs")
    _need(lp is None or (isinstance(lp, int) and 0 <= lp <= 5), "logprobs: must be an integer from 0 to 5")


def _refusal(path: str, msg: str):
    if path.endswith("/messages"):
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
    return 400, {"error": {"message": msg, "type": "invalid_request_error", "param": None, "code": None}}


class Strict:
    """A server for one test: requests are checked as the real API checks them (refused ones are kept in
    `refused`), and the ones that pass go to `reply(body, path)`, which returns a JSON body, a (status, body)
    pair, or an exception to raise (a timeout). `calls` holds every request body, in order."""

    CHECKS = {"/v1/messages": check_messages, "/v1/chat/completions": check_chat, "/v1/completions": check_completions}

    def __init__(self, reply):
        self.reply, self.calls, self.refused, self.keys = reply, [], [], set()
        self.lock = threading.Lock()

    def answer(self, path: str, headers, raw: bytes):
        "(status, headers, body) for one request."
        body = json.loads(raw)
        with self.lock:
            self.calls.append(body)
            self.keys.add(headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer "))
        check = next((f for p, f in self.CHECKS.items() if path.endswith(p)), None)
        if check is None:
            return 404, {}, {"error": {"message": f"no route {path}"}}
        try:
            check(body)
        except Refused as e:
            with self.lock:
                self.refused.append(str(e))
            status, err = _refusal(path, str(e))
            return status, {}, err
        out = self.reply(body, path) if self.reply.__code__.co_argcount > 1 else self.reply(body)
        if isinstance(out, BaseException):
            raise out
        if isinstance(out, tuple) and len(out) == 3:
            return out
        if isinstance(out, tuple):
            return out[0], {}, out[1]
        return 200, {}, out

    def __call__(self, request):
        "As an httpx MockTransport handler."
        try:
            status, headers, body = self.answer(request.url.path, request.headers, request.content)
        except Exception as e:
            if type(e).__name__.endswith("Timeout"):
                raise type(e)(str(e), request=request) from None
            raise
        if isinstance(body, bytes):
            return httpx.Response(status, content=body, headers={"content-type": "application/json", **headers})
        return httpx.Response(status, json=body, headers=headers)

    def transport(self):
        return httpx.MockTransport(self)


@contextlib.contextmanager
def serve(strict: Strict):
    "Run `strict` on a real local socket; yields the base URL."

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            status, headers, body = strict.answer(self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for k, v in {"content-type": "application/json", **headers}.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 256   # the default backlog of 5 refuses connections when many rollouts open them at once
        daemon_threads = True

    srv = Server(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()
        srv.server_close()


def message(content, stop="end_turn", usage=(120, 30), model="claude-sonnet-4-5"):
    "A Messages API reply body."
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def chat(content, tool_calls=None, logprobs=(-0.1, -0.2, -0.3), tokens=None, finish=None, usage=(50, 7)):
    "A chat-completions reply body."
    msg = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    toks = tokens or [f"t{i}" for i in range(len(logprobs))]
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "my-model",
        "choices": [
            {
                "index": 0,
                "message": msg,
                "finish_reason": finish or ("tool_calls" if tool_calls else "stop"),
                "logprobs": {
                    "content": [
                        {"token": t, "logprob": lp, "bytes": None, "top_logprobs": []} for t, lp in zip(toks, logprobs)
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # batch custom_id pattern both APIs accept


class Batches:
    """The batch endpoints of both providers, in memory, for an httpx MockTransport: Anthropic's Message Batches
    (create, retrieve, results as JSONL) and OpenAI's Batch API (file upload, create, retrieve, file content).
    Each request in a batch is checked as a direct call would be; `reply(body)` answers it (a body, or a
    (status, body) pair for an errored request). A batch ends at its `polls`-th status check; ids in `expire`
    are left unanswered (expired). `created` counts submitted batches, `checks` status checks."""

    def __init__(self, reply, polls=2, expire=(), fail=None):
        self.reply, self.polls, self.expire, self.fail = reply, polls, set(expire), fail
        self.batches, self.files, self.created, self.checks, self.refused = {}, {}, 0, 0, []

    def _one(self, body, check):
        try:
            check(body)
        except Refused as e:
            self.refused.append(str(e))
            return 400, {"error": {"type": "invalid_request_error", "message": str(e)}}
        out = self.reply(body)
        return out if isinstance(out, tuple) else (200, out)

    def _submit(self, items, check):
        ids = [c for c, _ in items]
        _need(
            len(set(ids)) == len(ids) and all(CUSTOM_ID.match(c) for c in ids),
            "custom_id: must be unique and match ^[a-zA-Z0-9_-]{1,64}$",
        )
        self.created += 1
        bid = f"batch_{self.created}"
        self.batches[bid] = {
            "results": {c: self._one(b, check) for c, b in items if c not in self.expire},
            "ids": ids,
            "checks": 0,
        }
        return bid

    def _ended(self, bid):
        b = self.batches[bid]
        b["checks"] += 1
        self.checks += 1
        return b["checks"] >= self.polls

    def _anthropic(self, method, path, body):
        if method == "POST" and path == "/v1/messages/batches":
            return self._anthropic_batch(
                self._submit([(r["custom_id"], r["params"]) for r in body["requests"]], check_messages)
            )
        bid = path.split("/")[4]
        if path.endswith("/results"):
            b, lines = self.batches[bid], []
            for c in b["ids"]:
                if c not in b["results"]:
                    lines.append({"custom_id": c, "result": {"type": "expired"}})
                    continue
                status, out = b["results"][c]
                res = (
                    {"type": "succeeded", "message": out}
                    if status == 200
                    else {"type": "errored", "error": {"type": "error", "error": out["error"]}}
                )
                lines.append({"custom_id": c, "result": res})
            return 200, "".join(json.dumps(x) + "\n" for x in lines).encode()
        return self._anthropic_batch(bid, ended=self._ended(bid))

    def _anthropic_batch(self, bid, ended=False):
        return 200, {
            "id": bid,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
            "created_at": "2026-12-03T00:00:00Z",
            "expires_at": "2026-12-04T00:00:00Z",
            "ended_at": None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"https://api.anthropic.com/v1/messages/batches/{bid}/results" if ended else None,
        }

    def _openai(self, method, path, body, raw, headers):
        if path == "/v1/files":
            from email.parser import BytesParser

            msg = BytesParser().parsebytes(b"Content-Type: " + headers["content-type"].encode() + b"\r\n\r\n" + raw)
            parts = {
                p.get_param("name", header="content-disposition"): p.get_payload(decode=True) for p in msg.get_payload()
            }
            _need(parts.get("purpose") == b"batch", "purpose: must be 'batch'")
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = parts["file"]
            return 200, {
                "id": fid,
                "object": "file",
                "bytes": len(parts["file"]),
                "created_at": 0,
                "filename": "requests.jsonl",
                "purpose": "batch",
                "status": "processed",
            }
        if path.endswith("/content"):
            return 200, self.files[path.split("/")[3]]
        if method == "POST":
            _need(
                body.get("endpoint") == "/v1/chat/completions" and body.get("completion_window") == "24h",
                "endpoint or completion_window",
            )
            lines = [json.loads(x) for x in self.files[body["input_file_id"]].decode().splitlines() if x.strip()]
            _need(
                all(x["method"] == "POST" and x["url"] == body["endpoint"] for x in lines), "each line's method and url"
            )
            return 200, self._openai_batch(self._submit([(x["custom_id"], x["body"]) for x in lines], check_chat))
        bid = path.split("/")[3]
        return 200, self._openai_batch(bid, ended=self._ended(bid))

    def _openai_batch(self, bid, ended=False):
        out = {
            "id": bid,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": "file-1",
            "completion_window": "24h",
            "status": "in_progress",
            "created_at": 0,
            "output_file_id": None,
            "error_file_id": None,
            "errors": None,
        }
        if self.fail and ended:
            return {
                **out,
                "status": "failed",
                "errors": {"object": "list", "data": [{"code": "invalid", "message": self.fail}]},
            }
        if not ended:
            return out
        b, ok, bad = self.batches[bid], [], []
        for c in b["ids"]:
            status, res = b["results"].get(c, (None, None))
            if status is None:
                bad.append(
                    {
                        "id": f"r-{c[:8]}",
                        "custom_id": c,
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the completion window expired.",
                        },
                    }
                )
            else:
                (ok if status == 200 else bad).append(
                    {
                        "id": f"r-{c[:8]}",
                        "custom_id": c,
                        "response": {"status_code": status, "request_id": "q", "body": res},
                        "error": None,
                    }
                )
        for name, lines in (("output_file_id", ok), ("error_file_id", bad)):
            if lines:
                fid = f"file-{bid}-{name[:3]}"
                self.files[fid] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                out[name] = fid
        return {**out, "status": "completed"}

    def __call__(self, request):
        path, method, raw = request.url.path, request.method, request.content
        body = json.loads(raw) if raw and request.headers.get("content-type", "").startswith("application/json") else {}
        try:
            if path.startswith("/v1/messages/batches"):
                status, out = self._anthropic(method, path, body)
            else:
                status, out = self._openai(method, path, body, raw, request.headers)
        except Refused as e:
            self.refused.append(str(e))
            status, out = _refusal(path, str(e))
        if isinstance(out, bytes):
            return httpx.Response(status, content=out, headers={"content-type": "application/binary"})
        return httpx.Response(status, json=out)

    def transport(self):
        return httpx.MockTransport(self)
