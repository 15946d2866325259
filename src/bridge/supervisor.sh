# Supervisor for a stdio MCP server in a pod: starts one copy of the server per bridge session.
# POSIX sh, run by the static busybox that the init container copied next to this file:
#
#   <dir>/busybox sh <dir>/supervisor.sh -- <command> [args...]
#
# It reads `start <id>` and `stop <id>` lines from the FIFO <dir>/control. `start` runs the
# command with stdin on the FIFO <dir>/<id>.in and stdout on <dir>/<id>.out; stderr stays the
# container's log. `stop` ends that child: SIGTERM, then SIGKILL after a grace period. The
# command and its arguments are only ever expanded as "$@", never re-parsed or interpolated.
# See docs/adr/0002-stdio-bridge-sidecar.md; names must match src/bridge/contract.ts.
#
# Environment:
#   MCP_SUPERVISOR_GRACE_SECONDS  seconds between SIGTERM and SIGKILL (default 5)
#   MCP_SUPERVISOR_FIFO_MODE      mode of the FIFOs (default 0660: the pod's fsGroup lets a
#                                 bridge running as another user open them)

set -u -f # -f: no pathname expansion anywhere, so splitting PATH below cannot glob

dir=${0%/*}
[ "$dir" = "$0" ] && dir=.
bb=$dir/busybox
grace=${MCP_SUPERVISOR_GRACE_SECONDS:-5}
mode=${MCP_SUPERVISOR_FIFO_MODE:-0660}
control=$dir/control

log() { printf 'supervisor: %s\n' "$*" >&2; }

[ "${1-}" = "--" ] && shift
if [ $# -eq 0 ]; then
  log "usage: busybox sh supervisor.sh -- <command> [args...]"
  exit 64
fi

# busybox prefers its own applets to PATH lookups, so a server command named like an applet
# (`sh`, `env`, `nc`, ...) would run busybox's version. Resolve a bare name through PATH here
# and exec the full path, which busybox never replaces.
resolve() {
  case $1 in */*) printf '%s' "$1"; return 0 ;; esac
  saved_ifs=$IFS
  IFS=:
  for d in ${PATH:-/usr/local/bin:/usr/bin:/bin}; do
    [ -n "$d" ] || d=.
    if [ -f "$d/$1" ] && [ -x "$d/$1" ]; then
      IFS=$saved_ifs
      printf '%s' "$d/$1"
      return 0
    fi
  done
  IFS=$saved_ifs
  return 1
}

if ! command_path=$(resolve "$1"); then
  log "command not found in PATH: $1"
  exit 127
fi
shift
set -- "$command_path" "$@"

# Keep an existing control FIFO: the bridge holds it open across a restart of this container.
if [ ! -p "$control" ]; then
  "$bb" rm -f "$control"
  "$bb" mkfifo -m "$mode" "$control" || exit 1
fi
# Read-write, so the FIFO never reports end-of-file when the bridge closes or restarts.
exec 3<>"$control"

# Runs in a subshell per child: starts the server on the FIFOs, waits for it, and cleans up.
# On SIGTERM from `stop` it forwards SIGTERM and arms a SIGKILL for after the grace period.
# Until it is reaped here, the server's pid cannot be reused, so the SIGKILL cannot hit a
# stranger.
supervise() {
  id=$1
  shift
  "$@" <"$dir/$id.in" >"$dir/$id.out" &
  pid=$!
  timer=
  trap 'kill -TERM "$pid" 2>/dev/null; "$bb" sleep "$grace" & timer=$!' TERM
  wait "$pid"
  status=$?
  while kill -0 "$pid" 2>/dev/null; do
    # Woken by the server or the timer ending: escalate once the grace is over. `wait -n` is not
    # POSIX, but busybox ash (the only shell that runs this file) has it.
    # shellcheck disable=SC3045
    wait -n
    if [ -n "$timer" ] && ! kill -0 "$timer" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null
    fi
  done
  [ -n "$timer" ] && kill "$timer" 2>/dev/null
  "$bb" rm -f "$dir/$id.in" "$dir/$id.out" "$dir/$id.pid"
  if [ -n "$timer" ]; then log "$id: stopped"; else log "$id: exited with status $status"; fi
}

valid_id() {
  case $1 in '' | *[!A-Za-z0-9_-]*) return 1 ;; esac
}

start() {
  if [ -e "$dir/$1.pid" ]; then
    log "$1: already running"
    return
  fi
  "$bb" rm -f "$dir/$1.in" "$dir/$1.out"
  if ! "$bb" mkfifo -m "$mode" "$dir/$1.in" "$dir/$1.out"; then
    log "$1: cannot create FIFOs"
    return
  fi
  (
    trap - TERM INT CHLD
    supervise "$@"
  ) &
  echo "$!" >"$dir/$1.pid"
}

stop() {
  [ -r "$dir/$1.pid" ] || return 0
  read -r monitor <"$dir/$1.pid" && kill -TERM "$monitor" 2>/dev/null
}

shutdown() {
  # No more traps: SIGCHLD would end the `wait` below at the first monitor to finish.
  trap '' TERM INT
  trap - CHLD
  for file in "$dir"/*.pid; do
    [ -r "$file" ] && read -r monitor <"$file" && kill -TERM "$monitor" 2>/dev/null
  done
  wait
  exit 0
}

# pathname expansion is off (set -f) except where shutdown() needs it
trap 'set +f; shutdown' TERM INT
# A trap on SIGCHLD makes the shell reap finished children (and, as PID 1, orphans) while it
# waits in `read`. The interrupted `read` fails with nothing consumed: the bridge writes each
# line at once (well under PIPE_BUF, so atomically), hence the loop below just reads again.
trap ':' CHLD

log "ready to start $1"
while :; do
  read -r verb id extra <&3 || continue
  if [ -n "$extra" ] || ! valid_id "$id"; then
    log "ignoring malformed control line"
    continue
  fi
  case $verb in
    start) start "$id" "$@" ;;
    stop) stop "$id" ;;
    *) log "ignoring unknown control verb" ;;
  esac
done
