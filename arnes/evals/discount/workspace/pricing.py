"""Order pricing for the tiny shop."""

# Orders at or above the threshold get the order discount (10 %).
DISCOUNT_RATE = 0.10
DISCOUNT_THRESHOLD = 100.0


def order_total(subtotal: float) -> float:
    """The amount to pay for an order, after the order discount."""
    if subtotal >= DISCOUNT_THRESHOLD:
        return round(subtotal * (1 - DISCOUNT_RATE), 2)
    return subtotal
