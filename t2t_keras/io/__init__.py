"""Files: lines in and out (whatever the bytes), atomic outputs, JSON records,
checkpoints and their paths, the cache folder, console lines."""
