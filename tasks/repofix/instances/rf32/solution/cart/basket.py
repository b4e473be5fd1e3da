class Basket:
    def __init__(self):
        self.lines = {}

    def add(self, name, price, qty=1):
        """Add qty (by default one) of an item at a unit price."""
        if price < 0 or qty < 0:
            raise ValueError("negative price or quantity")
        old_price, old_qty = self.lines.get(name, (price, 0))
        self.lines[name] = (price, old_qty + qty)

    def total(self, discount_percent=0):
        gross = sum(price * qty for price, qty in self.lines.values())
        return round(gross * (100 - discount_percent) / 100, 2)

    def count(self):
        return sum(qty for _, qty in self.lines.values())
