"""A research lab's sample store, as an SQLite database: researchers, freezers and samples, with a hazard rule.

Written for the corpus of unseen worlds (`bench/corpus.py`): ids like `SMP-20931`, a sample may be discarded only while
stored, and only by a researcher cleared for its hazard class; free-text reasons and temperatures in degrees Celsius.
"""
import sqlite3
from pathlib import Path
from typing import Annotated
from pydantic import Field

SCHEMA = """
CREATE TABLE researchers (researcher_id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL,
                          clearance INTEGER NOT NULL, lab TEXT NOT NULL);
CREATE TABLE freezers (freezer_id TEXT PRIMARY KEY, room TEXT NOT NULL, temperature_c REAL NOT NULL,
                       state TEXT NOT NULL);
CREATE TABLE samples (sample_id TEXT PRIMARY KEY, researcher_id TEXT NOT NULL REFERENCES researchers,
                      freezer_id TEXT REFERENCES freezers, material TEXT NOT NULL, hazard_class INTEGER NOT NULL,
                      status TEXT NOT NULL, note TEXT);
"""
RESEARCHERS = [("R-101", "Ingrid Solberg", "ingrid.solberg@lab.no", 3, "virology"),
               ("R-102", "Kwame Mensah", "k.mensah@lab.gh", 1, "botany"),
               ("R-103", "Yuki Tanaka", "yuki.tanaka@lab.jp", 2, "genomics"),
               ("R-104", "Lucía Romero", "lucia.romero@lab.es", 1, "genomics")]
FREEZERS = [("FZ-1", "B204", -80.0, "running"), ("FZ-2", "B204", -20.0, "running"), ("FZ-3", "C110", -80.0, "defrosting")]
SAMPLES = [("SMP-20931", "R-101", "FZ-1", "influenza isolate", 3, "stored", None),
           ("SMP-20932", "R-101", "FZ-1", "cell lysate", 1, "stored", None),
           ("SMP-20944", "R-102", "FZ-2", "leaf tissue", 1, "stored", None),
           ("SMP-20950", "R-103", "FZ-1", "DNA extract", 2, "in transit", None),
           ("SMP-20951", "R-103", "FZ-2", "RNA extract", 2, "stored", None),
           ("SMP-20960", "R-104", None, "plasmid prep", 1, "discarded", "contaminated"),
           ("SMP-20961", "R-104", "FZ-2", "primer stock", 1, "stored", None),
           ("SMP-20970", "R-102", "FZ-3", "seed extract", 2, "quarantined", "freezer fault")]

def make_db(path) -> Path:
    path = Path(path); path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    with con:
        con.executescript(SCHEMA)
        con.executemany("INSERT INTO researchers VALUES (?,?,?,?,?)", RESEARCHERS)
        con.executemany("INSERT INTO freezers VALUES (?,?,?,?)", FREEZERS)
        con.executemany("INSERT INTO samples VALUES (?,?,?,?,?,?,?)", SAMPLES)
    con.close()
    return path

def _one(db, sql, *args):
    cur = db.execute(sql, args); r = cur.fetchone()
    return None if r is None else dict(zip([d[0] for d in cur.description], r))

SampleId = Annotated[str, Field(description="the sample's id, such as 'SMP-20931'")]

def find_researcher(db, email: Annotated[str, Field(description="the researcher's lab email")]) -> dict:
    "Find a researcher's id by their lab email."
    r = _one(db, "SELECT researcher_id FROM researchers WHERE lower(email) = ?", email.strip().lower())
    if r is None: raise LookupError(f"no researcher with email {email}")
    return r

def get_sample(db, sample_id: SampleId) -> dict:
    "A sample: its material, hazard class, status, freezer and owner."
    s = _one(db, "SELECT * FROM samples WHERE sample_id = ?", sample_id)
    if s is None: raise LookupError(f"sample {sample_id} not found")
    return s

def discard_sample(db, sample_id: SampleId,
                   reason: Annotated[str, Field(description="why the sample is discarded, in the researcher's words")]) -> dict:
    "Discard a stored sample; the researcher's clearance must be at least the sample's hazard class."
    s = get_sample(db, sample_id)
    if s["status"] != "stored": raise ValueError(f"only a stored sample can be discarded; {sample_id} is {s['status']}")
    clearance = _one(db, "SELECT clearance FROM researchers WHERE researcher_id = ?", s["researcher_id"])["clearance"]
    if clearance < s["hazard_class"]:
        raise PermissionError(f"hazard class {s['hazard_class']} needs clearance {s['hazard_class']}; the owner has {clearance}")
    db.execute("UPDATE samples SET status = 'discarded', note = ? WHERE sample_id = ?", (reason, sample_id)); db.commit()
    return get_sample(db, sample_id)

def move_sample(db, sample_id: SampleId,
                freezer_id: Annotated[str, Field(description="the freezer to move it to, such as 'FZ-2'")]) -> dict:
    "Move a stored sample to another running freezer."
    s = get_sample(db, sample_id)
    f = _one(db, "SELECT * FROM freezers WHERE freezer_id = ?", freezer_id)
    if f is None: raise LookupError(f"freezer {freezer_id} not found")
    if s["status"] != "stored": raise ValueError(f"{sample_id} is {s['status']}; only stored samples can be moved")
    if f["state"] != "running": raise ValueError(f"freezer {freezer_id} is {f['state']}")
    db.execute("UPDATE samples SET freezer_id = ? WHERE sample_id = ?", (freezer_id, sample_id)); db.commit()
    return get_sample(db, sample_id)

def list_samples(db, researcher_id: Annotated[str, Field(description="the researcher's id, such as 'R-101'")]) -> list:
    "The samples a researcher owns."
    if _one(db, "SELECT 1 AS x FROM researchers WHERE researcher_id = ?", researcher_id) is None:
        raise LookupError(f"researcher {researcher_id} not found")
    cur = db.execute("SELECT sample_id, material, status FROM samples WHERE researcher_id = ? ORDER BY sample_id",
                     (researcher_id,))
    return [dict(zip(("sample_id", "material", "status"), r)) for r in cur.fetchall()]

FUNCTIONS = [find_researcher, get_sample, discard_sample, move_sample, list_samples]

POLICY = """# Sample store desk
- Confirm who the researcher is from their lab email before acting on any sample.
- Act only on samples the researcher owns.
- Ask the researcher to confirm before discarding a sample, and record their reason in their own words.
- Never discard a sample whose hazard class is above the owner's clearance; refer them to the safety officer.
- Do not move samples into a freezer that is not running.
- If the store's system fails, say so and do not claim a sample was discarded or moved.
"""

def world(path=None, **options):
    import tempfile
    from whilelab.worlds import FunctionWorld
    path = make_db(path or Path(tempfile.mkdtemp(prefix="labstore-")) / "labstore.db")
    return FunctionWorld(FUNCTIONS, str(path), name="labstore", **options)
