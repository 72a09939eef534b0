"""Progress lines for the t2t-* commands."""

import sys


def log_line(message):
  """Prints one progress line and flushes it at once, so that it shows up
  when output goes to a file or a pipe."""
  print(message, file=sys.stdout, flush=True)
