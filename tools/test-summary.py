#!/usr/bin/env python3
"""Print the closing line of meson test runs: 'test: N passed, M failed, K skipped'.

Arguments: one or more testlog.json files (meson's, or fuzz/run.sh's); a missing one counts as
one failed test (its run did not get that far)."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        f = open(path)
    except OSError:
        print(f"test-summary: no {path}", file=sys.stderr)
        failed += 1
        continue
    with f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line).get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"test: {passed} passed, {failed} failed, {skipped} skipped")
