"""Bad input, generated: tool schemas in every format, tool-call arguments and policies. Property: whilelab
never raises an unhandled exception on them; it either accepts the input or refuses it with an error that
names the field at fault (a `SchemaError` with `.field`, a world result whose payload names the argument,
a `ValueError` that names the parameter)."""
import os
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck, example
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

@pytest.mark.parametrize("where, field", [({"type": []}, "input_schema.type"),
                                          ({"type": "object", "properties": {"x": {"type": []}}},
                                           "input_schema.properties.x.type")])
def test_an_empty_list_of_types_is_refused_naming_the_field(where, field):
    "Found exploring: `type: []` allows no value; it is refused at intake, naming the field and the fix."
    with pytest.raises(SchemaError) as e: Tool.from_any({"name": "a", "inputSchema": where})
    assert e.value.field == field and "empty list of types" in str(e.value) and "Fix:" in str(e.value), str(e.value)

@SETTINGS
@given(tool_dicts())
@example({"name": "a", "inputSchema": {"type": []}})        # found exploring (2026-12-05): an IndexError, not a refusal
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
@example([{"name": "nil", "input_schema": {"type": "object", "enum": [None]}}], 0, None)   # refused at intake (issue 35)
def test_a_world_builds_from_any_accepted_schema_and_answers_any_call(ds, seed, data):
    try: ts = as_tools(ds)
    except SchemaError: return
    box = Sandbox(ts, seed=seed)
    for t in ts:
        res = box.call(t.name, box.valid_args(t.name))           # well-formed arguments the world itself proposes
        assert res["status"] != "invalid", (t.input_schema, res)
        res = box.call(t.name, data.draw(arguments))
        # what the world itself said of the planned call rides along (never shown to the agent)
        assert set(res) - {"world_said"} == {"status", "payload", "error"} and res["status"] in ANSWERS, res
        assert res.get("world_said", "ok") in ("ok", "not_found", "refused"), res


# ---- a user's files and functions: each problem named, with its file (or function) and the fix ----

import json, warnings
from pathlib import Path
from whilelab.core import text_file
from whilelab.cli import main, options_from, user_world

def test_untyped_parameters_of_a_function_tool_are_named_in_a_warning():
    def lookup(order_id, verbose=False, limit: int = 3) -> dict:
        "Look up an order."
    with pytest.warns(UserWarning, match=r"tool 'lookup': parameter\(s\) \['order_id', 'verbose'\] have no type.*"
                                         r"Fix: annotate them"):
        t = Tool.from_function(lookup)
    assert t.params["order_id"] == {} and t.params["limit"]["type"] == "integer"     # still accepted, as before
    def typed(order_id: str) -> dict:
        "Look up an order."
    with warnings.catch_warnings(): warnings.simplefilter("error"); Tool.from_function(typed)   # typed: no warning

def test_an_untyped_function_of_your_world_is_named_in_a_warning(tmp_path):
    (tmp_path / "untyped_shop.py").write_text('DB = {"orders": {}}\n\ndef get_order(db, order_id) -> dict:\n'
                                              '    "An order."\n    return db["orders"][order_id]\n')
    with pytest.warns(UserWarning, match=r"tool 'get_order': parameter\(s\) \['order_id'\]"):
        world = user_world(str(tmp_path / "untyped_shop.py"))
    assert [t.name for t in world.tools] == ["get_order"]

TOOLS = json.dumps([{"name": "get_order", "description": "Look up an order.",
                     "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}}}])

@pytest.mark.parametrize("policy, tools, options, said", [
    (b"P\x8c\x00\x01binary", TOOLS, None, "policy.md: not UTF-8 text (byte 0x8c at position 1"),
    ("Never invent ids.".encode("utf-16"), TOOLS, None, "policy.md: not UTF-8 text (byte 0xff at position 0"),
    ("Never invent ids.".encode("utf-16-le"), TOOLS, None, "policy.md: holds NUL bytes"),
    (b"  \n", TOOLS, None, "policy.md: empty. Fix: write the agent's policy"),
    (None, TOOLS, None, "policy.md: no such file. Fix: give the path of your policy text"),
    ("dir", TOOLS, None, "policy.md: a folder, not a file"),
    (b"Never invent ids.", b"\x89PNG\r\n\x1a\n", None, "tools.json: not UTF-8 text"),
    (b"Never invent ids.", '[{"name": "get_order"', None, "tools.json: not JSON"),
    (b"Never invent ids.", '{"get_order": 1}', None, "tools.json: tool '?', field 'tool': unrecognised tool dict"),
    (b"Never invent ids.", None, None, "tools.json: no such file. Fix: give the path of your tools JSON"),
    (b"Never invent ids.", TOOLS, b"k_samples = \x8c", "o.toml: not UTF-8 text"),
    (b"Never invent ids.", TOOLS, b"k_samples = [", "o.toml: not TOML"),
])
def test_a_bad_policy_tools_or_options_file_is_named_with_the_fix(tmp_path, monkeypatch, capsys, policy, tools,
                                                                    options, said):
    monkeypatch.chdir(tmp_path)
    if policy == "dir": (tmp_path / "policy.md").mkdir()
    elif policy is not None: (tmp_path / "policy.md").write_bytes(policy)
    if tools is not None: (tmp_path / "tools.json").write_bytes(tools if isinstance(tools, bytes) else tools.encode())
    args = ["run", "--tools", "tools.json", "--policy", "policy.md", "--out", "r"]
    if options is not None: (tmp_path / "o.toml").write_bytes(options); args += ["--options", "o.toml"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert said in err and "Fix:" in err and "Traceback" not in err, err
    assert not (tmp_path / "r").exists()                                       # refused before anything was played

def test_library_readers_name_the_file_and_the_fix(tmp_path):
    (tmp_path / "policy.docx").write_bytes(b"PK\x03\x04\x8c\x00\x00")
    with pytest.raises(ValueError, match=r"policy.docx: not UTF-8 text .*Fix: save your policy text as UTF-8"):
        text_file(tmp_path / "policy.docx", "policy text")
    with pytest.raises(TypeError, match=r"policy is a path .*Fix: AgentSpec\(name, tools, text_file\("):
        AgentSpec("a", shopfront().tools, tmp_path / "policy.docx")
    (tmp_path / "o.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match="o.json: not UTF-8 text"): options_from(tmp_path / "o.json")
    (tmp_path / "ok.md").write_bytes("\ufeffNever invent ids.".encode())
    assert text_file(tmp_path / "ok.md") == "Never invent ids."                  # a Windows editor's BOM is dropped

@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file: an unreadable one cannot be made")
def test_an_unreadable_policy_is_named_with_the_fix(tmp_path):
    (tmp_path / "policy.md").write_text("Never invent ids."); (tmp_path / "policy.md").chmod(0)
    with pytest.raises(ValueError, match=r"policy.md: cannot be read .*Fix: make it readable"):
        text_file(tmp_path / "policy.md", "policy text")

def test_an_out_folder_that_is_a_file_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.md").write_text("Never invent ids."); (tmp_path / "tools.json").write_text(TOOLS)
    (tmp_path / "results").write_text("my notes")
    assert main(["run", "--tools", "tools.json", "--policy", "policy.md", "--out", "results"]) == 2
    assert "--out results: a file, not a folder. Fix:" in capsys.readouterr().err
    assert (tmp_path / "results").read_text() == "my notes"                    # nothing the user had is lost

@pytest.mark.parametrize("given", ["tools.json", Path("tools.json"), b"[]"])
def test_a_file_name_given_as_tools_is_refused_with_the_fix(given):
    with pytest.raises(SchemaError, match=r"not a list of tools\. Fix: read the file first"): as_tools(given)


def test_a_warning_from_deep_inside_names_the_users_line():
    "The policy clauses left off the rule axis are said at the line that called whilelab, from `default_axes` or deeper."
    import json, warnings
    from whilelab.core import shared_data
    from whilelab.axes import default_axes
    from whilelab.simulate import simulate
    from whilelab.defaults import SimOptions, SearchOptions
    d = json.loads(shared_data("tau_bench_domains.json", __file__).read_text())["retail"]
    for play in (lambda: default_axes(d["tools"], d["policy"]),
                 lambda: simulate(None, d["tools"], d["policy"], SimOptions(search=SearchOptions(budget=1)),
                                  progress=False)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            play()
        said = [x for x in w if "left off the rule axis" in str(x.message)]
        assert said and all(x.filename == __file__ for x in said), [(x.filename, x.lineno) for x in said]
