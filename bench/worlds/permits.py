"""A municipal building-permits office, as a dict of tables (records by id): applicants, permits, inspections.

`state()` is a fresh copy of the office's data; `FUNCTIONS` are its tools, each `f(db, ...)` over that dict;
`POLICY` is the counter's policy. Written for the own-worlds benchmark: no retail, no clinic.
"""
import copy
from typing import Annotated
from pydantic import Field

DATA = {
    "applicants": {
        "APL-301": {"applicant_id": "APL-301", "name": "Halima Yusuf", "email": "halima.yusuf@townmail.org",
                    "phone": "555-0143", "address": "12 Orchard Lane"},
        "APL-302": {"applicant_id": "APL-302", "name": "Bram de Vries", "email": "bram@devries.nl",
                    "phone": "555-0178", "address": "4 Canal Street"},
        "APL-303": {"applicant_id": "APL-303", "name": "Keiko Sato", "email": "k.sato@example.jp",
                    "phone": "555-0190", "address": "88 Hillcrest Road"},
        "APL-304": {"applicant_id": "APL-304", "name": "Luis Ortega", "email": "luis.ortega@correo.mx",
                    "phone": "555-0122", "address": "3 Mill Court"},
    },
    "permits": {
        "BP-2026-014": {"permit_id": "BP-2026-014", "applicant_id": "APL-301", "work": "garden fence over 1.8 m",
                        "status": "under plan review", "fee_due": 85.0, "submitted": "2026-10-03"},
        "BP-2026-022": {"permit_id": "BP-2026-022", "applicant_id": "APL-301", "work": "rear deck",
                        "status": "approved, fee unpaid", "fee_due": 240.0, "submitted": "2026-09-14"},
        "BP-2026-031": {"permit_id": "BP-2026-031", "applicant_id": "APL-302", "work": "garden shed",
                        "status": "issued", "fee_due": 0.0, "submitted": "2026-08-30"},
        "BP-2026-040": {"permit_id": "BP-2026-040", "applicant_id": "APL-303", "work": "loft conversion",
                        "status": "refused", "fee_due": 0.0, "submitted": "2026-07-21"},
        "BP-2026-047": {"permit_id": "BP-2026-047", "applicant_id": "APL-304", "work": "solar panels on roof",
                        "status": "under plan review", "fee_due": 60.0, "submitted": "2026-11-18"},
        "BP-2026-052": {"permit_id": "BP-2026-052", "applicant_id": "APL-302", "work": "driveway widening",
                        "status": "withdrawn by applicant", "fee_due": 0.0, "submitted": "2026-11-01"},
    },
    "inspections": {
        "INSP-9001": {"inspection_id": "INSP-9001", "permit_id": "BP-2026-031", "date": "2026-12-10",
                      "stage": "foundations", "status": "booked"},
        "INSP-9002": {"inspection_id": "INSP-9002", "permit_id": "BP-2026-031", "date": "2026-11-20",
                      "stage": "site visit", "status": "passed"},
    },
}
INSPECTION_DAYS = ("Monday", "Wednesday", "Friday")

def state() -> dict:
    "A fresh copy of the permits office's data."
    return copy.deepcopy(DATA)

Phone = Annotated[str, Field(description="the phone number the applicant gives, such as '555-0143'")]
ApplicantId = Annotated[str, Field(description="the applicant's reference, such as 'APL-301'")]
PermitId = Annotated[str, Field(description="the permit application number, such as 'BP-2026-014'")]
InspectionId = Annotated[str, Field(description="the inspection booking, such as 'INSP-9001'")]

def lookup_applicant(db, phone: Phone) -> dict:
    "Find an applicant's reference by the phone number on their application."
    digits = "".join(c for c in phone if c.isdigit())
    for a in db["applicants"].values():
        if "".join(c for c in a["phone"] if c.isdigit()) == digits: return {"applicant_id": a["applicant_id"]}
    raise KeyError(f"no applicant with phone {phone}")

def get_applicant(db, applicant_id: ApplicantId) -> dict:
    "An applicant's contact details and their permit applications."
    a = db["applicants"].get(applicant_id)
    if a is None: raise KeyError(f"no applicant {applicant_id}")
    return {**a, "permits": sorted(p for p, r in db["permits"].items() if r["applicant_id"] == applicant_id)}

def get_permit(db, permit_id: PermitId) -> dict:
    "A permit application: the work, its status, the fee due, and its inspections."
    p = db["permits"].get(permit_id)
    if p is None: raise KeyError(f"no permit application {permit_id}")
    return {**p, "inspections": sorted(i for i, r in db["inspections"].items() if r["permit_id"] == permit_id)}

def pay_permit_fee(db, permit_id: PermitId,
                   amount: Annotated[float, Field(description="the amount paid, in dollars, such as 240.0")]) -> dict:
    "Record payment of an approved permit's fee in full; the permit is then issued."
    p = db["permits"].get(permit_id)
    if p is None: raise KeyError(f"no permit application {permit_id}")
    if p["status"] != "approved, fee unpaid": raise ValueError(f"permit {permit_id} is {p['status']}; only approved permits take a fee")
    if abs(amount - p["fee_due"]) > 0.005: raise ValueError(f"the fee due is {p['fee_due']:.2f}, not {amount:.2f}")
    p["status"], p["fee_due"] = "issued", 0.0
    return p

def book_inspection(db, permit_id: PermitId,
                    day: Annotated[str, Field(description="the weekday for the inspection, such as 'Wednesday'")],
                    stage: Annotated[str, Field(description="the stage to inspect, such as 'foundations'")]) -> dict:
    "Book an inspection of an issued permit's work on an inspection day (Monday, Wednesday or Friday)."
    p = db["permits"].get(permit_id)
    if p is None: raise KeyError(f"no permit application {permit_id}")
    if p["status"] != "issued": raise PermissionError(f"permit {permit_id} is {p['status']}; only issued permits can be inspected")
    if day.strip().capitalize() not in INSPECTION_DAYS: raise ValueError(f"inspectors visit on {', '.join(INSPECTION_DAYS)}, not {day}")
    iid = f"INSP-{9001 + len(db['inspections'])}"
    db["inspections"][iid] = {"inspection_id": iid, "permit_id": permit_id, "date": f"next {day.strip().capitalize()}",
                              "stage": stage, "status": "booked"}
    return db["inspections"][iid]

def cancel_inspection(db, inspection_id: InspectionId) -> dict:
    "Cancel a booked inspection."
    i = db["inspections"].get(inspection_id)
    if i is None: raise KeyError(f"no inspection {inspection_id}")
    if i["status"] != "booked": raise ValueError(f"inspection {inspection_id} is {i['status']}; only booked ones can be cancelled")
    i["status"] = "cancelled"
    return i

def withdraw_application(db, permit_id: PermitId) -> dict:
    "Withdraw a permit application that is still under plan review."
    p = db["permits"].get(permit_id)
    if p is None: raise KeyError(f"no permit application {permit_id}")
    if p["status"] != "under plan review": raise ValueError(f"permit {permit_id} is {p['status']}; only applications under review can be withdrawn")
    p["status"] = "withdrawn by applicant"
    return p

FUNCTIONS = [lookup_applicant, get_applicant, get_permit, pay_permit_fee, book_inspection, cancel_inspection,
             withdraw_application]

POLICY = """# Permits counter
- Confirm who you are speaking to: look the applicant up by the phone number on their application before discussing any permit.
- Only discuss or change permits that belong to that applicant.
- A fee can be taken only for an approved permit, and only the exact amount due; read the amount back and get a yes before recording payment.
- Inspections are booked only for issued permits, on Monday, Wednesday or Friday.
- Withdrawing an application cannot be undone: explain this and get the applicant's explicit confirmation first.
- Never promise that a permit will be approved, and never give a decision date.
- If the system fails, tell the applicant and do not say the change was made.
"""

def world(**options):
    "The permits office as a world (`whilelab run --world bench/worlds/permits.py:world`)."
    from whilelab.worlds import FunctionWorld
    return FunctionWorld(FUNCTIONS, state(), name="permits", **options)
