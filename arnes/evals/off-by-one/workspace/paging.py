def page(items: list[int], number: int, size: int) -> list[int]:
    """Page `number` (1-based) of `items`, `size` items a page."""
    start = (number - 1) * size + 1
    return items[start : start + size]
