from .basket import Basket
