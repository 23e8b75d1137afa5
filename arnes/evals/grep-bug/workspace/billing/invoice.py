from billing.rates import SHIPPING_FLAT, TAX_RATE


def invoice_total(net: float) -> float:
    return round(net * (1 + TAX_RATE) + SHIPPING_FLAT, 2)
