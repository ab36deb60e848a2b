"""A water utility's customer desk, as an SQLite database of five tables with references two hops deep.

Written for the corpus of unseen worlds (`bench/corpus.py`): a customer proves who they are with their phone number and
postcode; a meter reading belongs to a meter, which belongs to an account (reading -> meter -> account); readings are in
cubic metres; a payment plan spreads an unpaid bill over 2 to 12 instalments.
"""
import sqlite3
from pathlib import Path
from typing import Annotated
from pydantic import Field

SCHEMA = """
CREATE TABLE accounts (account_number TEXT PRIMARY KEY, name TEXT NOT NULL, phone TEXT NOT NULL, postcode TEXT NOT NULL,
                       standing TEXT NOT NULL);
CREATE TABLE meters (meter_id TEXT PRIMARY KEY, account_number TEXT NOT NULL REFERENCES accounts, address TEXT NOT NULL);
CREATE TABLE readings (reading_id TEXT PRIMARY KEY, meter_id TEXT NOT NULL REFERENCES meters, read_on TEXT NOT NULL,
                       cubic_metres REAL NOT NULL, status TEXT NOT NULL);
CREATE TABLE bills (bill_id TEXT PRIMARY KEY, account_number TEXT NOT NULL REFERENCES accounts, amount REAL NOT NULL,
                    status TEXT NOT NULL);
CREATE TABLE plans (plan_id TEXT PRIMARY KEY, bill_id TEXT NOT NULL REFERENCES bills, instalments INTEGER NOT NULL,
                    status TEXT NOT NULL);
"""
ACCOUNTS = [("WA-55001", "Siobhan Kelly", "+44 7700 900276", "BS1 4DJ", "active"),
            ("WA-55002", "Arjun Mehta", "+44 7700 900381", "BS3 1QP", "active"),
            ("WA-55003", "Ewa Nowak", "+44 7700 900412", "BS5 6XY", "closed"),
            ("WA-55004", "Tunde Bello", "+44 7700 900590", "BS7 8LT", "active")]
METERS = [("MTR-1", "WA-55001", "4 Quay St"), ("MTR-2", "WA-55002", "19 Hill Rd"), ("MTR-3", "WA-55003", "2 Mill Ln"),
          ("MTR-4", "WA-55004", "88 Park Ave"), ("MTR-5", "WA-55001", "4a Quay St")]
READINGS = [("RD-901", "MTR-1", "2026-10-01", 41.5, "billed"), ("RD-902", "MTR-1", "2026-11-01", 44.0, "estimated"),
            ("RD-903", "MTR-2", "2026-11-01", 18.2, "billed"), ("RD-904", "MTR-3", "2026-09-01", 7.9, "disputed"),
            ("RD-905", "MTR-4", "2026-11-01", 63.1, "estimated"), ("RD-906", "MTR-5", "2026-11-01", 3.4, "billed")]
BILLS = [("BL-7001", "WA-55001", 128.40, "unpaid"), ("BL-7002", "WA-55002", 56.10, "paid"),
         ("BL-7003", "WA-55003", 23.75, "written off"), ("BL-7004", "WA-55004", 201.00, "unpaid"),
         ("BL-7005", "WA-55001", 64.20, "on plan")]
PLANS = [("PP-301", "BL-7005", 6, "active"), ("PP-302", "BL-7002", 3, "completed")]

def make_db(path) -> Path:
    path = Path(path); path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    with con:
        con.executescript(SCHEMA)
        for table, rows in (("accounts", ACCOUNTS), ("meters", METERS), ("readings", READINGS), ("bills", BILLS),
                            ("plans", PLANS)):
            con.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)
    con.close()
    return path

def _one(db, sql, *args):
    cur = db.execute(sql, args); r = cur.fetchone()
    return None if r is None else dict(zip([d[0] for d in cur.description], r))

def _digits(s): return "".join(c for c in str(s) if c.isdigit())

def find_account(db, phone: Annotated[str, Field(description="the phone number on the account")],
                 postcode: Annotated[str, Field(description="the postcode of the supply address, such as 'BS1 4DJ'")]) -> dict:
    "Find a customer's account number from their phone number and postcode."
    for acc, ph, pc in db.execute("SELECT account_number, phone, postcode FROM accounts"):
        if _digits(ph)[-10:] == _digits(phone)[-10:] and pc.replace(" ", "").upper() == postcode.replace(" ", "").upper():
            return {"account_number": acc}
    raise LookupError("no account matches that phone number and postcode")

def get_account(db, account_number: Annotated[str, Field(description="the account number, such as 'WA-55001'")]) -> dict:
    "An account's holder, standing, meters and bills."
    a = _one(db, "SELECT * FROM accounts WHERE account_number = ?", account_number)
    if a is None: raise LookupError(f"account {account_number} not found")
    a["meters"] = [m for (m,) in db.execute("SELECT meter_id FROM meters WHERE account_number = ?", (account_number,))]
    a["bills"] = [b for (b,) in db.execute("SELECT bill_id FROM bills WHERE account_number = ?", (account_number,))]
    return a

def get_reading(db, reading_id: Annotated[str, Field(description="the meter reading's id, such as 'RD-901'")]) -> dict:
    "A meter reading: the meter, the date, the volume in cubic metres, and whether it was billed, estimated or disputed."
    r = _one(db, "SELECT * FROM readings WHERE reading_id = ?", reading_id)
    if r is None: raise LookupError(f"reading {reading_id} not found")
    return r

def dispute_reading(db, reading_id: Annotated[str, Field(description="the meter reading's id, such as 'RD-902'")],
                    cubic_metres: Annotated[float, Field(description="the customer's own reading of the meter, in cubic metres")]) -> dict:
    "Dispute an estimated reading with the customer's own reading of the meter."
    r = get_reading(db, reading_id)
    if r["status"] != "estimated": raise ValueError(f"only an estimated reading can be disputed; {reading_id} is {r['status']}")
    if not 0 <= cubic_metres < 10_000: raise ValueError("a meter reads between 0 and 10,000 cubic metres")
    db.execute("UPDATE readings SET status = 'disputed', cubic_metres = ? WHERE reading_id = ?", (cubic_metres, reading_id))
    db.commit()
    return get_reading(db, reading_id)

def set_up_payment_plan(db, bill_id: Annotated[str, Field(description="the bill's id, such as 'BL-7001'")],
                        instalments: Annotated[int, Field(description="how many monthly instalments, 2 to 12")]) -> dict:
    "Spread an unpaid bill over monthly instalments."
    b = _one(db, "SELECT * FROM bills WHERE bill_id = ?", bill_id)
    if b is None: raise LookupError(f"bill {bill_id} not found")
    if b["status"] != "unpaid": raise ValueError(f"bill {bill_id} is {b['status']}; only unpaid bills go on a plan")
    if not 2 <= instalments <= 12: raise ValueError("a plan has 2 to 12 instalments")
    standing = _one(db, "SELECT standing FROM accounts WHERE account_number = ?", b["account_number"])["standing"]
    if standing != "active": raise PermissionError(f"the account is {standing}")
    n = db.execute("SELECT count(*) FROM plans").fetchone()[0]
    pid = f"PP-{301 + n}"
    db.execute("INSERT INTO plans VALUES (?,?,?,?)", (pid, bill_id, instalments, "active"))
    db.execute("UPDATE bills SET status = 'on plan' WHERE bill_id = ?", (bill_id,)); db.commit()
    return _one(db, "SELECT * FROM plans WHERE plan_id = ?", pid)

def cancel_payment_plan(db, plan_id: Annotated[str, Field(description="the plan's id, such as 'PP-301'")]) -> dict:
    "Cancel an active payment plan; its bill is unpaid again."
    p = _one(db, "SELECT * FROM plans WHERE plan_id = ?", plan_id)
    if p is None: raise LookupError(f"plan {plan_id} not found")
    if p["status"] != "active": raise ValueError(f"plan {plan_id} is {p['status']}; only active plans can be cancelled")
    db.execute("UPDATE plans SET status = 'cancelled' WHERE plan_id = ?", (plan_id,))
    db.execute("UPDATE bills SET status = 'unpaid' WHERE bill_id = ?", (p["bill_id"],)); db.commit()
    return _one(db, "SELECT * FROM plans WHERE plan_id = ?", plan_id)

FUNCTIONS = [find_account, get_account, get_reading, dispute_reading, set_up_payment_plan, cancel_payment_plan]

POLICY = """# Water customer desk
- Identify the customer by the phone number and postcode on their account before discussing it.
- Discuss and change only the readings, bills and plans of the caller's own account.
- Only estimated readings can be disputed; ask the customer for their own meter reading in cubic metres.
- Payment plans are for unpaid bills, over 2 to 12 monthly instalments; confirm the number before setting one up.
- Ask the customer to confirm before cancelling a payment plan.
- If the system fails, say so plainly and never claim a change went through.
"""

def world(path=None, **options):
    import tempfile
    from whilelab.worlds import FunctionWorld
    path = make_db(path or Path(tempfile.mkdtemp(prefix="water-")) / "water.db")
    return FunctionWorld(FUNCTIONS, str(path), name="water", **options)
