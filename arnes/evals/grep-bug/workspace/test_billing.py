import unittest

from billing.invoice import invoice_total


class InvoiceTest(unittest.TestCase):
    def test_tax(self) -> None:
        self.assertEqual(invoice_total(100.0), 125.95)


if __name__ == "__main__":
    unittest.main()
