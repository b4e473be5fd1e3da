from .inventory import Inventory
