#!/bin/sh
echo "bazel coverage needs @remote_coverage_tools, which is not downloaded" \
  "offline; run pytest with coverage instead" >&2
exit 1
