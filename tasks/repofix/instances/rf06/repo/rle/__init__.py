from .codec import decode, encode
