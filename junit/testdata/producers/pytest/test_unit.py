import unittest


class AllocatorCase(unittest.TestCase):
    """A unittest class whose name does not start with Test: pytest collects it all the same."""

    def test_frees(self):
        self.assertEqual(2 + 2, 4)

    def test_charges(self):
        print("ledger: 3 pages charged")
        self.assertEqual(3, 4, "ledger is off by one")
