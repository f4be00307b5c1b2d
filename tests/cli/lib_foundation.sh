# Helpers for the foundation's shell tests (sourced, not run): a fresh
# database in the test sandbox, running the real binary with its output
# captured, assertions that print what went wrong, and a fingerprint of the
# data a refused command must not change.
: "${CLEANUPCTL:?run through ctest}" "${CLEANUP_TEST_SANDBOX:?run through ctest}"
set -uo pipefail

info=$("$CLEANUPCTL" --json sandbox status --dir "$CLEANUP_TEST_SANDBOX")
SOCK=$(jq -r .socket_dir <<<"$info")
PORT=$(jq -r .port <<<"$info")
ADMIN="host=$SOCK port=$PORT dbname=postgres user=postgres"
FAILS=0
TMPD=$(mktemp -d /tmp/cleanupctl-test.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT

# db_fresh NAME: drops and creates database NAME, installs the schema with
# the binary, then the lab (lab_install), and sets $DB to its conninfo.
db_fresh() {
	psql -X -q "$ADMIN" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" 2>/dev/null
	DB="host=$SOCK port=$PORT dbname=$1 user=postgres"
	"$CLEANUPCTL" --quiet --db "$DB" install >/dev/null || { echo "install into $1 failed"; exit 1; }
	lab_install
}

# lab_install: the lab's own step in $DB (install never takes it): schema
# cleanup_lab with cleanup_lab.seed_demo, which the tests call directly.
# `cleanupctl seed` installs the lab before it seeds; here it seeds nothing.
lab_install() {
	"$CLEANUPCTL" --quiet --db "$DB" seed --servers 0 --libraries 0 --items 0 >/dev/null ||
		{ echo "lab install into $DB failed"; exit 1; }
}

# sql QUERY: one value from $DB.
sql() { psql -X -q -t -A "$DB" -c "$1"; }

# login_role ROLE GROUP: a login role ROLE, member of GROUP (cleanup_runner,
# cleanup_writer, cleanup_console). Roles are cluster-wide and tests run at
# the same time: creating one another test just created is not an error.
login_role() {
	psql -X -q "$ADMIN" -v ON_ERROR_STOP=1 -c "DO \$\$ BEGIN
	  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$1') THEN
	    BEGIN CREATE ROLE $1 LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
	  END IF; END \$\$" -c "GRANT $2 TO $1" 2>/dev/null || { echo "cannot create role $1"; exit 1; }
}

# fingerprint: md5 of jobs, manifest, admission, stats, events, inventory.
fingerprint() {
	sql "SELECT md5(concat_ws('|',
	  (SELECT string_agg(format('%s', j.*), ',' ORDER BY j.id) FROM cleanup.jobs j),
	  (SELECT string_agg(m.job_id || ':' || m.external_id, ',' ORDER BY m.job_id, m.external_id) FROM cleanup.manifest m),
	  (SELECT string_agg(format('%s', a.*), ',' ORDER BY a.library_id) FROM cleanup.library_admission a),
	  (SELECT string_agg(format('%s', a.*), ',' ORDER BY a.server_id) FROM cleanup.server_admission a),
	  (SELECT string_agg(format('%s', s.*), ',' ORDER BY s.library_id, s.stripe) FROM cleanup.library_stats s),
	  (SELECT count(*) FROM cleanup.events),
	  (SELECT string_agg(format('%s', i.*), ',' ORDER BY i.id) FROM inventory.items i),
	  (SELECT string_agg(format('%s', l.*), ',' ORDER BY l.id) FROM inventory.libraries l)))"
}

# raw_controls FILE: how many bytes of FILE a terminal would act on: C0
# except LF, DEL, C1 (U+0080-U+009F as UTF-8), bidi controls, invalid UTF-8
# (counted as 1000).
raw_controls() {
	python3 - "$1" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
n = sum(1 for c in b if (c < 0x20 and c != 0x0a) or c == 0x7f)
try:
    t = b.decode('utf-8')
except UnicodeDecodeError:
    print(n + 1000); sys.exit()
n += sum(1 for ch in t if 0x80 <= ord(ch) <= 0x9f or 0x202a <= ord(ch) <= 0x202e or 0x2066 <= ord(ch) <= 0x2069)
print(n)
PY
}

# sb ARGS...: runs `cleanupctl sandbox ARGS` (no --db); sets RC, OUT, ERR.
sb() {
	"$CLEANUPCTL" sandbox "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
}

# session_start CONNINFO SQL: a psql session of its own on CONNINFO (its
# pid in HOLDER) runs SQL and stays open, fed through a fifo on fd 7, until
# that fd is closed (`exec 7>&-`, then wait for HOLDER); commands started
# meanwhile should be given 7>&-, or the session waits for them too.
session_start() {
	rm -f "$TMPD/session"
	mkfifo "$TMPD/session"
	psql -X -q "$1" <"$TMPD/session" >/dev/null 2>&1 &
	HOLDER=$!
	exec 7>"$TMPD/session"
	echo "$2" >&7
}

# sandbox_root NAME: makes $root, /tmp/cleanupctl-NAME.XXXXXX (mode 755:
# the server's user enters it), for the private sandboxes a test starts.
# The test lists their directories in SANDBOXES and anything else to remove
# in PLANTED; on exit each sandbox is stopped and the private base and
# socket directories cleanupctl made for it under /tmp are removed (refused
# starts leave nothing to stop), then PLANTED, $root and $TMPD.
sandbox_root() {
	root=$(mktemp -d "/tmp/cleanupctl-$1.XXXXXX")
	chmod 755 "$root"
	SANDBOXES=()
	PLANTED=()
	trap sandbox_cleanup EXIT
}
sandbox_cleanup() {
	local d info p
	for d in "${SANDBOXES[@]}"; do
		info=$("$CLEANUPCTL" --json sandbox status --dir "$d" 2>/dev/null)
		"$CLEANUPCTL" sandbox stop --dir "$d" >/dev/null 2>&1
		for p in "$(jq -r .base <<<"$info" 2>/dev/null)" "$(jq -r .socket_dir <<<"$info" 2>/dev/null)"; do
			case "$p" in
			/tmp/cleanupctl-??????) rm -rf "$p" ;;
			/tmp/cleanupctl-sock-??????) rm -rf "$p" ;;
			esac
		done
	done
	for p in "${PLANTED[@]}"; do
		rm -rf "$p"
	done
	rm -rf "$root" "$TMPD"
}

# run ARGS...: runs the binary against $DB; sets $RC, $OUT (stdout), $ERR.
run() {
	"$CLEANUPCTL" --db "$DB" "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
}

# run_in INPUTFILE ARGS...: like run, with stdin from INPUTFILE.
run_in() {
	local in=$1
	shift
	"$CLEANUPCTL" --db "$DB" "$@" >"$TMPD/out" 2>"$TMPD/err" <"$in"
	RC=$?
	OUT=$(cat "$TMPD/out")
	ERR=$(cat "$TMPD/err")
}

# collect PID [OUTFILE ERRFILE]: waits for the background command PID; sets
# RC, and OUT and ERR from OUTFILE and ERRFILE ($TMPD/out and $TMPD/err by
# default).
collect() {
	wait "$1"
	RC=$?
	OUT=$(cat "${2:-$TMPD/out}")
	ERR=$(cat "${3:-$TMPD/err}")
}

fail() {
	echo "FAIL: $*"
	echo "  exit $RC"
	echo "  stdout: $OUT"
	echo "  stderr: $ERR"
	FAILS=$((FAILS + 1))
}

# expect CODE FRAGMENT... : the last run exited CODE and its stderr+stdout
# contains every FRAGMENT.
expect() {
	local code=$1 f
	shift
	[ "$RC" -eq "$code" ] || { fail "expected exit $code ($CURRENT)"; return; }
	for f in "$@"; do
		case "$ERR$OUT" in
		*"$f"*) ;;
		*) fail "output lacks \"$f\" ($CURRENT)" ;;
		esac
	done
}

# same A B WHAT: A equals B.
same() { [ "$1" = "$2" ] || { echo "FAIL: $3: \"$1\" != \"$2\""; FAILS=$((FAILS + 1)); }; }

# unchanged BEFORE: the fingerprint still equals BEFORE.
unchanged() { same "$(fingerprint)" "$1" "data changed by a refused command ($CURRENT)"; }

finish() {
	if [ "$FAILS" -gt 0 ]; then
		echo "$FAILS failure(s)"
		exit 1
	fi
	echo "all passed"
}
