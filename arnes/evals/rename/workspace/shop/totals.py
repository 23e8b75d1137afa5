def calc_total(prices: list[float]) -> float:
    return round(sum(prices), 2)
