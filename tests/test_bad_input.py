"""Bad input, generated: tool schemas in every format, tool-call arguments and policies. Property: whilelab
never raises an unhandled exception on them; it either accepts the input or refuses it with an error that
names the field at fault (a `SchemaError` with `.field`, a world result whose payload names the argument,
a `ValueError` that names the parameter)."""
import os
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from whilelab.core import Tool, SchemaError, AgentSpec, shopfront, tools as as_tools, JSON_TYPES
from whilelab.axes import default_axes, policy_clauses
from whilelab.world import Sandbox, FAULTS

ANSWERS = {"ok", "not_found", "invalid", "refused", *FAULTS}   # every status a world answer may carry

SETTINGS = settings(max_examples=int(os.environ.get("WHILELAB_EXAMPLES", 400)), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize="WHILELAB_EXAMPLES" not in os.environ)   # CI: a fixed sample; set WHILELAB_EXAMPLES to explore more
names = st.one_of(st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True), st.text(max_size=8))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
type_names = st.one_of(st.sampled_from(JSON_TYPES + ("dict", "float", "tuple", "any", "int", "str", "bool")), st.text(max_size=6), json_values)

def schemas(depth=2):
    "Plausible JSON Schemas with junk mixed in at every level."
    leaf = st.fixed_dictionaries({}, optional={"type": type_names, "description": st.one_of(st.text(max_size=30), json_values),
                                               "enum": st.one_of(st.lists(scalars, max_size=3), json_values), "default": json_values,
                                               "nullable": st.booleans()})
    if depth == 0: return leaf
    sub = schemas(depth - 1)
    obj = st.fixed_dictionaries({"type": st.just("object")}, optional={
        "properties": st.one_of(st.dictionaries(names, sub, max_size=4), json_values),
        "required": st.one_of(st.lists(names, max_size=3), json_values),
        "items": st.one_of(sub, json_values), "anyOf": st.one_of(st.lists(sub, max_size=2), json_values)})
    return st.one_of(leaf, obj, json_values)

def tool_dicts():
    s = schemas()
    return st.one_of(
        st.fixed_dictionaries({"name": st.one_of(names, json_values)}, optional={"description": json_values, "input_schema": s}),
        st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries({}, optional={"name": names, "description": json_values, "parameters": s})}),
        st.fixed_dictionaries({"name": names}, optional={"inputSchema": s, "outputSchema": s, "annotations": json_values, "title": json_values}),
        st.dictionaries(st.text(max_size=10), json_values, max_size=4), json_values)

def names_the_field(e: SchemaError) -> bool:
    return bool(e.field) and repr(e.field) in str(e) and "Fix:" in str(e)

@SETTINGS
@given(tool_dicts())
def test_any_tool_dict_is_a_tool_or_a_schema_error_naming_the_field(d):
    try: t = Tool.from_any(d)
    except SchemaError as e: assert names_the_field(e), str(e); return
    assert t.input_schema["type"] == "object" and t.effect in ("read", "write")
    assert Tool.from_any(t.to_anthropic()).to_anthropic() == t.to_anthropic()      # what it accepts, it round-trips

@SETTINGS
@given(st.lists(tool_dicts(), min_size=1, max_size=3), st.text(max_size=200))
def test_any_tools_and_policy_give_axes_or_a_clear_error(ds, policy):
    try: ts = as_tools(ds)
    except SchemaError as e: assert names_the_field(e); return
    try: axes = default_axes(ts, policy)
    except ValueError as e: assert "Fix:" in str(e) and ("policy" in str(e) or "tool" in str(e)); return
    assert axes["tool"].levels == [t.name for t in ts] and len(axes["rule"]) >= 1

@SETTINGS
@given(st.text(max_size=400))
def test_policy_text_never_breaks_the_clause_splitter(text):
    cs = policy_clauses(text)
    assert all(c.text.strip() and c.kind in ("rule", "fact") for c in cs)
    assert len({c.id for c in cs}) == len(cs)

@pytest.mark.parametrize("policy", [None, 42, ["never guess"], b"bytes"])
def test_a_policy_that_is_not_text_is_refused_by_name(policy):
    with pytest.raises((TypeError, ValueError), match="policy"): AgentSpec("a", shopfront().tools, policy)

SPEC = shopfront()
BOX = Sandbox(SPEC.tools, seed=0)
TOOL_NAMES = [t.name for t in SPEC.tools]
arguments = st.one_of(json_values, st.dictionaries(st.one_of(st.sampled_from(sorted({p for t in SPEC.tools for p in t.params})), st.text(max_size=8)),
                                                   json_values, max_size=4))

@SETTINGS
@given(st.one_of(st.sampled_from(TOOL_NAMES), names), arguments)
def test_any_call_gets_an_answer_and_a_refusal_names_the_argument(name, args):
    box = BOX.fork()
    res = box.call(name, args)
    assert set(res) == {"status", "payload", "error"}
    if res["status"] == "invalid":
        p = res["payload"]
        if name not in TOOL_NAMES: assert "unknown tool" in p["error"] and "fix" in p; return
        assert p["problems"] and all(isinstance(q["field"], str) and q["fix"] for q in p["problems"])
        fields = {q["field"] for q in p["problems"]}
        assert fields <= set(args if isinstance(args, dict) else ()) | set(box.schema.tools[name].params) | {"(arguments)"}
    if res["status"] == "refused":
        assert res["payload"]["field"] in args and res["payload"]["hint"]

@SETTINGS
@given(st.lists(tool_dicts(), min_size=1, max_size=3), st.integers(0, 2**32), st.data())
def test_a_world_builds_from_any_accepted_schema_and_answers_any_call(ds, seed, data):
    try: ts = as_tools(ds)
    except SchemaError: return
    box = Sandbox(ts, seed=seed)
    for t in ts:
        res = box.call(t.name, box.valid_args(t.name))           # well-formed arguments the world itself proposes
        assert res["status"] != "invalid", (t.input_schema, res)
        res = box.call(t.name, data.draw(arguments))
        assert set(res) == {"status", "payload", "error"} and res["status"] in ANSWERS, res
