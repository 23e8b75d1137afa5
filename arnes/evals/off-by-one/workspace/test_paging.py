import unittest

from paging import page


class PageTest(unittest.TestCase):
    def test_pages(self) -> None:
        items = list(range(10))
        self.assertEqual(page(items, 1, 4), [0, 1, 2, 3])
        self.assertEqual(page(items, 3, 4), [8, 9])


if __name__ == "__main__":
    unittest.main()
