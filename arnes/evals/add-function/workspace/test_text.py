import unittest

from text import slugify, title_case


class TextTest(unittest.TestCase):
    def test_title_case(self) -> None:
        self.assertEqual(title_case("hello world"), "Hello World")

    def test_slugify(self) -> None:
        self.assertEqual(slugify("Hello, World! 2024"), "hello-world-2024")


if __name__ == "__main__":
    unittest.main()
