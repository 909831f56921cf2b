#!/bin/bash
# SPDX-License-Identifier: MIT
#
# hang_dump.sh SECONDS PROGRAM [ARGS...]
# Runs PROGRAM (a test) and passes on its exit status. If it is still
# running after SECONDS, prints what it is doing to stderr and kills it
# (status 124): each kernel thread's system call and kernel stack
# (/proc), and, where gdb is installed, every kernel thread's backtrace
# and the runtime's user threads (tools/gdb/capriccio.py, `cap threads`),
# its workers twice, and the same for its first three child processes
# (theirs shorter). A program that a tracer of its own holds (gdb cannot
# attach) is read from a core written through /proc/PID/mem instead
# (tools/proc_core.py): the same lists, partial backtraces.
# ctest registers tests through it with SECONDS a little below the test's
# TIMEOUT, so a hang in CI leaves a trace in the log instead of only
# "Timeout" (tests/CMakeLists.txt).
limit=$1
shift
if [ "${BASH_VERSINFO[0]}" -lt 5 ] || { [ "${BASH_VERSINFO[0]}" -eq 5 ] && [ "${BASH_VERSINFO[1]}" -lt 1 ]; }; then
    exec "$@" # no `wait -n -p` before bash 5.1: run it plainly
fi
here=$(cd "$(dirname "$0")" && pwd)

# A background command of a script starts with SIGINT and SIGQUIT ignored
# and stdin /dev/null: env gives the signals their default back, and the
# program gets our stdin. (No job control: the program stays in our
# process group, as a test run directly would be.)
env --default-signal=INT,QUIT "$@" <&0 &
pid=$!
sleep "$limit" </dev/null >/dev/null 2>&1 &
sleeper=$!
wait -n -p ended "$pid" "$sleeper"
rc=$?
if [ "$ended" = "$pid" ]; then
    kill "$sleeper" 2>/dev/null
    wait "$sleeper" 2>/dev/null
    exit "$rc"
fi

{
    echo "hang_dump: '$*' still running after ${limit} s (pid $pid)"
    for task in /proc/"$pid"/task/*; do
        echo "--- kernel thread ${task##*/} ($(cat "$task"/comm 2>/dev/null)):" \
             "syscall $(cut -d' ' -f1 "$task"/syscall 2>/dev/null)," \
             "wchan $(cat "$task"/wchan 2>/dev/null)"
        cat "$task"/stack 2>/dev/null
    done
    # The counters of its eventfds (the backends' kick descriptors, the
    # signal dispatch's, the disk rings'): a kick written and never
    # drained, or a kick flag set with its counter at 0 (`cap workers`).
    for fd in /proc/"$pid"/fd/*; do
        if [ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[eventfd]" ]; then
            echo "--- eventfd ${fd##*/}: $(grep eventfd-count /proc/"$pid"/fdinfo/"${fd##*/}" 2>/dev/null)"
        fi
    done
    tracer=$(awk '/^TracerPid:/ { print $2 }' /proc/"$pid"/status 2>/dev/null)
    if command -v gdb >/dev/null 2>&1 && [ "${tracer:-0}" != 0 ] && command -v python3 >/dev/null 2>&1; then
        # Held by a tracer of its own (a test's ptrace child): gdb cannot
        # attach, so it reads a core written through /proc/PID/mem, twice
        # a second apart. Registers only of threads in a system call.
        echo "--- traced by $tracer: the runtime's state from tools/proc_core.py's core"
        core=$(mktemp)
        for look in 1 2; do
            cmds=(-ex "cap threads" -ex "cap workers" -ex "thread apply all bt 12")
            if [ "$look" = 2 ]; then
                sleep 1
                echo "--- cap workers, 1 s later:"
                cmds=(-ex "cap workers")
            fi
            python3 "$here/../tools/proc_core.py" "$pid" "$core" &&
                gdb -batch -nx -iex "set auto-load python-scripts off" /proc/"$pid"/exe "$core" \
                    -ex "source $here/../tools/gdb/capriccio.py" "${cmds[@]}" 2>&1 |
                grep -v "^\[New LWP\|^\[Thread debugging\|^Using host libthread_db"
        done
        rm -f "$core"
    elif command -v gdb >/dev/null 2>&1; then
        gdb -p "$pid" -batch -nx -iex "set auto-load python-scripts off" -ex "source $here/../tools/gdb/capriccio.py" \
            -ex "cap threads" -ex "cap workers" -ex "thread apply all bt 40" 2>&1
        # A second look: a program that is only slow under load has moved
        # on (TICKS grew, the locks changed hands); a stuck one has not.
        sleep 1
        echo "--- cap workers, 1 s later:"
        gdb -p "$pid" -batch -nx -iex "set auto-load python-scripts off" -ex "source $here/../tools/gdb/capriccio.py" \
            -ex "cap workers" 2>&1 | grep -v "^\[New LWP\|^\[Thread debugging\|^Using host libthread_db\|^\[Inferior"
    fi
    # The program's own child processes (a test's clients may run in one):
    # the first few, their kernel threads and, with gdb, their user threads.
    for child in $(pgrep -P "$pid" | head -n 3); do
        echo "--- child process $child ($(cat /proc/"$child"/comm 2>/dev/null)):"
        for task in /proc/"$child"/task/*; do
            echo "    kernel thread ${task##*/}: syscall $(cut -d' ' -f1 "$task"/syscall 2>/dev/null)," \
                 "wchan $(cat "$task"/wchan 2>/dev/null)"
        done
        if command -v gdb >/dev/null 2>&1; then
            # Its kernel threads' backtraces too, shorter: a child stuck
            # in a lock it inherited held (a sanitizer's allocator) shows
            # only there.
            gdb -p "$child" -batch -nx -iex "set auto-load python-scripts off" \
                -ex "source $here/../tools/gdb/capriccio.py" -ex "cap threads" -ex "cap workers" \
                -ex "thread apply all bt 16" 2>&1 |
                grep -v "^\[New LWP\|^\[Thread debugging\|^Using host libthread_db\|^\[Inferior" | head -n 140
        fi
    done
} >&2
pkill -9 -P "$pid" 2>/dev/null # its children too: one left running would hold the log's pipe
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
exit 124
