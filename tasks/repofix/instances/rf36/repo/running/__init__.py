from .accum import Accumulator
