from .fmt import format_duration
