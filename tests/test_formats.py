"""Every `format` the JSON Schema spec names, on plain and on id parameters, synthesised and accepted back; tree-shaped
(recursive) schemas the stand-in agent fills; and a search that stops short of its deliverable pairs says so."""
import json, re, warnings
import jsonschema, pytest
from whilelab.core import canonical_json, tools
from whilelab.defaults import SimOptions
from whilelab.rollout import assistant_msg, strip_timings
from whilelab.simulate import simulate
from whilelab.world import Sandbox

CHECK = jsonschema.Draft202012Validator.FORMAT_CHECKER
SPEC_FORMATS = ("date", "date-time", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
                "uri", "uri-reference", "iri", "iri-reference", "uuid", "regex", "json-pointer", "relative-json-pointer",
                "uri-template")

def test_every_spec_format_is_checked_here():
    "A format the checker does not know passes anything: the tests below would prove nothing (install jsonschema[format-nongpl])."
    assert set(SPEC_FORMATS) <= set(CHECK.checkers), sorted(set(SPEC_FORMATS) - set(CHECK.checkers))
    assert not CHECK.conforms("not a uuid", "uuid") and not CHECK.conforms("P", "duration")

def format_tools(fmt):
    s = {"type": "string", "format": fmt}
    return tools([
        {"name": "get_record", "description": "Look up a record.",
         "input_schema": {"type": "object", "properties": {"record_id": {**s, "description": "The record."}}, "required": ["record_id"]}},
        {"name": "update_record", "description": "Change a record's value.",
         "input_schema": {"type": "object", "properties": {"record_id": s, "value": s,
                          "notes": {"type": "array", "items": {"type": "object", "properties": {"at": s}, "required": ["at"]}}},
                          "required": ["record_id", "value", "notes"]}}])

@pytest.mark.parametrize("fmt", SPEC_FORMATS)
def test_a_format_is_synthesised_and_accepted_back(fmt):
    ts = format_tools(fmt)
    box = Sandbox(ts, seed=3)
    ids = list(box.records["record"])
    assert ids and all(CHECK.conforms(i, fmt) for i in ids), ids          # the world's own ids have the format
    assert len(set(ids)) == len(ids)
    for t in ts:
        args = box.valid_args(t.name)                                       # the world's own proposal ...
        jsonschema.Draft202012Validator(t.input_schema, format_checker=CHECK).validate(args)
        assert args["record_id"] in box.records["record"]
        res = box.call(t.name, args)                                        # ... accepted back
        assert res["status"] == "ok", (fmt, args, res)
    # the stand-ins through a whole run: the person says ids of that format, the agent reads them, the world takes them
    sim = simulate(None, ts, "Verify the user first. Confirm before changing a record.", SimOptions(n_phrasings=1, k_samples=1, search=None),
                   progress=False)
    sent = [c["function"]["arguments"] for r in sim.rows if not r.get("flaw") for m in r["messages"]
            for c in m.get("tool_calls") or []]
    assert sent and all(CHECK.conforms(v, fmt) for a in sent for k, v in a.items() if k in ("record_id", "value"))
    assert not [c for r in sim.rows if not r.get("flaw") for c in r["calls"] if c["status"] == "invalid"]
    plain = [c["status"] for r in sim.rows if not r.get("flaw") and r["cell"]["world"] == "exists"
             and r["cell"]["condition"] == "ok" for c in r["calls"]]
    assert set(plain) <= {"ok"}, plain                   # a record that exists, no fault: every call answered
    assert any(c["status"] == "ok" and c["tool"] == "update_record" for r in sim.rows for c in r["calls"])

def test_uuid_ids_reach_every_deliverable_pair_with_the_stand_ins():
    "A plausible uuid user id is never refused: the world draws uuids and the stand-in agent reads them from the person."
    uid = {"type": "string", "format": "uuid"}
    ts = tools([{"name": "get_user", "description": "Get a user.", "input_schema": {"type": "object", "properties": {"user_id": uid}, "required": ["user_id"]}},
                {"name": "archive_page", "description": "Archive a page.", "input_schema": {"type": "object",
                 "properties": {"page_id": uid, "reason": {"type": "string"}}, "required": ["page_id", "reason"]}}])
    sim = simulate(None, ts, "Confirm before archiving.", SimOptions(n_phrasings=1, k_samples=1), progress=False)
    assert not [c for r in sim.rows for c in r["calls"] if c["status"] == "invalid" and not r.get("flaw")]
    sent = [c["function"]["arguments"] for r in sim.rows if not r.get("flaw") for m in r["messages"] for c in m.get("tool_calls") or []]
    assert sent and all(CHECK.conforms(a.get("page_id", a.get("user_id")), "uuid") for a in sent if {"page_id", "user_id"} & set(a))
    assert sim.coverage.attrs["pairs_covered"] == sim.coverage.attrs["pairs_planned"], sim.undelivered_pairs()[:3]

NODE = {"type": "object", "properties": {"title": {"type": "string"},
                                         "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}

def tree_tools(required):
    return tools([{"name": "create_outline", "description": "Create an outline from a tree of nodes.",
                   "input_schema": {"type": "object", "properties": {"node": {"$ref": "#/$defs/node"}}, "required": ["node"],
                                    "$defs": {"node": {**NODE, "required": required}}}},
                  {"name": "get_outline", "description": "Get an outline.", "input_schema": {
                      "type": "object", "properties": {"outline_id": {"type": "string"}}, "required": ["outline_id"]}}])

def depth(node):
    return 1 + max((depth(c) for c in node.get("children", [])), default=0)

@pytest.mark.parametrize("required", [["title"], ["title", "children"]])
def test_the_stand_in_agent_fills_a_recursive_schema(required):
    ts = tree_tools(required)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # below 100% would warn: it must not
        sim = simulate(None, ts, "Confirm before creating an outline.", SimOptions(n_phrasings=1, k_samples=2), progress=False)
    schema = ts[0].input_schema
    sent = [c["function"]["arguments"] for r in sim.rows if not r.get("flaw") for m in r["messages"]
            for c in m.get("tool_calls") or [] if c["function"]["name"] == "create_outline"]
    assert sent
    for a in sent:
        jsonschema.Draft202012Validator(schema, format_checker=CHECK).validate(a)
        assert depth(a["node"]) <= 3                  # the root and at most two levels of children
    if "children" in required: assert max(depth(a["node"]) for a in sent) == 3
    assert sim.coverage.attrs["pairs_covered"] == sim.coverage.attrs["pairs_planned"]

class EmptyArgs:
    "An agent that calls the tool the person asks for with no arguments at all, then gives up."
    name, family = "empty-args", "test"
    async def respond(self, messages, ctx):
        if any(m["role"] == "tool" for m in messages): return assistant_msg("Sorry, that did not work.")
        return assistant_msg("", [("call_1", ctx.situation.goal["tool"], {})])

def test_a_search_short_of_its_pairs_warns_with_the_reason_the_rows_gave():
    ts = tree_tools(["title"])
    with pytest.warns(UserWarning, match="deliverable pairs undelivered") as got:
        sim = simulate(EmptyArgs(), ts, "Confirm before creating an outline.", SimOptions(n_phrasings=1, k_samples=1), progress=False)
    said = next(str(w.message) for w in got if "deliverable pairs undelivered" in str(w.message))
    assert sim.coverage.attrs["fraction"] < 1 and sim.stopped in said
    assert "answered invalid" in said and "missing required arg" in said, said    # the rows' reason, the world's error

# patterns as real schemas write them (ISO 4217 and 3166 codes, E.164 phones, a uuid by pattern, semver, snake-case ids)
UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
PATTERNS = {"currency": r"^[A-Z]{3}$", "country": r"^[A-Z]{2}$", "phone": r"^\+?[1-9]\d{1,14}$",
            "plan_version": r"^[0-9]+\.[0-9]+\.[0-9]+$", "postal_code": r"^[A-Za-z0-9\s-]{3,12}$"}

def billing_tools(id_pattern):
    sid = {"type": "string", "pattern": id_pattern, "description": "The subscription."}
    fields = {k: {"type": "string", "pattern": p} for k, p in PATTERNS.items()}
    return tools([
        {"name": "get_subscription", "description": "Look up a subscription.",
         "input_schema": {"type": "object", "properties": {"subscription_id": sid}, "required": ["subscription_id"]}},
        {"name": "change_billing_details", "description": "Change a subscription's billing currency, country and phone.",
         "input_schema": {"type": "object", "properties": {"subscription_id": sid, **fields},
                          "required": ["subscription_id", *PATTERNS]}}])

@pytest.mark.parametrize("id_pattern", [UUID, r"^SUB-[A-Z]{2}\d{5}$", r"^[a-z][a-z0-9_]*$"])
def test_patterns_are_synthesised_said_and_accepted_back(id_pattern):
    "Every `pattern` value the world makes fits it; ids by pattern are said, read and found; a search reaches every pair."
    ts = billing_tools(id_pattern)
    box = Sandbox(ts, seed=5)
    ids = list(box.records["subscription"])
    assert ids and all(jsonschema.validate(i, {"type": "string", "pattern": id_pattern}) is None for i in ids), ids
    for t in ts:
        args = box.valid_args(t.name)
        jsonschema.Draft202012Validator(t.input_schema).validate(args)
        assert box.call(t.name, args)["status"] == "ok", (t.name, args)
    policy = "Verify the user first. Confirm before changing billing details."
    sim = simulate(None, ts, policy, SimOptions(n_phrasings=1, k_samples=1), progress=False)
    a = sim.coverage.attrs
    assert a["pairs_covered"] == a["pairs_planned"], (sim.stopped, a["pairs_covered"], a["pairs_planned"])
    sent = [c["function"]["arguments"] for r in sim.rows if not r.get("flaw") for m in r["messages"]
            for c in m.get("tool_calls") or []]
    assert sent and all(re.search(PATTERNS[k], v) for s in sent for k, v in s.items() if k in PATTERNS)
    assert not [c for r in sim.rows if not r.get("flaw") for c in r["calls"] if c["status"] == "invalid"]
    assert any(c["status"] == "ok" and c["tool"] == "change_billing_details" for r in sim.rows for c in r["calls"])
    again = simulate(None, ts, policy, SimOptions(n_phrasings=1, k_samples=1), progress=False)
    same = lambda rows: canonical_json([strip_timings(r) for r in rows])              # wall-clock apart, byte for byte
    assert same(again.rows) == same(sim.rows), "a second run with the same seed gave other rows"

def test_a_pattern_with_no_room_for_the_worlds_ids_says_so():
    "Three possible ids and more records than that: a clear error naming the entity, the pattern and the fix, not a hang."
    with pytest.raises(ValueError, match=r"'subscription'.*no value left.*Fix"):
        Sandbox(billing_tools(r"^(S1|S2|S3)$"), seed=0)
