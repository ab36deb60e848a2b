"""A five-tool order desk nobody in the chapters uses: typed Python functions without bodies.

Identity only through `find_customer_by_email`; every other tool takes an id it returns. Used by
bench/search_speed.py as the second spec (beside the built-in example), so the search is timed on tools
its authors did not shape it around.
"""
from typing import Literal

def find_customer_by_email(email: str  # the customer's email address, exactly as on the account
                          ) -> dict:
    "Find a customer by email; returns their customer_id and name. The only way to learn who someone is."
    ...

def return_items(order_id: str,            # a delivered order's id
                 item_ids: list[str],      # the ids of the items to send back, as get_order lists them
                 payment_method_id: str    # where the refund goes: the order's own payment method id
                ) -> dict:
    "Return some items of a delivered order; the refund goes to the payment method given."
    ...

def get_order(order_id: str  # an order id list_orders returned
             ) -> dict:
    "An order's items, status, total and shipping address."
    ...

def cancel_order(order_id: str,  # an open order's id
        reason: Literal["no_longer_needed", "ordered_by_mistake", "found_cheaper"]  # why, as the customer said
                ) -> dict:
    "Cancel an open order and refund it to the original payment method."
    ...

def change_shipping_address(order_id: str,   # an open order's id
                            street: str,     # street and number
                            city: str,       # city
                            zip_code: str,   # postal code
                            country: Literal["US", "CA", "GB", "DE"]  # country code
                           ) -> dict:
    "Ship an open order to another address."
    ...

TOOLS = [find_customer_by_email, return_items, get_order, cancel_order, change_shipping_address]
POLICY = """You are the order desk of a small online shop.
- Find the customer with find_customer_by_email before anything else; never act on an order of someone you have """ \
"""not found.
- Only open orders can be cancelled or have their address changed; say so plainly for any other.
- Before cancelling an order or changing its address, state what you will do and get the customer's explicit yes.
- Never reveal another customer's orders or details."""
