import unittest

from pricing import order_total


class OrderTotalTest(unittest.TestCase):
    def test_large_orders_get_fifteen_percent_off(self) -> None:
        self.assertEqual(order_total(200.0), 170.0)

    def test_small_orders_pay_full_price(self) -> None:
        self.assertEqual(order_total(50.0), 50.0)


if __name__ == "__main__":
    unittest.main()
