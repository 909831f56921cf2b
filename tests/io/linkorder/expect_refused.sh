#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a program whose libcapriccio comes after libc in the symbol search
# order, with its arguments; passes if the runtime refused to start it:
# exit status 2 and a message naming the cause and the preload way out.
out=$("$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 2 ] || { echo "exit status $rc, not 2"; exit 1; }
case $out in
*'comes after libc'*'LD_PRELOAD='*) exit 0 ;;
esac
echo "no refusal message"
exit 1
