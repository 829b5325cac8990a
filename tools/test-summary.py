#!/usr/bin/env python3
"""Print the closing line of a meson test run: 'test: N passed, M failed, K skipped'."""
import json
import sys

passed = failed = skipped = 0
with open(sys.argv[1]) as f:
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
