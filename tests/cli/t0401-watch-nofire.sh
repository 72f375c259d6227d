#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# t0400-watch as on a machine whose hardware watchpoints are accepted but
# never fire (seen on some AMD EPYC hosts), run where they do fire, so that
# the path such machines take is tested on every host: the refusal, and
# the set-up, signal and clean-up tests without samples. Where they never
# fire, t0400 itself takes that path and this skips.
export KMT_TEST_WATCH_NOFIRE=1
exec bash "$(dirname "$0")/t0400-watch.sh" "$@"
