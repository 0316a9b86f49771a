# shellcheck shell=bash
# Sourced by scripts/gpu_soak.sh and scripts/gpu_sanitize.sh: a job that outlasts one command
# on the device machine (which stops each command after 600 s) runs detached from it, in a
# folder under /tmp that the next command can read, and a later command collects it.
#
#   bg_start DIR COMMAND…   runs COMMAND in its own session (setsid, nohup) with its output
#                           in DIR/log; DIR/pid holds its process id, DIR/rc its exit status
#                           once it ends. Refuses when a job of DIR is still running.
#   bg_wait DIR SECONDS     waits until the job has ended or SECONDS have passed; returns
#                           0 when it has ended, 1 when it still runs, 2 when none was started.
#   bg_status DIR           one line: running for N s, ended with status S, or not started.

bg_start() {
    local dir=$1
    shift
    if [ -f "$dir/pid" ] && [ ! -f "$dir/rc" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
        echo "a job is still running in $dir (process $(cat "$dir/pid")): collect it first" >&2
        return 1
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    date +%s >"$dir/started"
    # The job's exit status goes to DIR/rc when it ends; setsid keeps it alive when the
    # command that started it is stopped.
    # shellcheck disable=SC2016 # expanded by the inner shell
    setsid nohup bash -c '"$@"; echo $? >"$0/rc"' "$dir" "$@" >"$dir/log" 2>&1 </dev/null &
    echo $! >"$dir/pid"
    echo "started in $dir (process $!)"
}

bg_wait() {
    local dir=$1 until=$((SECONDS + $2))
    [ -f "$dir/pid" ] || return 2
    while [ ! -f "$dir/rc" ]; do
        if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
            # Gone without a status: killed from outside.
            [ -f "$dir/rc" ] || echo 137 >"$dir/rc"
            break
        fi
        [ "$SECONDS" -lt "$until" ] || return 1
        sleep 5
    done
    return 0
}

bg_status() {
    local dir=$1
    if [ ! -f "$dir/pid" ]; then
        echo "not started (no $dir/pid)"
    elif [ -f "$dir/rc" ]; then
        echo "ended with status $(cat "$dir/rc") after $(($(stat -c %Y "$dir/rc") - $(cat "$dir/started"))) s"
    else
        echo "running for $(($(date +%s) - $(cat "$dir/started"))) s (process $(cat "$dir/pid"))"
    fi
}
