"""Command-line entry points, one thin file per t2t-* command: flags, then
one call. ``common.run`` checks the flags that name registrations (from
the registry's source, without importing TensorFlow: a typo is answered in
a fraction of a second), then imports TensorFlow through
``quiet_tensorflow``, before anything else does, so that its C++ start-up
lines stay hidden. (t2t-decoder imports it with its flags, which take
constants from the decoding package.)
"""
