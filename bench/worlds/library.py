"""A public library's lending desk, as an SQLite database: members, items, loans and holds.

`make_db(path)` writes the database file; `FUNCTIONS` are the desk's tools, each `f(db, ...)` over a
`sqlite3.Connection`; `POLICY` is the desk's own policy. Written for the own-worlds benchmark: no retail, no clinic.
"""
import datetime as _dt, sqlite3
from pathlib import Path
from typing import Annotated
from pydantic import Field

SCHEMA = """
CREATE TABLE members (card_number TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, phone TEXT,
                      standing TEXT NOT NULL, joined TEXT NOT NULL);
CREATE TABLE items   (barcode TEXT PRIMARY KEY, title TEXT NOT NULL, author TEXT, format TEXT NOT NULL,
                      shelf_status TEXT NOT NULL);
CREATE TABLE loans   (loan_id TEXT PRIMARY KEY, card_number TEXT NOT NULL REFERENCES members,
                      barcode TEXT NOT NULL REFERENCES items, checked_out TEXT NOT NULL, due TEXT NOT NULL,
                      renewals INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL);
CREATE TABLE holds   (hold_id TEXT PRIMARY KEY, card_number TEXT NOT NULL REFERENCES members,
                      barcode TEXT NOT NULL REFERENCES items, placed TEXT NOT NULL, state TEXT NOT NULL);
"""
MEMBERS = [("LC-1001", "Aino Virtanen", "aino.virtanen@mail.fi", "+358 40 111 2233", "in good standing", "2019-03-02"),
           ("LC-1002", "Tomás Ferreira", "tomas.f@correo.pt", "+351 912 000 441", "in good standing", "2021-11-15"),
           ("LC-1003", "Grace Okafor", "grace.okafor@post.ng", "+234 803 555 0101", "blocked: unpaid fines", "2018-06-30"),
           ("LC-1004", "Jonas Weber", "j.weber@mailbox.de", "+49 151 2345 678", "card expired", "2015-01-20"),
           ("LC-1005", "Priya Raman", "priya.raman@inbox.in", "+91 98450 12345", "in good standing", "2023-09-09")]
ITEMS = [("B-2001", "The Left Hand of Darkness", "Ursula K. Le Guin", "paperback", "on loan"),
         ("B-2002", "Middlemarch", "George Eliot", "hardback", "on loan"),
         ("B-2003", "A Pattern Language", "Christopher Alexander", "hardback", "reference only"),
         ("B-2004", "Piranesi", "Susanna Clarke", "audiobook", "on the shelf"),
         ("B-2005", "The Dispossessed", "Ursula K. Le Guin", "paperback", "on loan"),
         ("B-2006", "Things Fall Apart", "Chinua Achebe", "paperback", "on loan"),
         ("B-2007", "Moominvalley in November", "Tove Jansson", "paperback", "on the shelf"),
         ("B-2008", "Pedro Páramo", "Juan Rulfo", "paperback", "lost")]
LOANS = [("L-3001", "LC-1001", "B-2001", "2026-11-20", "2026-12-11", 0, "checked out"),
         ("L-3002", "LC-1001", "B-2002", "2026-10-01", "2026-11-12", 2, "checked out"),
         ("L-3003", "LC-1002", "B-2005", "2026-11-01", "2026-11-22", 0, "overdue"),
         ("L-3004", "LC-1003", "B-2006", "2026-11-25", "2026-12-16", 0, "checked out"),
         ("L-3005", "LC-1005", "B-2007", "2026-09-01", "2026-09-22", 1, "returned")]
HOLDS = [("H-4001", "LC-1002", "B-2001", "2026-11-28", "waiting"),
         ("H-4002", "LC-1005", "B-2002", "2026-11-02", "ready for pickup"),
         ("H-4003", "LC-1001", "B-2005", "2026-10-10", "withdrawn")]
RENEWAL_DAYS, MAX_RENEWALS = 21, 2

def make_db(path) -> Path:
    "Write the lending desk's database to `path` (replacing it) and return the path."
    path = Path(path); path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    with con:
        con.executescript(SCHEMA)
        con.executemany("INSERT INTO members VALUES (?,?,?,?,?,?)", MEMBERS)
        con.executemany("INSERT INTO items VALUES (?,?,?,?,?)", ITEMS)
        con.executemany("INSERT INTO loans VALUES (?,?,?,?,?,?,?)", LOANS)
        con.executemany("INSERT INTO holds VALUES (?,?,?,?,?)", HOLDS)
    con.close()
    return path

def _row(db, sql, *args) -> dict | None:
    cur = db.execute(sql, args)
    r = cur.fetchone()
    return None if r is None else dict(zip([d[0] for d in cur.description], r))

Email = Annotated[str, Field(description="the email address the member gives, such as 'aino.virtanen@mail.fi'")]
Card = Annotated[str, Field(description="the member's library card number, such as 'LC-1001'")]
LoanId = Annotated[str, Field(description="the loan's id, such as 'L-3001'")]
Barcode = Annotated[str, Field(description="the item's barcode, such as 'B-2004'")]
HoldId = Annotated[str, Field(description="the hold's id, such as 'H-4001'")]

def find_member_by_email(db, email: Email) -> dict:
    "Find a member's library card number by the email address they registered with."
    r = _row(db, "SELECT card_number FROM members WHERE lower(email) = ?", email.strip().lower())
    if r is None: raise LookupError(f"no member registered with {email}")
    return r

def get_member(db, card_number: Card) -> dict:
    "A member's name, contact details, standing, and their loans and holds."
    m = _row(db, "SELECT * FROM members WHERE card_number = ?", card_number)
    if m is None: raise LookupError(f"no member with card {card_number}")
    m["loans"] = [x for (x,) in db.execute("SELECT loan_id FROM loans WHERE card_number = ? ORDER BY loan_id", (card_number,))]
    m["holds"] = [x for (x,) in db.execute("SELECT hold_id FROM holds WHERE card_number = ? ORDER BY hold_id", (card_number,))]
    return m

def get_loan(db, loan_id: LoanId) -> dict:
    "One loan: the item, when it was checked out, when it is due, how often it was renewed, its state."
    r = _row(db, "SELECT l.*, i.title FROM loans l JOIN items i USING (barcode) WHERE loan_id = ?", loan_id)
    if r is None: raise LookupError(f"no loan {loan_id}")
    return r

def search_catalogue(db, query: Annotated[str, Field(description="words of a title or an author, such as 'Le Guin'")]) -> list:
    "Items whose title or author contains the words, with their barcode, format and shelf status."
    q = f"%{query.strip().lower()}%"
    cur = db.execute("SELECT barcode, title, author, format, shelf_status FROM items "
                     "WHERE lower(title) LIKE ? OR lower(author) LIKE ? ORDER BY barcode", (q, q))
    return [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]

def renew_loan(db, loan_id: LoanId) -> dict:
    "Renew a checked-out loan for another 21 days (at most twice; not when the member is blocked or the item is on hold)."
    loan = get_loan(db, loan_id)
    if loan["state"] not in ("checked out", "overdue"): raise ValueError(f"loan {loan_id} is {loan['state']}; only loans still out can be renewed")
    if loan["renewals"] >= MAX_RENEWALS: raise ValueError(f"loan {loan_id} was renewed {loan['renewals']} times already; the limit is {MAX_RENEWALS}")
    standing = _row(db, "SELECT standing FROM members WHERE card_number = ?", loan["card_number"])["standing"]
    if standing != "in good standing": raise PermissionError(f"the member's card is {standing}; renewals are not allowed")
    if _row(db, "SELECT hold_id FROM holds WHERE barcode = ? AND state = 'waiting'", loan["barcode"]):
        raise PermissionError(f"another member is waiting for {loan['title']}; it cannot be renewed")
    due = (_dt.date.fromisoformat(loan["due"]) + _dt.timedelta(days=RENEWAL_DAYS)).isoformat()
    db.execute("UPDATE loans SET due = ?, renewals = renewals + 1, state = 'checked out' WHERE loan_id = ?", (due, loan_id))
    db.commit()
    return get_loan(db, loan_id)

def place_hold(db, card_number: Card, barcode: Barcode) -> dict:
    "Place a hold for a member on an item that is out on loan; the member is told when it is ready for pickup."
    m = _row(db, "SELECT standing FROM members WHERE card_number = ?", card_number)
    if m is None: raise LookupError(f"no member with card {card_number}")
    if m["standing"] != "in good standing": raise PermissionError(f"the member's card is {m['standing']}; holds are not allowed")
    item = _row(db, "SELECT * FROM items WHERE barcode = ?", barcode)
    if item is None: raise LookupError(f"no item {barcode}")
    if item["shelf_status"] != "on loan": raise ValueError(f"{item['title']} is {item['shelf_status']}; only items on loan can be held")
    n = db.execute("SELECT count(*) FROM holds").fetchone()[0]
    hold_id = f"H-{4001 + n}"
    db.execute("INSERT INTO holds VALUES (?,?,?,?,?)", (hold_id, card_number, barcode, "2026-12-04", "waiting"))
    db.commit()
    return _row(db, "SELECT * FROM holds WHERE hold_id = ?", hold_id)

def withdraw_hold(db, hold_id: HoldId) -> dict:
    "Withdraw a hold that is waiting or ready for pickup."
    h = _row(db, "SELECT * FROM holds WHERE hold_id = ?", hold_id)
    if h is None: raise LookupError(f"no hold {hold_id}")
    if h["state"] not in ("waiting", "ready for pickup"): raise ValueError(f"hold {hold_id} is {h['state']}; it cannot be withdrawn")
    db.execute("UPDATE holds SET state = 'withdrawn' WHERE hold_id = ?", (hold_id,))
    db.commit()
    return _row(db, "SELECT * FROM holds WHERE hold_id = ?", hold_id)

FUNCTIONS = [find_member_by_email, get_member, get_loan, search_catalogue, renew_loan, place_hold, withdraw_hold]

POLICY = """# Lending desk
- Renewing a loan or placing a hold needs the member's library card number; ask for it first, or find it from the email address they registered with.
- Only act on loans and holds that belong to the member you are speaking to.
- Members whose card is blocked for unpaid fines or expired may not renew or place holds; send them to the front desk.
- A loan can be renewed at most twice, and never while another member is waiting for the item.
- Read the new due date back to the member after a renewal; never make up a due date.
- Ask the member to confirm before you withdraw a hold.
- If the system fails, say so plainly and do not claim the renewal or hold went through.
"""

def world(path=None, **options):
    "The lending desk as a world over a fresh database file (`whilelab run --world bench/worlds/library.py:world`)."
    import tempfile
    from whilelab.worlds import FunctionWorld
    path = make_db(path or Path(tempfile.mkdtemp(prefix="library-")) / "library.db")
    return FunctionWorld(FUNCTIONS, str(path), name="library", **options)
