#!/usr/bin/env python3
"""Names in the project's docs and comments exist; no comment cites a tracker.

The sibling of stale_paths.py. Reads every tracked Markdown page (not
CHANGELOG.md, which is history, nor docs/spec/, a copy of the spec) and the
comments of every C, header, SQL, shell, Python and CMake file, and checks:

  * a C or SQL function written as `name()` (or `name(...)`) whose name
    starts with one of this project's prefixes (cleanup_, tui_, cli_,
    engine_, step_, ...) is a word of some source's code: a C definition,
    declaration or macro, a shell or CMake function, a SQL function;
  * `cleanup.name` and `cleanup_lab.name` are created by some SQL file
    (a function, table, view, type, sequence or role-free object);
  * `cleanup.name` may also be a setting the code reads or sets
    (`current_setting('cleanup.name')`, `SET LOCAL cleanup.name`,
    `-c cleanup.name=...`);
  * in a Markdown page, a name alone in backticks with one of the
    prefixes (`cleanup_text_copy`) is a word of some source's code or
    string literals;
  * a test named by its ctest name (cli_test_readme, integration_test_jobs)
    is a file tests/KIND/test_NAME.sh or .c;
  * `CLEANUP_Q_NAME` is a statement, sql/queries/NAME.sql (lower case) or
    lab/sql/queries/NAME.sql;
  * a section named as `docs/PAGE.md, "Words"` (or `PAGE.md "Words"`) is
    still there: the words appear in that page (case, Markdown marks and
    line breaks aside);
  * no comment or page cites "issue N": the tracker is not in the
    repository, so a comment says the invariant (C1, S7, K3, ...) or the
    reason instead.

Prints "FILE:LINE: what" for each finding and exits 1 if any.
Usage: stale_names.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys

PREFIXES = ('cleanup_', 'tui_', 'cli_', 'engine_', 'step_', 'lab_', 'console_', 'monitor_', 'runner_',
            'ops_', 'panel_', 'mon_', 'install_', 'sandbox_', 'writer_', 'worker_', 'jobview_', 'layout_',
            'theme_', 'lineedit_', 'confirm_', 'progress_', 'sanitize_', 'narrate_', 'keys_', 'job_', 'jobs_')
# A function named in prose: any snake_case `name()`, or a name with one of
# the prefixes followed by its arguments, `cleanup_query(e, ...)`.
CALL = re.compile(r'(?<![\w.$>-])([a-z][a-z0-9]*_[a-z0-9_]+\(\)|(?:%s)[A-Za-z0-9_]*\s?\()' % '|'.join(PREFIXES))
SQLNAME = re.compile(r'(?<![\w.$/-])(cleanup(?:_lab)?)\.([a-z_][a-z0-9_]*)')
QUERY = re.compile(r'\bCLEANUP_Q_([A-Z0-9_]+)\b')
ISSUE = re.compile(r'\bissues? #?[0-9]', re.I)
CREATE = re.compile(r'\b(?:FUNCTION|PROCEDURE|TABLE|VIEW|TYPE|SEQUENCE|DOMAIN|INDEX|TRIGGER|AGGREGATE)'
                    r'\s+(?:IF\s+NOT\s+EXISTS\s+)?(cleanup(?:_lab)?)\.([a-z_][a-z0-9_]*)', re.I)
SETTING = re.compile(r'(?:[\'"]|-c\s*|SET\s+(?:LOCAL\s+)?)cleanup(?:_lab)?\.([a-z_][a-z0-9_]*)', re.I)
TICKED = re.compile(r'`((?:%s)[A-Za-z0-9_]*)`' % '|'.join(PREFIXES))
CTEST = re.compile(r'(?<![\w/])(unit|integration|cli|crash|e2e)_(test_[A-Za-z0-9_]+)')
SECTION = re.compile(r'(?<![\w/.-])((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]+\.md)\)?,? "([^"]{3,80})"')
WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
# cleanup.X that is a file, not a SQL object.
FILE_ENDINGS = {'h', 'c', 'pc', 'so', 'a', 'md', 'sql', 'theme', 'conf', 'log', 'txt', 'deb', 'json', 'tar'}
# Names that are meant not to exist (what a test proves is refused, a
# placeholder), each with its reason. Keep this list short.
ALLOWED = {
    'CLEANUP_Q_NAME': 'the placeholder of a statement\'s name',
    'cleanup_foo': 'the placeholder of an exported symbol (test_symbols.sh)',
    'recognized_connection_string': 'libpq\'s own, named where the engine follows it',
    'cleanup.seed_demo': 'named where it says the engine no longer installs it (the lab does: cleanup_lab.seed_demo)',
}
SELF = ('tests/support/stale_names.py', 'tests/cli/test_stale_paths.sh')
# Pages that may cite the tracker: the changelog is history.
ISSUE_EXEMPT = ('CHANGELOG.md',)

C_LIKE = ('.c', '.h')
HASH_LIKE = ('.sh', '.py', '.cmake', '.txt', 'Makefile', '.spec')


def strip_c(text):
    """(code, comments, string literals) of a C file; code and comments keep line numbers."""
    code, comm, strs = [], [], []
    i, n = 0, len(text)
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            seg = text[i:j]
            comm.append(seg)
            code.append(re.sub(r'[^\n]', ' ', seg))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            comm.append(text[i:j])
            code.append(' ' * (j - i))
            i = j
        elif text[i] in '"\'':
            q = text[i]
            j = i + 1
            while j < n and text[j] != q and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            strs.append(text[i + 1:j - 1])
            code.append(text[i] + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + text[j - 1:j])
            comm.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
            continue
        else:
            j = i
            while j < n and text[j] not in '/"\'':
                j += 1
            if j == i:
                j = i + 1
            seg = text[i:j]
            code.append(seg)
            comm.append(re.sub(r'[^\n]', ' ', seg))
            i = j
            continue
    return ''.join(code), ''.join(comm), strs


def split_lines(text, marker):
    """(code, comments) of a file whose comments run from MARKER to the end of the line."""
    code, comm = [], []
    for line in text.split('\n'):
        k = line.find(marker)
        if marker == '#':
            m = re.search(r'(?:^|\s)#', line)
            k = m.start() if m else -1
        if k < 0:
            code.append(line)
            comm.append('')
        else:
            code.append(line[:k])
            comm.append(line[k:])
    return '\n'.join(code), '\n'.join(comm)


def flat(text):
    """TEXT without Markdown marks, in lower case, its white space one space."""
    return ' '.join(re.sub(r'[*`_#]', '', text).lower().split())


def kind(f):
    if f.endswith('.md'):
        return 'md'
    if f.endswith(C_LIKE):
        return 'c'
    if f.endswith('.sql'):
        return 'sql'
    if f.endswith(HASH_LIKE) or os.path.basename(f) == 'CMakeLists.txt':
        return 'hash'
    return None


def main():
    os.chdir(sys.argv[1] if len(sys.argv) > 1 else '.')
    try:
        files = subprocess.run(['git', 'ls-files'], capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, _, names in os.walk('.'):
            files += [os.path.relpath(os.path.join(d, n)) for n in names]
    # The checker and its test name missing names on purpose: they are
    # neither checked nor a source of names.
    files = [f for f in files if kind(f) and not f.startswith(('docs/spec/', 'fuzz/corpus/')) and f not in SELF]
    words, sql, settings, strwords = set(), set(), set(), set()
    texts_bad = []
    texts = {}
    for f in files:
        try:
            with open(f, encoding='utf-8', errors='replace') as fh:
                text = fh.read()
        except OSError:
            continue
        k = kind(f)
        if '\x00' in text or '\x01' in text:
            print('%s: holds a NUL or SOH byte: a text source is never binary' % f)
            texts_bad.append(f)
        if k == 'md':
            texts[f] = ('', text)
            continue
        if k == 'c':
            code, comm, strs = strip_c(text)
            for st in strs:
                strwords.update(WORD.findall(st))
                settings.update(SETTING.findall('"' + st))
        elif k == 'sql':
            code, comm = split_lines(text, '--')
        else:
            code, comm = split_lines(text, '#')
        texts[f] = (code, comm)
        words.update(WORD.findall(code))
        if k != 'c':
            settings.update(SETTING.findall(code))
        if k == 'sql':
            sql.update('%s.%s' % m.groups() for m in CREATE.finditer(code))
    queries = {n[:-4].upper() for d in ('sql/queries', 'lab/sql/queries') if os.path.isdir(d)
               for n in os.listdir(d) if n.endswith('.sql')}
    sql_names = {s.split('.', 1)[1] for s in sql}

    bad, checked = len(texts_bad), 0
    pages = {}

    def page_text(path):
        if path not in pages:
            try:
                with open(path, encoding='utf-8', errors='replace') as fh:
                    pages[path] = flat(fh.read())
            except OSError:
                pages[path] = None
        return pages[path]

    def report(f, ln, what):
        nonlocal bad
        print('%s:%d: %s' % (f, ln, what))
        bad += 1

    for f, (_, comm) in sorted(texts.items()):
        if f in SELF or f == 'CHANGELOG.md':
            continue
        for ln, line in enumerate(comm.split('\n'), 1):
            if not line.strip():
                continue
            if ISSUE.search(line) and f not in ISSUE_EXEMPT:
                report(f, ln, 'cites "%s": name the invariant or the reason' % ISSUE.search(line).group(0))
            for m in CALL.finditer(line):
                name = m.group(1).rstrip('() ')
                checked += 1
                # pg_*: PostgreSQL's own functions (pg_stat_reset())
                if name in words or name in sql_names or name in ALLOWED or name.endswith('_') or name.startswith('pg_'):
                    continue
                report(f, ln, '%s() is not defined in any source' % name)
            for m in SQLNAME.finditer(line):
                schema, name = m.groups()
                full = '%s.%s' % (schema, name)
                checked += 1
                if name in FILE_ENDINGS or name.endswith('_') or full in sql or name in settings or full in ALLOWED:
                    continue
                report(f, ln, '%s is not created by any SQL file' % full)
            for m in SECTION.finditer(line):
                page, words_ = m.groups()
                for path in (page, os.path.join(os.path.dirname(f), page), os.path.join('docs', page)):
                    if os.path.isfile(path):
                        break
                else:
                    continue  # a missing page is stale_paths.py's to report
                checked += 1
                if flat(words_) not in page_text(path):
                    report(f, ln, '%s has no section "%s"' % (page, words_))
            for m in CTEST.finditer(line):
                checked += 1
                k, n = m.groups()
                if n.endswith('_') or any(os.path.exists('tests/%s/%s%s' % (k, n, e)) for e in ('.c', '.sh')):
                    continue
                report(f, ln, 'the test %s_%s is no file tests/%s/%s.*' % (k, n, k, n))
            for m in TICKED.finditer(line) if f.endswith('.md') else ():
                name = m.group(1)
                checked += 1
                if name in words or name in strwords or name in sql_names or name in ALLOWED or name.endswith('_'):
                    continue
                if CTEST.fullmatch(name):
                    continue
                report(f, ln, '`%s` is not a name of any source' % name)
            for m in QUERY.finditer(line):
                checked += 1
                name = 'CLEANUP_Q_' + m.group(1)
                if m.group(1) in queries or name in words or name in ALLOWED:
                    continue
                report(f, ln, '%s names no sql/queries/%s.sql' % (name, m.group(1).lower()))
    print('%d names checked, %d stale' % (checked, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
