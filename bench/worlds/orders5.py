"""Five order tools written as typed Python functions without bodies: a spec, not a world (the sandbox answers them).

Written for the corpus of unseen worlds (`bench/corpus.py`): the only way to learn who a customer is, is to search by
their email; everything else takes an order's or a customer's reference.
"""
from typing import Annotated, Literal
from pydantic import Field

def find_customer_by_email(email: Annotated[str, Field(description="the customer's email address")]) -> dict:
    "Find a customer by email; returns their customer id."
    ...

def get_order(order_id: Annotated[str, Field(description="the order reference, e.g. 'ORD-48213'")]) -> dict:
    "An order's items, total, status and the customer it belongs to."
    ...

def list_customer_orders(customer_id: Annotated[str, Field(description="the customer reference from a search")]) -> list:
    "The orders a customer has placed, newest first."
    ...

def refund_order(order_id: Annotated[str, Field(description="the order reference")],
                 amount: Annotated[float, Field(description="the amount to refund, in euros")],
                 reason: Literal["damaged", "late", "wrong_item", "other"]) -> dict:
    "Refund part or all of a delivered order."
    ...

def cancel_order(order_id: Annotated[str, Field(description="the order reference")]) -> dict:
    "Cancel an order that has not shipped yet."
    ...

FUNCTIONS = [find_customer_by_email, get_order, list_customer_orders, refund_order, cancel_order]

POLICY = """# Order desk
- Find the customer by the email they give before looking at or changing any order.
- Only act on orders that belong to that customer.
- Refunds are for delivered orders and never more than the order's total; ask the customer to confirm the amount.
- Only orders that have not shipped can be cancelled; confirm with the customer first.
- If a tool fails, tell the customer and do not claim the refund or cancellation happened.
"""
