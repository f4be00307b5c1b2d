#!/usr/bin/env python3
"""Paths named in the project's docs and comments exist.

Reads every tracked Markdown, C, header, SQL, shell and CMake file and
finds the repository paths it names (a word starting with one of the
top-level folders: core/, tui/, lab/, sql/, tests/, docs/, ...). Each must
exist in the checkout. A segment in capitals (NAME, NNN, TARGET) is a
placeholder, as is `<name>`, and a `*` a glob: such a path must match at least one file.
Prints "FILE:LINE: PATH" for each that does not, and exits 1 if any.
Usage: stale_paths.py SOURCE_DIR
"""
import glob
import os
import re
import subprocess
import sys

TOPS = ['core', 'tui', 'lab', 'sql', 'tests', 'docs', 'scripts', 'man', 'fuzz', 'bench', 'themes', 'cmake',
        '.ci', 'packaging']
PATH = re.compile(r'(?<![\w./$-])((?:%s)/[A-Za-z0-9_.*/<>-]*[A-Za-z0-9_*/>])' % '|'.join(re.escape(t) for t in TOPS))
PLACEHOLDER = re.compile(r'(?<![a-z0-9])[A-Z][A-Z0-9]+(?![a-z0-9])|<[a-z_]+>')
ENDINGS = ('.md', '.c', '.h', '.sql', '.sh', '.cmake', '.py', '.txt', 'Makefile', '.spec')
# Paths of an installed package, not of the repository (test_package.sh
# looks for them in the .deb), and generated files.
# "man/completion" in test_man_complete.sh is a word of its output; fuzz
# crash files exist only after a fuzzer found one.
# This checker and its test name missing paths on purpose.
SELF = ('tests/support/stale_paths.py', 'tests/cli/test_stale_paths.sh')
NOT_REPO = {('tests/cli/test_package.sh', 'cmake/cleanup/cleanupConfig.cmake'),
            ('tests/cli/test_man_complete.sh', 'man/completion'),
            ('fuzz/README.md', 'fuzz/corpus/TARGET/crash-TARGET-SHORT')}


def named_paths(text):
    for ln, line in enumerate(text.split('\n'), 1):
        for m in PATH.finditer(line):
            yield ln, m.group(1).rstrip('.')


def exists(path):
    pattern = PLACEHOLDER.sub('*', path)
    if '*' in pattern:
        return bool(glob.glob(pattern)) or bool(glob.glob(pattern.rstrip('/')))
    return os.path.exists(path)


def main():
    os.chdir(sys.argv[1] if len(sys.argv) > 1 else '.')
    try:
        files = subprocess.run(['git', 'ls-files'], capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout (an unpacked source tarball): every file below
        # the top-level folders and at the top.
        files = [f for f in os.listdir('.') if os.path.isfile(f)]
        for top in TOPS:
            for d, _, names in os.walk(top):
                files += [os.path.join(d, n) for n in names]
    bad = checked = 0
    for f in files:
        # CHANGELOG.md is history: it names files as they were then.
        if not f.endswith(ENDINGS) or f.startswith(('fuzz/corpus/', 'docs/spec/')) or f in SELF or f == 'CHANGELOG.md':
            continue
        try:
            with open(f, encoding='utf-8', errors='replace') as fh:
                text = fh.read()
        except OSError:
            continue
        for ln, p in named_paths(text):
            checked += 1
            if (f, p) in NOT_REPO or exists(p):
                continue
            print('%s:%d: %s does not exist' % (f, ln, p))
            bad += 1
    print('%d paths named, %d missing' % (checked, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
