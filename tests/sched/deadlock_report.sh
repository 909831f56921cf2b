#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the deadlock_report program and checks its exit status (2) and the
# report: a headline counting 4 threads and one line per thread with its
# name, state and reason.
out=$("$1" 2>&1)
status=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$status" -eq 2 ] || fail "exit status $status, want 2"
echo "$out" | grep -q 'deadlock: all 4 threads are parked' || fail "no headline"
echo "$out" | grep -q '"main": parked, waiting on join' || fail "main not reported"
echo "$out" | grep -q '"alpha": parked, waiting on join' || fail "alpha not reported"
echo "$out" | grep -q '"beta": parked, waiting on join' || fail "beta not reported"
echo "$out" | grep -q '"gamma": parked, waiting on join' || fail "gamma not reported"
echo "deadlock report OK"
