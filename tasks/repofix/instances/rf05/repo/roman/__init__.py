from .numerals import from_roman, to_roman
