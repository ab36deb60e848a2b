"""Worlds drawn from a seed, for the corpus of unseen worlds (`bench/corpus.py`): nobody wrote them, so no default can
have been tuned to them.

* `schema_spec(seed)`: tools as JSON Schemas only (the sandbox answers): ids with patterns or uuid formats, nested
  objects, enums, arrays, bounded numbers and dates, a lookup by email or phone, and a policy with ask-first and
  identity rules.
* `sqlite_world(seed)`: an SQLite database of three tables, each referring to the one before (owner <- record <- part),
  with functions written out as Python source (a find by email, reads, and writes that refuse records in the wrong
  status, unknown ids and parts of someone else's), and a policy.
"""
import random, sqlite3, tempfile, textwrap, types
from pathlib import Path

NOUNS = [("patron", "booking", "seat"), ("tenant", "lease", "repair"), ("rider", "trip", "stop"),
         ("farmer", "delivery", "crate"), ("student", "enrolment", "module"), ("owner", "vessel", "berth"),
         ("donor", "pledge", "instalment"), ("member", "claim", "receipt")]
STATES = [("open", "on hold", "closed"), ("scheduled", "in progress", "finished"), ("draft", "submitted", "archived"),
          ("active", "suspended", "expired")]
VERBS = [("pause", "resume"), ("approve", "reject"), ("close", "reopen"), ("flag", "clear")]
FIRST = ["Aiko", "Bruno", "Chidi", "Dana", "Elif", "Farah", "Goran", "Hana", "Iker", "Jana"]
LAST = ["Abe", "Borg", "Costa", "Dube", "Eze", "Friis", "Gupta", "Holm", "Ibáñez", "Jovanović"]

def _pick(rng, xs): return xs[rng.randrange(len(xs))]

def schema_spec(seed: int) -> dict:
    "Tools (JSON Schema, OpenAI function form) and a policy, drawn from `seed`."
    rng = random.Random(f"schema-{seed}")
    owner, rec, part = _pick(rng, NOUNS)
    states = _pick(rng, STATES)
    verb = _pick(rng, VERBS)[0]
    uuid_ids = rng.random() < 0.5
    rid = ({"type": "string", "format": "uuid", "description": f"the {rec}'s id"} if uuid_ids else
           {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{5}$", "description": f"the {rec}'s id, such as 'QX-20417'"})
    who = ("email", {"type": "string", "format": "email", "description": f"the {owner}'s email"}) if rng.random() < 0.5 \
        else ("phone", {"type": "string", "pattern": r"^\+?[0-9 ]{8,15}$", "description": f"the {owner}'s phone number"})
    fn = lambda name, desc, props, req: {"type": "function", "function": {"name": name, "description": desc,
             "parameters": {"type": "object", "properties": props, "required": req}}}
    tools = [
        fn(f"find_{owner}", f"Find a {owner}'s id by their {who[0]}.", {who[0]: who[1]}, [who[0]]),
        fn(f"get_{rec}", f"A {rec}: its {part}s, its status ({', '.join(states)}) and its {owner}.", {f"{rec}_id": rid},
           [f"{rec}_id"]),
        fn(f"list_{rec}s", f"The {rec}s of a {owner}.",
           {f"{owner}_id": {"type": "string", "description": f"the {owner}'s id"},
            "status": {"type": "string", "enum": list(states), "description": "only those in this status"}},
           [f"{owner}_id"]),
        fn(f"{verb}_{rec}", f"{verb.capitalize()} a {states[0]} {rec}.",
           {f"{rec}_id": rid, "reason": {"type": "string", "description": "why, in the person's words"},
            "notify": {"type": "boolean"}}, [f"{rec}_id", "reason"]),
        fn(f"add_{part}", f"Add a {part} to a {states[0]} {rec}.",
           {f"{rec}_id": rid, part: {"type": "object", "required": ["label", "quantity"],
                                      "properties": {"label": {"type": "string", "maxLength": 40},
                                                     "quantity": {"type": "integer", "minimum": 1, "maximum": 9},
                                                     "due": {"type": "string", "format": "date"},
                                                     "tags": {"type": "array", "items": {"enum": ["urgent", "fragile",
                                                                                                  "cold"]}}}}},
           [f"{rec}_id", part]),
    ]
    if rng.random() < 0.5: tools = tools[:2] + tools[3:]          # some specs list nothing
    policy = "\n".join([f"# {rec.capitalize()} desk",
                        f"- Confirm who the {owner} is from their {who[0]} before anything else.",
                        f"- Only act on {rec}s that belong to that {owner}.",
                        f"- Ask the {owner} to confirm before you {verb} a {rec}.",
                        f"- Only {states[0]} {rec}s can have {part}s added.",
                        "- If a tool fails, say so and never claim it worked."])
    return {"tools": tools, "policy": policy}

_FUNCS = '''
def find_{owner}(db, email: Annotated[str, Field(description="the {owner}'s email")]) -> dict:
    "Find a {owner}'s id by email."
    r = db.execute("SELECT {owner}_id FROM {owner}s WHERE lower(email) = ?", (email.strip().lower(),)).fetchone()
    if r is None: raise LookupError("no {owner} with that email")
    return {{"{owner}_id": r[0]}}

def get_{rec}(db, {rec}_id: Annotated[str, Field(description="the {rec}'s id, such as '{rp}-101'")]) -> dict:
    "A {rec} and its status."
    cur = db.execute("SELECT * FROM {rec}s WHERE {rec}_id = ?", ({rec}_id,))
    r = cur.fetchone()
    if r is None: raise KeyError("{rec} " + str({rec}_id) + " not found")
    return dict(zip([d[0] for d in cur.description], r))

def {verb}_{rec}(db, {rec}_id: Annotated[str, Field(description="the {rec}'s id, such as '{rp}-101'")]) -> dict:
    "{Verb} a {s0} {rec}."
    r = get_{rec}(db, {rec}_id)
    if r["status"] != "{s0}": raise ValueError("{rec} " + {rec}_id + " is " + r["status"] + "; only {s0} ones")
    db.execute("UPDATE {rec}s SET status = '{s1}' WHERE {rec}_id = ?", ({rec}_id,)); db.commit()
    return get_{rec}(db, {rec}_id)

def get_{part}(db, {part}_id: Annotated[str, Field(description="the {part}'s id, such as '{pp}-501'")]) -> dict:
    "A {part}, with the {rec} it belongs to."
    cur = db.execute("SELECT * FROM {part}s WHERE {part}_id = ?", ({part}_id,))
    r = cur.fetchone()
    if r is None: raise LookupError("no {part} " + str({part}_id))
    return dict(zip([d[0] for d in cur.description], r))

def remove_{part}(db, {part}_id: Annotated[str, Field(description="the {part}'s id, such as '{pp}-501'")],
                  note: Annotated[str, Field(description="why it is removed")]) -> dict:
    "Remove a {part} from a {s0} {rec}."
    p = get_{part}(db, {part}_id)
    if get_{rec}(db, p["{rec}_id"])["status"] != "{s0}": raise PermissionError("its {rec} is not {s0}")
    if p["state"] == "removed": raise ValueError("already removed")
    db.execute("UPDATE {part}s SET state = 'removed', note = ? WHERE {part}_id = ?", (note, {part}_id)); db.commit()
    return get_{part}(db, {part}_id)
'''

def sqlite_world(seed: int, **options):
    "A `FunctionWorld` over a fresh SQLite file drawn from `seed`, and its policy: (world, policy)."
    from whilelab.worlds import FunctionWorld
    rng = random.Random(f"sqlite-{seed}")
    owner, rec, part = _pick(rng, NOUNS)
    s0, s1, s2 = _pick(rng, STATES)
    verb = _pick(rng, VERBS)[0]
    rp, pp = rec[:2].upper(), part[:2].upper()
    path = Path(tempfile.mkdtemp(prefix=f"gen-{seed}-")) / "world.db"
    con = sqlite3.connect(path)
    con.executescript(f"""
        CREATE TABLE {owner}s ({owner}_id TEXT PRIMARY KEY, name TEXT, email TEXT, tier TEXT);
        CREATE TABLE {rec}s ({rec}_id TEXT PRIMARY KEY, {owner}_id TEXT REFERENCES {owner}s, status TEXT, total REAL);
        CREATE TABLE {part}s ({part}_id TEXT PRIMARY KEY, {rec}_id TEXT REFERENCES {rec}s, state TEXT, note TEXT);""")
    people = [(f"{owner[:1].upper()}{100 + i}", f"{_pick(rng, FIRST)} {_pick(rng, LAST)}", None, _pick(rng, ["basic", "plus"]))
              for i in range(rng.randint(3, 6))]
    people = [(i, n, n.split()[0].lower() + f".{k}@mail.test", t) for k, (i, n, _, t) in enumerate(people)]
    con.executemany(f"INSERT INTO {owner}s VALUES (?,?,?,?)", people)
    recs = [(f"{rp}-{101 + i}", _pick(rng, people)[0], _pick(rng, [s0, s0, s1, s2]), round(rng.uniform(5, 500), 2))
            for i in range(rng.randint(5, 10))]
    con.executemany(f"INSERT INTO {rec}s VALUES (?,?,?,?)", recs)
    parts = [(f"{pp}-{501 + i}", _pick(rng, recs)[0], _pick(rng, ["kept", "kept", "removed"]), None)
             for i in range(rng.randint(6, 12))]
    con.executemany(f"INSERT INTO {part}s VALUES (?,?,?,?)", parts)
    con.commit(); con.close()
    src = _FUNCS.format(owner=owner, rec=rec, part=part, verb=verb, Verb=verb.capitalize(), s0=s0, s1=s1, rp=rp, pp=pp)
    mod = types.ModuleType(f"generated_{seed}")
    exec("from typing import Annotated\nfrom pydantic import Field\n" + src, mod.__dict__)
    fns = [getattr(mod, n) for n in (f"find_{owner}", f"get_{rec}", f"{verb}_{rec}", f"get_{part}", f"remove_{part}")]
    policy = "\n".join([f"# {rec.capitalize()} desk", f"- Confirm who the {owner} is from their email first.",
                        f"- Only act on {rec}s and {part}s of that {owner}.",
                        f"- Ask the {owner} to confirm before you {verb} a {rec} or remove a {part}.",
                        f"- Only {s0} {rec}s can be changed.", "- If the system fails, say so plainly."])
    return FunctionWorld(fns, str(path), name=f"gen-sqlite-{seed}", **options), policy
