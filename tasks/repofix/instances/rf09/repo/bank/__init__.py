from .account import Account, InsufficientFunds
