from .buffer import RingBuffer
