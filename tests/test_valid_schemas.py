"""Valid tool sets, generated: any tool set written in the draft 2020-12 subset real tools use (`$ref`/`$defs`,
`anyOf`/`oneOf`/`allOf`, `const`, `enum`, `format`, numeric bounds, nested arrays and objects,
`additionalProperties`, names with dots) builds, plans, plays and grades with no unhandled exception and no
refusal of a valid call. Every call -- valid, missing, wrong-typed, echoed, nested-wrong -- gets a result dict;
refusals name the JSON path; answers fit the tool's `outputSchema`. Arguments are checked against the raw schema
with `jsonschema` itself, so the world's own checks are tested against an independent validator."""
import copy, os
import jsonschema
from hypothesis import given, settings, strategies as st, HealthCheck
from whilelab.core import tools as as_tools
from whilelab.world import Sandbox, FAULTS
from whilelab.defaults import SimOptions
from whilelab.simulate import simulate

ANSWERS = {"ok", "not_found", "invalid", "refused", *FAULTS}
N = int(os.environ.get("WHILELAB_EXAMPLES", 100))
SETTINGS = settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                    derandomize="WHILELAB_EXAMPLES" not in os.environ)

prop_names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
tool_names = st.from_regex(r"[a-z][a-z_]{1,8}(\.[a-z][a-z_]{1,8})?", fullmatch=True)   # BFCL-style dotted names too
FORMATS = ["date", "date-time", "email", "uri", "uuid"]

def scalar_schemas():
    # maxLength from 36: a uuid has 36 characters (below that no value satisfies the schema, and intake refuses it)
    string = st.fixed_dictionaries({"type": st.just("string")}, optional={
        "format": st.sampled_from(FORMATS), "minLength": st.integers(0, 3), "maxLength": st.integers(36, 60),
        "description": st.text(max_size=20)})
    number = st.builds(lambda t, lo, span: {"type": t, "minimum": lo, "maximum": lo + span},
                       st.sampled_from(["integer", "number"]), st.integers(-100, 100), st.integers(1, 1000))
    return st.one_of(string, number, st.just({"type": "boolean"}), st.just({"type": ["string", "null"]}),
                     st.builds(lambda v: {"enum": v}, st.lists(st.text("abc", min_size=1, max_size=4), min_size=1, max_size=3, unique=True)),
                     st.builds(lambda v: {"const": v}, st.text("xyz", min_size=1, max_size=3)),
                     st.just({"$ref": "#/$defs/Money"}))

def value_schemas(depth=2):
    if depth == 0: return scalar_schemas()
    sub = value_schemas(depth - 1)
    obj = st.builds(lambda props, req, extra: {"type": "object", "properties": props, "required": sorted(set(req) & set(props)),
                                               **({"additionalProperties": False} if extra else {})},
                    st.dictionaries(prop_names, sub, min_size=1, max_size=3), st.lists(prop_names, max_size=3), st.booleans())
    arr = st.builds(lambda items, lo: {"type": "array", "items": items, "minItems": lo}, sub, st.integers(0, 2))
    anyof = st.builds(lambda subs: {"anyOf": subs}, st.lists(scalar_schemas(), min_size=1, max_size=2))
    oneof = st.builds(lambda ts: {"oneOf": [{"type": t} for t in ts]},         # disjoint, or no value could fit exactly one
                      st.lists(st.sampled_from(["string", "integer", "boolean", "null"]), min_size=1, max_size=3, unique=True))
    allof = st.builds(lambda a, b: {"allOf": [{"type": "object", "properties": a, "required": sorted(a)[:1]}, {"type": "object", "properties": b}]},
                      st.dictionaries(prop_names, scalar_schemas(), min_size=1, max_size=2), st.dictionaries(prop_names, scalar_schemas(), max_size=2))
    return st.one_of(sub, obj, arr, anyof, oneof, allof)

MONEY = {"Money": {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0, "maximum": 10000},
                                                    "currency": {"enum": ["USD", "EUR"]}}, "required": ["amount", "currency"]}}

@st.composite
def tool_sets(draw):
    ts = []
    for name in draw(st.lists(tool_names, min_size=1, max_size=3, unique=True)):
        props = draw(st.dictionaries(prop_names, value_schemas(), min_size=1, max_size=4))
        if draw(st.booleans()): props[f"{draw(st.sampled_from(['order', 'user', 'group']))}_id"] = {"type": draw(st.sampled_from(["string", "integer"]))}
        req = sorted(draw(st.sets(st.sampled_from(sorted(props)))))
        schema = {"type": "object", "properties": props, "required": req, "$defs": MONEY}
        out = draw(st.one_of(st.none(), st.builds(lambda props, req: {"type": "object", "properties": props, "required": sorted(set(req) & set(props))},
                                                  st.dictionaries(prop_names, value_schemas(1), min_size=1, max_size=3), st.lists(prop_names, max_size=2))))
        style = draw(st.sampled_from(["mcp", "anthropic", "openai"]))
        if style == "mcp": d = {"name": name, "description": f"Do {name}", "inputSchema": schema, **({"outputSchema": {**out, "$defs": MONEY}} if out else {})}
        elif style == "anthropic": d = {"name": name, "description": f"Do {name}", "input_schema": schema}
        else: d = {"type": "function", "function": {"name": name, "description": f"Do {name}", "parameters": schema}}
        ts.append(d)
    return ts

def raw_schema(d):
    "The schema as the user wrote it, for the independent validator."
    return d.get("inputSchema") or d.get("input_schema") or d["function"]["parameters"]

def independent_ok(d, args) -> bool:
    return jsonschema.Draft202012Validator(raw_schema(d), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).is_valid(args)

@SETTINGS
@given(tool_sets(), st.integers(0, 2**31), st.data())
def test_valid_tool_sets_answer_every_call_and_refuse_only_what_is_wrong(ds, seed, data):
    ts = as_tools(ds)                                               # never a SchemaError: every set here is valid
    box = Sandbox(ts, seed=seed)
    for d, t in zip(ds, ts):
        args = box.valid_args(t.name)
        assert independent_ok(d, args), (raw_schema(d), args)      # the world's own proposals fit the schema as written
        res = box.call(t.name, args)
        assert set(res) - {"world_said"} == {"status", "payload", "error"} and res["status"] in ANSWERS
        assert res.get("world_said", "ok") in ("ok", "not_found", "refused")    # what the world itself answered
        assert res["status"] not in ("invalid", "refused"), (t.name, args, res)   # a valid call is never refused
        if res["status"] == "ok" and t.output_schema:
            jsonschema.Draft202012Validator(t.output_schema).validate(res["payload"])
        for p in t.required:                                         # a missing required argument: named
            res = box.call(t.name, {k: v for k, v in args.items() if k != p})
            assert res["status"] == "invalid" and p in [q["field"] for q in res["payload"]["problems"]]
        for p, v in args.items():
            wrong = data.draw(st.sampled_from([{"nested": [1]}, 3.5, "text", True, [None]]), label="wrong")
            bad = {**args, p: wrong}
            res = box.call(t.name, bad)
            if not independent_ok(d, bad):                           # wrong by the schema: refused, naming where
                assert res["status"] == "invalid", (raw_schema(d), bad, res)
                assert all(q["field"].split(".")[0].split("[")[0] in t.params or q["field"] == "(arguments)" for q in res["payload"]["problems"])
            else: assert res["status"] not in ("invalid",), (raw_schema(d), bad, res)
            if isinstance(v, dict | list) and v:                     # nested-wrong: the path inside is named
                deep = copy.deepcopy(v)
                if isinstance(deep, list): deep[0] = {"unexpected": object.__name__} if not isinstance(deep[0], dict) else {**deep[0], "x": 1}
                else: deep[next(iter(deep))] = {"deep": [1, 2]}
                res = box.call(t.name, {**args, p: deep})
                if not independent_ok(d, {**args, p: deep}):
                    assert res["status"] == "invalid" and any(q["field"].startswith(p) for q in res["payload"]["problems"]), res
            if isinstance(v, str) and t.params[p].get("type") == "string" and "const" not in t.params[p] and "enum" not in t.params[p]:
                res = box.call(t.name, {**args, p: f"the user's {p.replace('_', ' ')}"})   # an echo of the parameter
                assert res["status"] in ("refused", "invalid"), res

@settings(max_examples=max(5, N // 15), deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize="WHILELAB_EXAMPLES" not in os.environ)
@given(tool_sets(), st.sampled_from(["", "Verify the user before any change. Never share data.", "Bestätige jede Änderung, bevor du sie ausführst."]))
def test_valid_tool_sets_plan_play_and_grade(ds, policy):
    sim = simulate(None, ds, policy, SimOptions(n_phrasings=1, k_samples=1, search=None), progress=False)
    assert sim.rows and all(r["error"] is None for r in sim.rows)
    from whilelab.grade import grade
    graded = grade(sim.rows, sim.spec)
    assert all(r["reward"] in (0.0, 1.0) for r in graded)
    by_name = {(d.get("function") or d)["name"]: d for d in ds}
    for r in sim.rows:                                               # no call the schema accepts was refused
        sent = [c["function"] for m in r["messages"] for c in m.get("tool_calls") or []]
        for f, c in zip(sent, r["calls"]):
            if f["name"] in by_name and independent_ok(by_name[f["name"]], f["arguments"]):
                assert c["status"] != "invalid", (f, c)


# ---- schemas no value satisfies: refused at intake, naming the tool, the JSON path and the fix (issue 35) ----

import pytest
from whilelab.core import SchemaError

def one_param(p: dict) -> list:
    return [{"name": "probe", "description": "Probe", "input_schema": {"type": "object", "properties": {"x": p}}}]

UNSATISFIABLE = [   # (the parameter's schema, the JSON path the refusal names)
    ({"type": "number", "minimum": 10, "maximum": 1}, "input_schema.properties.x.minimum"),
    ({"type": "number", "exclusiveMinimum": 3, "exclusiveMaximum": 3}, "input_schema.properties.x.minimum"),
    ({"type": "number", "minimum": 3, "exclusiveMaximum": 3}, "input_schema.properties.x.minimum"),
    ({"type": "number", "minimum": 3, "maximum": 3, "exclusiveMinimum": True}, "input_schema.properties.x.minimum"),
    ({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2}, "input_schema.properties.x.minimum"),
    ({"type": "string", "minLength": 5, "maxLength": 2}, "input_schema.properties.x.minLength"),
    ({"type": "string", "format": "uuid", "maxLength": 32}, "input_schema.properties.x.maxLength"),   # a uuid has 36
    ({"type": "string", "format": "date", "minLength": 11}, "input_schema.properties.x.minLength"),
    ({"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 1}, "input_schema.properties.x.minItems"),
    ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "input_schema.properties.x.allOf[1].type"),
    ({"type": "object", "allOf": [{"type": "array"}]}, "input_schema.properties.x.allOf[0].type"),
    ({"allOf": [{"const": "a"}, {"const": "b"}]}, "input_schema.properties.x.allOf[1].const"),
    ({"allOf": [{"type": "string"}, {"const": 7}]}, "input_schema.properties.x.allOf[1].const"),
]

@pytest.mark.parametrize("schema,path", UNSATISFIABLE, ids=[p.split("x.")[-1] + f"-{i}" for i, (_, p) in enumerate(UNSATISFIABLE)])
def test_a_schema_no_value_satisfies_is_refused_naming_tool_path_and_fix(schema, path):
    with pytest.raises(SchemaError) as e: as_tools(one_param(schema))
    assert e.value.tool == "probe" and e.value.field == path and e.value.fix, str(e.value)
    assert "probe" in str(e.value) and path in str(e.value) and "Fix:" in str(e.value)

def test_the_object_whose_only_value_is_null_is_refused_at_intake():
    "The case that failed test_bad_input's world property on a fresh machine: its world refused its own `{}`."
    d = [{"name": "nil", "description": "Nil", "input_schema": {"type": "object", "enum": [None]}}]
    with pytest.raises(SchemaError, match=r"tool 'nil', field 'input_schema.enum'.*Fix:"): as_tools(d)

OFF_TYPE = [   # (the parameter's schema, the field the warning names, a value the author meant, one they did not)
    ({"type": "string", "enum": [1, 2]}, "input_schema.properties.x.enum", 2, 3),
    ({"type": "integer", "enum": [1.5, "2"]}, "input_schema.properties.x.enum", "2", 2),
    ({"type": "boolean", "const": "true"}, "input_schema.properties.x.const", "true", True),
    ({"type": "null", "const": 0}, "input_schema.properties.x.const", 0, None),
    ({"type": "integer", "enum": ["1", "2", "dontcare"]}, "input_schema.properties.x.enum", "dontcare", "3"),   # BFCL
    ({"type": "boolean", "enum": ["True", "False", "dontcare"]}, "input_schema.properties.x.enum", "False", False),
    ({"type": "array", "items": {"type": "string"}, "enum": ["co2", "noise"]}, "input_schema.properties.x.enum",
     ["co2"], ["pm10"]),                                                    # an array's enum: its items'
    ({"type": "object", "properties": {"y": {"type": "integer", "enum": ["a"]}}, "required": ["y"]},
     "input_schema.properties.x.properties.y.enum", {"y": "a"}, {"y": "b"}),
]

@pytest.mark.parametrize("schema,path,meant,not_meant", OFF_TYPE, ids=[f"off-type-{i}" for i in range(len(OFF_TYPE))])
def test_an_enum_of_another_type_is_read_as_its_author_meant_with_a_warning(schema, path, meant, not_meant):
    "As model APIs take it (BFCL's live sets write these): the values as listed are allowed, the rest refused."
    with pytest.warns(UserWarning, match=r"tool 'probe', field " + path.replace(".", r"\.").replace("[", r"\[")):
        t = as_tools(one_param(schema))[0]
    box = Sandbox([t], seed=0)
    assert box.call("probe", {"x": meant})["status"] == "ok"
    assert box.call("probe", {"x": not_meant})["status"] == "invalid"
    assert box.call("probe", box.valid_args("probe"))["status"] != "invalid"

SATISFIABLE = [     # near misses: each has a value, so each is accepted
    {"type": ["string", "null"], "enum": [None]}, {"type": "number", "enum": [2]}, {"type": "integer", "enum": [2.0]},
    {"type": "number", "minimum": 3, "maximum": 3}, {"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 2},
    {"type": "integer", "minimum": 1.5, "maximum": 2}, {"type": "string", "minLength": 2, "maxLength": 2},
    {"minimum": 10, "maximum": 1},                                   # no type: a string fits
    {"enum": ["a", 5], "type": "string"}, {"allOf": [{"type": "number"}, {"type": "integer"}]},
    {"allOf": [{"const": 1}, {"const": 1}, {"type": "integer"}]}, {"allOf": [{"type": "string"}, {"$ref": "#/$defs/S"}]},
    {"anyOf": [{"type": "string"}, {"type": "integer"}], "allOf": [{"type": ["integer", "null"]}]},
]

@pytest.mark.parametrize("schema", SATISFIABLE)
def test_a_schema_some_value_satisfies_is_accepted(schema):
    d = one_param(schema); d[0]["input_schema"]["$defs"] = {"S": {"type": "string"}}
    t = as_tools(d)[0]
    box = Sandbox([t], seed=0)
    assert box.call("probe", box.valid_args("probe"))["status"] != "invalid"
