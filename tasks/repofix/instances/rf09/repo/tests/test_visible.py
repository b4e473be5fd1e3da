import unittest

from bank import Account


class TestAccount(unittest.TestCase):
    def test_deposit_withdraw(self):
        a = Account("ann", 10)
        a.deposit(5)
        a.withdraw(3)
        self.assertEqual(a.balance, 12)

    def test_transfer(self):
        a, b = Account("a", 10), Account("b")
        a.transfer(b, 4)
        self.assertEqual((a.balance, b.balance), (6, 4))
