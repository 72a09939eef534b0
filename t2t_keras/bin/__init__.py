"""Command-line entry points, one thin file per t2t-* command."""
