#!/bin/bash
# Paths the sandbox writes into PostgreSQL's configuration and into the
# conninfo it prints are quoted: a --dir with a single quote and spaces (and
# one with ", \, $ and `, and one with a comma, which moves the socket out)
# works end to end: start, status, a query through the printed conninfo,
# stop, start again. Bad directories are
# refused before anything is made, and an over-long --dir reports its real
# byte length (it used to report 2047 for anything past 2 kB).
. "$(dirname "$0")/lib_foundation.sh"
B=$CLEANUPCTL
sandbox_root sbquote

# end_to_end DIR: start, query, status, stop, start again, stop.
end_to_end() {
	local d=$1 ci
	SANDBOXES+=("$d")
	sb start --dir "$d"
	expect 0
	ci=$OUT
	same "$(wc -l <<<"$ci")" "1" "start prints one conninfo line"
	same "$(psql -X -t -A "$ci" -c 'SELECT current_database()')" "cleanup_lab" "psql with the printed conninfo"
	# The setting is a list whose element is double-quoted, " doubled.
	sock=$("$B" --json sandbox status --dir "$d" | jq -r .socket_dir)
	same "$(psql -X -t -A "$ci" -c 'SHOW unix_socket_directories')" "\"${sock//\"/\"\"}\"" \
		"the server's socket directory"
	same "$(psql -X -t -A "$ci dbname=postgres" -c "SELECT count(*) FROM pg_database WHERE datname = 'cleanup_lab'")" \
		"1" "the sandbox database exists"
	sb status --dir "$d"
	expect 0 "sandbox running" "conninfo: $ci"
	same "$("$B" --json sandbox status --dir "$d" | jq -r .dir)" "$d" "status --json names the directory"
	same "$("$B" --json sandbox status --dir "$d" | jq -r .conninfo)" "$ci" "status --json has the same conninfo"
	sb stop --dir "$d"
	expect 0 "sandbox stopped (data kept in $d/data)"
	sb status --dir "$d"
	expect 1 "sandbox stopped"
	sb start --dir "$d"
	expect 0
	same "$OUT" "$ci" "a restart prints the same conninfo"
	same "$(psql -X -t -A "$ci" -c 'SELECT 1')" "1" "psql after the restart"
	sb stop --dir "$d"
	expect 0 "sandbox stopped"
}

CURRENT="--dir with a single quote and spaces"
end_to_end "$root/it's a sandbox"

CURRENT="--dir with a double quote, a backslash, \$ and a backquote"
end_to_end "$root/q\"b\\s \$HOME \`id\`"
same "$sock" "$root/q\"b\\s \$HOME \`id\`/sock" "the socket stays in such a --dir"

CURRENT="--dir with a comma: libpq's host cannot hold one, the socket moves to a private directory"
end_to_end "$root/a,b"
[[ "$sock" =~ ^/tmp/cleanupctl-sock-[A-Za-z0-9]{6}$ ]] || fail "socket directory of a --dir with a comma: $sock"
rm -rf "$sock"

CURRENT="--dir too long: its real length"
long="/$(printf 'x%.0s' $(seq 1 3000))"
sb status --dir "$long"
expect 2 "sandbox directory is 3001 bytes long; the limit is 900 bytes"
sb start --dir "$long"
expect 2 "sandbox directory is 3001 bytes long; the limit is 900 bytes"
rel="$(printf 'y%.0s' $(seq 1 950))"
RC=0
OUT=$(cd "$root" && "$B" sandbox start --dir "$rel" 2>&1)
RC=$?
ERR=""
expect 2 "sandbox directory is $((${#root} + 1 + 950)) bytes long once made absolute; the limit is 900 bytes"
[ ! -e "$root/$rel" ] || fail "a refused start created the directory"

CURRENT="--dir with a control character"
sb start --dir "$root/new"$'\n'"line"
expect 2 "control character (byte 0x0a"
[ ! -e "$root/new"$'\n'"line" ] || fail "a refused start created the directory"

finish
