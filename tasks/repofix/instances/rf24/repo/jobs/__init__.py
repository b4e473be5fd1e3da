from .queue_ import JobQueue
