"""The coffee's temperature over time: reads minutes t on standard input, prints degrees C for each."""
import sys


# EVOLVE-BLOCK-START
def temperature(t):
    """A straight line: hot at the start, a fixed loss per minute."""
    start = 85.0
    loss_per_minute = 2.0
    return start - loss_per_minute * t


# EVOLVE-BLOCK-END


if __name__ == "__main__":
    for word in sys.stdin.read().split():
        print(temperature(float(word)))
