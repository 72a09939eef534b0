"""Command-line entry points, one thin file per t2t-* command: flags, then
one call. Each command that runs TensorFlow imports ``quiet_tensorflow``
before anything else, so that TensorFlow's C++ start-up lines stay hidden.
"""
