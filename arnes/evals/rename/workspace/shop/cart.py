from shop.totals import calc_total


def cart_total(items: dict[str, float]) -> float:
    return calc_total(list(items.values()))
