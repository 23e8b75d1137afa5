import unittest

from fizzbuzz import fizzbuzz


class FizzBuzzTest(unittest.TestCase):
    def test_values(self) -> None:
        self.assertEqual([fizzbuzz(i) for i in (1, 3, 5, 15, 22)], ["1", "Fizz", "Buzz", "FizzBuzz", "22"])


if __name__ == "__main__":
    unittest.main()
