# Supervisor for a stdio MCP server in a pod: starts one copy of the server per bridge session.
# POSIX sh, run by the static busybox that the init container copied next to this file:
#
#   <dir>/busybox sh <dir>/supervisor.sh -- <command> [args...]
#
# It reads `start <id>`, `resolved <id>` and `stop <id>` lines from the FIFO <dir>/control.
# `start` runs the command in a process group of its own, with stdin on the FIFO <dir>/<id>.in
# and stdout on <dir>/<id>.out; stderr stays the container's log. `resolved` (the child has
# answered) writes <dir>/<id>.package: the package the child's launcher resolved and runs
# (see package_of_group). `stop` ends that whole group: SIGTERM, then SIGKILL after a grace
# period. When the command exits by itself, whatever it left running in its group is ended the
# same way. The command and its arguments are only ever expanded as "$@", never re-parsed or
# interpolated.
# See docs/adr/0002-stdio-bridge-sidecar.md; names must match src/bridge/pod-contract.ts.
#
# Environment:
#   MCP_SUPERVISOR_GRACE_SECONDS  whole seconds between SIGTERM and SIGKILL (default 5)
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

case $grace in
  '' | *[!0-9]*)
    log "MCP_SUPERVISOR_GRACE_SECONDS must be a whole number of seconds, not '$grace'"
    exit 64
    ;;
esac

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

# Runs in a subshell per child: starts the server, waits for it, ends what is left of its
# process group, and cleans up. The group matters because launchers such as `npx` run the real
# server as a grandchild (`npm exec` -> `sh -c` -> `node`): a signal to the direct child alone
# leaves it running, holding <id>.out open, so the bridge would never see the session end.
# busybox `setsid` makes the group; ash's `set -m` would need a terminal, which a pod lacks.
# setsid never has to fork here (this subshell's children are not group leaders without job
# control), so $! is the server itself, its process group id and its session id.
#
# Every wait is bounded once the session ends: SIGTERM to the group, SIGKILL when the grace
# period is over, then at most another grace period for the kernel to finish them.
#
# Pid reuse: the pid of a child (the server, the timer) cannot be reused until it is reaped
# here. The server's group id (the same number) cannot be reused while any process of the group
# is left, even after the server itself was reaped: Linux keeps a pid number allocated while a
# process still uses it as its process group id. Only once the group is empty could a signal to
# it reach a stranger, and only if the pid allocator had wrapped around pid_max in the meantime
# and the new owner of the number had made itself a group leader.
supervise() {
  id=$1
  shift
  pid=
  timer=
  stopping=
  # Set before the fork, so a `stop` that comes at once is not lost; the child gets default
  # signal handling back before it opens its FIFOs.
  trap 'stopping=1; [ -z "$pid" ] || terminate' TERM
  "$bb" setsid -- "$@" <"$dir/$id.in" >"$dir/$id.out" &
  pid=$!
  echo "$pid" >"$dir/$id.group"
  [ -z "$stopping" ] || terminate
  status=0
  # Woken by the server or the timer ending. `wait -n` is not POSIX, but busybox ash (the only
  # shell that runs this file) has it.
  while alive "$pid"; do
    # shellcheck disable=SC3045
    wait -n
    status=$?
    [ -z "$timer" ] || alive "$timer" || break
  done
  end_group
  "$bb" rm -f "$dir/$id.in" "$dir/$id.out" "$dir/$id.pid" "$dir/$id.group" "$dir/$id.package"
  if [ -n "$stopping" ]; then
    log "$id: stopped"
  else
    log "$id: exited with status $status$left"
  fi
}

alive() { kill -0 "$1" 2>/dev/null; }

# The server's group, or the server alone before it has called setsid (while it is still
# opening its FIFOs, it is in our group).
signal_group() { kill -s "$1" "-$pid" 2>/dev/null || kill -s "$1" "$pid" 2>/dev/null; }

group_left() { alive "-$pid" || alive "$pid"; }

# SIGTERM to the group, and a timer for the grace period before SIGKILL. Once only.
terminate() {
  [ -z "$timer" ] || return 0
  signal_group TERM
  "$bb" sleep "$grace" &
  timer=$!
}

# Processes the server left behind after it exited get SIGTERM and the grace period too. Polls:
# they are no children of ours, so `wait` cannot tell when they are gone. Each `sleep` also
# reaps the server and the timer when they end (ash waits for any child).
end_group() {
  left=
  if [ -z "$timer" ]; then
    group_left || return 0
    left='; ended the processes it left'
    terminate
  fi
  while group_left && alive "$timer"; do "$bb" sleep 0.1; done
  signal_group KILL
  kill "$timer" 2>/dev/null
  ticks=$((grace * 10))
  while group_left && [ "$ticks" -gt 0 ]; do
    "$bb" sleep 0.1
    ticks=$((ticks - 1))
  done
  group_left && log "$id: processes still left after SIGKILL"
  return 0
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

# In the background, so that the control FIFO is read on meanwhile. Written whole (a rename),
# so the bridge never reads half a line; empty when the child runs no package we know.
resolved() {
  { [ -r "$dir/$1.group" ] && read -r group <"$dir/$1.group"; } || return 0
  (
    trap - TERM INT CHLD
    line=$(package_of_group "$group")
    printf '%s\n' "$line" >"$dir/$1.package.tmp" &&
      "$bb" mv -f "$dir/$1.package.tmp" "$dir/$1.package"
  ) &
}

# `<launcher> <name> <version>` of the package a process of the group runs: from the npx
# cache (npx_package) or from an environment uv made (uvx_package). Only what the child's
# processes point at is read, never the command.
package_of_group() {
  for p in $(group_members "$1"); do
    found=$("$bb" tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | while IFS= read -r arg; do
      { npx_package "$arg" || uvx_package "$arg"; } && break
    done)
    if [ -n "$found" ]; then
      printf '%s' "$found"
      return 0
    fi
  done
}

# The pids of the processes in group $1, from the first line of every /proc/<pid>/stat: after
# the command name in parentheses come state, parent and process group (proc(5)). One `cat`
# and one awk for all of them: ash's `read` takes a byte per system call, and this runs once
# per session over every process of the container, so reading line by line made each start
# cost tens of thousands of calls. `cat` goes on past a process that ended since the glob was
# expanded; busybox awk would stop there.
group_members() {
  set +f
  # shellcheck disable=SC2016 # an awk program, not shell
  "$bb" cat /proc/[0-9]*/stat 2>/dev/null | "$bb" awk -v group="$1" '
    { pid = $1 }
    pid ~ /^[0-9]+$/ && sub(/.*\) /, "") && $3 == group { print pid }
  '
  set -f
}

# The package an argument under <cache>/_npx/<hash>/node_modules/ belongs to (npm starts a
# package's bin as <cache>/_npx/<hash>/node_modules/.bin/<bin>, a link into the package's
# directory, so that path is in the server process's arguments), with the version
# npm recorded in that install's hidden lockfile (node_modules/.package-lock.json, which npm
# writes as JSON.stringify does with an indent of 2: one key per line).
npx_package() {
  case $1 in /*/_npx/*/node_modules/?*) ;; *) return 1 ;; esac
  after=${1#*/_npx/}
  install=${1%%/_npx/*}/_npx/${after%%/*}
  rest=${1#"$install"/node_modules/}
  case $rest in
    .bin/*)
      target=$("$bb" readlink "$install/node_modules/$rest") || return 1
      case $target in
        /*) rest=${target#"$install"/node_modules/} ;;
        *) rest=${target#../} ;;
      esac
      ;;
  esac
  case $rest in
    @*/*) scope=${rest%%/*} && tail=${rest#*/} && name=$scope/${tail%%/*} ;;
    *) name=${rest%%/*} ;;
  esac
  case $name in '' | */ | *[!A-Za-z0-9@/._~-]*) return 1 ;; esac
  # shellcheck disable=SC2016 # an awk program, not shell
  version=$("$bb" awk -v key="    \"node_modules/$name\": {" '
    $0 == key { inside = 1; next }
    inside && /^      "version": "/ { v = $0; sub(/^ *"version": "/, "", v); sub(/",?$/, "", v); print v; exit }
    inside && /^    }/ { exit }
  ' "$install/node_modules/.package-lock.json" 2>/dev/null)
  case $version in '' | *[!0-9A-Za-z.+-]*) return 1 ;; esac
  printf 'npx %s %s' "$name" "$version"
}

# The package whose console script an argument <env>/bin/<script> is, when <env> is an
# environment uv made (its pyvenv.cfg names uv): uvx runs a tool as `<env>/bin/python
# <env>/bin/<script>`, an environment in its cache that a later resolution never rewrites (it
# makes another). The package is the one whose dist-info declares <script> under
# [console_scripts] in its entry_points.txt; its name (normalized as PEP 503 says, so that a
# respelling is no new package) and version come from that dist-info's METADATA headers
# (core metadata: `Name:` and `Version:` lines before the first empty line). Every read stops
# after a bounded number of lines and files.
uvx_package() {
  case $1 in /*/bin/?*) ;; *) return 1 ;; esac
  env=${1%/bin/*}
  script=${1##*/}
  [ "$env/bin/$script" = "$1" ] || return 1
  # shellcheck disable=SC2016 # an awk program, not shell
  "$bb" awk '/^uv = / { uv = 1; exit } NR >= 64 { exit } END { exit !uv }' \
    "$env/pyvenv.cfg" 2>/dev/null || return 1
  set +f
  set -- "$env"/lib/python*/site-packages/*.dist-info/entry_points.txt
  set -f
  # shellcheck disable=SC2016
  entry_points=$("$bb" awk -v script="$script" '
    FNR == 1 { section = ""; if (++files > 4096) exit }
    FNR > 1024 { nextfile }
    { sub(/\r$/, "") }
    /^\[/ { section = $0; next }
    section == "[console_scripts]" && index($0, "=") > 0 {
      declared = substr($0, 1, index($0, "=") - 1)
      gsub(/[ \t]/, "", declared)
      if (declared == script) { print FILENAME; exit }
    }
  ' "$@" 2>/dev/null)
  [ -n "$entry_points" ] || return 1
  # shellcheck disable=SC2016
  found=$("$bb" awk '
    { sub(/\r$/, "") }
    $0 == "" || NR > 1024 { exit }
    /^Name:/ && name == "" { name = tolower($0); sub(/^name:[ \t]*/, "", name); gsub(/[-_.]+/, "-", name) }
    /^Version:/ && version == "" { version = $0; sub(/^Version:[ \t]*/, "", version) }
    name != "" && version != "" { print name " " version; exit }
  ' "${entry_points%/entry_points.txt}/METADATA" 2>/dev/null)
  name=${found%% *}
  version=${found#* }
  case $name in '' | *[!a-z0-9-]*) return 1 ;; esac
  case $version in '' | *[!0-9A-Za-z.+!_-]*) return 1 ;; esac
  printf 'uvx %s %s' "$name" "$version"
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
    resolved) resolved "$id" ;;
    stop) stop "$id" ;;
    *) log "ignoring unknown control verb" ;;
  esac
done
