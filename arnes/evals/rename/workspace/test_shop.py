import unittest

from shop.cart import cart_total
from shop.totals import order_total


class ShopTest(unittest.TestCase):
    def test_totals(self) -> None:
        self.assertEqual(order_total([1.0, 2.5]), 3.5)
        self.assertEqual(cart_total({"a": 1.0, "b": 2.0}), 3.0)


if __name__ == "__main__":
    unittest.main()
