#!/usr/bin/env python3
"""Counts test cases from Bazel's test.xml files and prints `N passed, N failed`.

Usage: count_test_results.py TESTLOGS_DIR TARGET...
A target without a test.xml (it did not build, or crashed before writing one)
counts as one failed test. Set SLUICE_RESULTS_DETAIL=1 to list failures.
"""
import os
import sys
import xml.etree.ElementTree as ET


def count(testlogs, targets):
    passed = failed = 0
    failures = []
    for target in targets:
        rel = target.lstrip("/").replace(":", "/")
        xml_path = os.path.join(testlogs, rel, "test.xml")
        if not os.path.exists(xml_path):
            failed += 1
            failures.append(f"{target} (no test.xml: build failure or crash)")
            continue
        try:
            root = ET.parse(xml_path).getroot()
        except ET.ParseError as e:
            failed += 1
            failures.append(f"{target} (unreadable test.xml: {e})")
            continue
        cases = list(root.iter("testcase"))
        if not cases:
            # A test runner that wrote no cases: judge by the suite counters.
            bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0))
                      for s in root.iter("testsuite"))
            if bad:
                failed += 1
                failures.append(target)
            else:
                passed += 1
            continue
        for case in cases:
            if case.get("status") == "notrun" or case.find("skipped") is not None:
                continue
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
                failures.append(f"{target}: {case.get('classname', '')}.{case.get('name', '')}")
            else:
                passed += 1
    return passed, failed, failures


def main():
    testlogs, targets = sys.argv[1], sys.argv[2:]
    passed, failed, failures = count(testlogs, targets)
    if failures:
        print("failed:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
