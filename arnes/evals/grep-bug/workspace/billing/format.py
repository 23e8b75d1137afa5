def money(value: float) -> str:
    return f"{value:.2f} EUR"
