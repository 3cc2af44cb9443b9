"""The report's messages on stderr: a warning line, or one error line that stops plot.py."""

import sys


def warn(message):
    """Prints one warning line on stderr."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def fail(message):
    """Stops with one error line on stderr and exit status 1."""
    sys.exit(f"plot.py: error: {message}")
