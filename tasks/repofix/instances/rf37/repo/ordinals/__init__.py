from .words import ordinal
