#!/usr/bin/env python3
"""Writes the seed corpus (fuzz/corpus/TARGET/seed-*) and the dictionaries
(fuzz/dict/TARGET.dict) of the fuzz targets. The output is committed; run
this again after changing it (python3 fuzz/make_seeds.py). Files in the
corpus that do not start with "seed-" (crash-*, regress-*) are kept.

The input formats are described at the top of each fuzz/fuzz_TARGET.c.
"""
import os
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def write_corpus(target, seeds):
    d = HERE / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("seed-*"):
        old.unlink()
    for name, data in seeds:
        if isinstance(data, str):
            data = data.encode()
        (d / f"seed-{name}").write_bytes(data)


def dict_escape(b):
    out = []
    for c in b:
        if c in (0x22, 0x5C) or c < 0x20 or c >= 0x7F:
            out.append("\\x%02X" % c)
        else:
            out.append(chr(c))
    return "".join(out)


def write_dict(target, words, comment):
    (HERE / "dict").mkdir(exist_ok=True)
    lines = [f"# {comment}", "# Written by fuzz/make_seeds.py (libFuzzer's dictionary format)."]
    for w in words:
        if isinstance(w, str):
            w = w.encode()
        lines.append(f'"{dict_escape(w)}"')
    (HERE / "dict" / f"{target}.dict").write_text("\n".join(lines) + "\n")


# ---- external IDs ----------------------------------------------------------

E = "\u00e9".encode()  # two bytes
ids = [
    ("ascii", "item-000123"),
    ("path", "library/42/Season 1/Episode 7.mkv"),
    ("cafe", "caf\u00e9"),
    ("cjk", "\u65e5\u672c\u8a9e\u306e\u30d5\u30a1\u30a4\u30eb"),
    ("emoji", "clip-\U0001F600"),
    ("nbsp", "a\u00a0b"),
    ("line-sep", "a\u2028b"),
    ("replacement-char", "a\ufffdb"),
    ("max-codepoint", "a\U0010FFFF"),
    ("noncharacter", "a\uffff"),
    ("quote-backslash", 'a"b\\c'),
    ("dots", "ends in..."),
    ("space", " "),
    ("len-256-ascii", b"x" * 256),
    ("len-257-ascii", b"x" * 257),
    ("len-256-two-byte", E * 128),
    ("len-258-two-byte", E * 129),
    ("200-two-byte-chars", E * 200),
    ("len-256-ends-in-two-byte", b"x" * 254 + E),
    ("len-257-split-two-byte", b"x" * 255 + E),
    ("len-256-four-byte", "\U0001F600".encode() * 64),
    ("empty", b""),
    ("tab", b"a\tb"),
    ("bel", b"a\x07b"),
    ("newline", b"a\nb"),
    ("crlf", b"ab\r\n"),
    ("esc-sequence", b"\x1b[31mred\x1b[0m"),
    ("nul-inside", b"ab\x00c"),
    ("nul-only", b"\x00"),
    ("del", b"a\x7fb"),
    ("c1-nel", "a\u0085b"),
    ("c1-csi", "\u009b2J"),
    ("c1-last", "a\u009f"),
    ("raw-byte-85", b"a\x85b"),
    ("bom-then-id", b"\xef\xbb\xbfitem-1"),
    ("bom-only", b"\xef\xbb\xbf"),
    ("overlong-slash-2", b"\xc0\xaf"),
    ("overlong-slash-3", b"\xe0\x80\xaf"),
    ("overlong-slash-4", b"\xf0\x80\x80\xaf"),
    ("overlong-nul", b"a\xc0\x80b"),
    ("surrogate-high", b"\xed\xa0\x80"),
    ("surrogate-low", b"\xed\xbf\xbf"),
    ("above-10ffff", b"\xf4\x90\x80\x80"),
    ("lead-f5", b"\xf5\x80\x80\x80"),
    ("truncated-3", b"euro\xe2\x82"),
    ("lone-continuation", b"\x80abc"),
    ("latin1", b"caf\xe9"),
    ("ff-fe", b"\xff\xfe"),
]

write_corpus("external_id", ids)
write_dict("external_id", [
    b"\xef\xbb\xbf", "\u0085", "\u009b", "\u00a0", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
    b"\xe0\x80\xaf", b"\t", b"\x07", b"\x7f", b"\x00", "\u2028", "\U0001F600", "\U0010FFFF", b"x" * 64,
    E * 16,
], "External IDs: UTF-8 edges, control characters, length blocks.")

# ---- themes -----------------------------------------------------------------

themes = []
for f in sorted((ROOT / "themes").glob("*.theme")):
    themes.append((f"themes-{f.stem}", f.read_bytes()))
L = "normal = default\n"
themes += [
    ("empty", b""),
    ("comments-only", "# nothing\n   # indented\n\n"),
    ("one-role", "header = black on cyan bold\n"),
    ("no-final-newline", "header = red"),
    ("crlf", "normal = default\r\nheader = bright-white on red bold\r\n"),
    ("tabs", "\theader\t=\tred\ton\tblue\tbold\t# tabbed\n"),
    ("mixed-case", "HEADER = Bright-Red ON Black BOLD\n"),
    ("numbers", "header = 0 on 255\ntitle = 007\n"),
    ("gray-grey", "dim = gray\nborder = grey on bright-black\n"),
    ("bg-only", "selection = on blue\n"),
    ("attrs-only", "title = bold underline reverse standout italic dim normal\n"),
    ("attr-then-colour", "title = bold red\n"),
    ("normal-sets-others", "normal = white on blue\nheader = bold\n"),
    ("comment-after-value", "header = red # the top bar = not this\n"),
    ("hash-in-key", "head#er = red\n"),
    ("bad-unknown-role", L + "headr = red\n"),
    ("bad-unknown-colour", L + "header = blu\n"),
    ("bad-unknown-attr", L + "header = red blink\n"),
    ("bad-duplicate-role", "header = red\nheader = blue\n"),
    ("bad-on-twice", "header = red on blue on green\n"),
    ("bad-fg-after-bg", "header = on blue red\n"),
    ("bad-two-fg", "header = red green\n"),
    ("bad-on-without-bg", "header = red on\n"),
    ("bad-on-attr", "header = red on bold\n"),
    ("bad-256", "header = 256\n"),
    ("bad-huge-number", "header = 99999999999999999999999\n"),
    ("bad-hex", "header = 0x10\n"),
    ("bad-negative", "header = -1\n"),
    ("bad-empty-value", "header =\n"),
    ("bad-no-equals", "header red\n"),
    ("bad-no-role", "= red\n"),
    ("bad-bright-default", "header = bright-default\n"),
    ("line-255-bytes", "header = red" + " " * (255 - len("header = red")) + "\n"),
    ("bad-line-256-bytes", "header = red" + " " * (256 - len("header = red")) + "\n"),
    ("bad-control-char", "header = red\x07\n"),
    ("bad-control-in-comment", "# a bell \x07 in a comment\n"),
    ("bad-esc", "header = \x1b[31m\n"),
    ("cr-inside", b"header = red\rbold\n"),
    ("bad-bom", b"\xef\xbb\xbfnormal = default\n"),
    ("bad-del-in-role", b"head\x7fer = red\n"),
    ("bad-c1-in-role", "head\u009ber = red\n"),
    ("bad-latin1-in-role", b"h\xe9ader = red\n"),
    ("bad-second-line", "normal = default\nwat\n"),
    ("all-roles", "".join(f"{r} = {c}\n" for r, c in [
        ("normal", "default"), ("header", "1"), ("title", "2"), ("border", "3"), ("selection", "4"),
        ("dim", "5"), ("ok", "6"), ("warning", "7"), ("danger", "8"), ("badge", "9"),
        ("phase.collecting", "10"), ("phase.paused", "11"), ("phase.draining", "12"),
        ("phase.finalizing", "13"), ("phase.completed", "14"), ("phase.cancelled", "15"),
        ("progress", "16"), ("spark", "17"), ("prompt", "18"), ("stale", "19"), ("key", "20"),
        ("info", "21")])),
]
write_corpus("theme", themes)
write_dict("theme", [
    "normal", "header", "title", "border", "selection", "dim", "ok", "warning", "danger", "badge",
    "phase.collecting", "phase.paused", "phase.draining", "phase.finalizing", "phase.completed",
    "phase.cancelled", "progress", "spark", "prompt", "stale", "key", "info",
    "default", "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white", "gray", "grey",
    "bright-", "bright-black", "bright-white", " on ", "on", "bold", "underline", "reverse", "standout",
    "italic", " = ", "=", "#", "\n", "\r\n", "\t", "255", "256", "0", " " * 32,
], "Theme files: roles, colours, attributes, separators.")

# ---- command lines ----------------------------------------------------------

LEFT, RIGHT, HOME, END, BS, DC, UP, DOWN, ENTER, RESIZE = (b"\xf8" + bytes([i]) for i in range(10))
con = b"\x00"
opt = b"\x02"
js = b"\x03"
cmdlines = [
    ("console-step", con + b"step 12\n"),
    ("console-seal", con + b"seal 12 4000\r"),
    ("console-tab-one", con + b"rem\t"),
    ("console-tab-ambiguous", con + b"s\t\t"),
    ("console-tab-unicode", con + b"th\t"),
    ("console-render", con + b"\xf9\x28step 12\xf9\x05\xf9\x00\xf9\x63" + LEFT * 3 + b"\xf9\x0a\n"),
    ("console-edit", con + b"stpe" + LEFT + BS + b"e" + END + b" 5" + HOME + DC + b"s" + ENTER),
    ("console-esc", con + b"quit\x1b" + b"more"),
    ("console-ctrl-c", con + b"run 1\x03"),
    ("console-ctrl-d-empty", con + b"\x04"),
    ("console-history", con + b"step 1\n\xfastep 2\n\xfa" + UP + UP + DOWN + ENTER),
    ("console-reopen-close", con + b"abc\xfa\xfbdef\n"),
    ("console-resize", con + b"ab" + RESIZE + b"\t" + RESIZE + b"c\n"),
    ("console-utf8", con + "thème café 日本語".encode() + LEFT * 4 + b"\xf9\x08\n"),
    ("console-broken-utf8", con + b"a\xe2\x82b\xc3\n"),
    ("console-c1", con + "a\u0085b\u009bc".encode() + b"\n"),
    ("console-long", con + b"x" * 300 + b"\xf9\x14" + HOME + b"\xf9\x14\n"),
    ("console-wide-render", con + "日本語日本語日本語".encode() + b"\xf9\x05\xf9\x06\xf9\x07" + HOME + b"\xf9\x06"),
    ("opt-library", opt + b"--library\x005"),
    ("opt-library-equals", opt + b"--library=5"),
    ("opt-library-blank", opt + b"--library\x00 5"),
    ("opt-library-plus", opt + b"--library\x00+5"),
    ("opt-library-negative", opt + b"--library\x00-5"),
    ("opt-library-zero", opt + b"--library=0"),
    ("opt-library-max", opt + b"--library\x009223372036854775807"),
    ("opt-library-overflow", opt + b"--library\x009223372036854775808"),
    ("opt-library-hex", opt + b"--library\x000x10"),
    ("opt-library-empty", opt + b"--library="),
    ("opt-library-missing", opt + b"--library"),
    ("opt-library-prefix", opt + b"--libraryX=5\x00--library-id\x005"),
    ("opt-max-steps", opt + b"--max-steps\x001000000\x00--max-steps=1000001"),
    ("opt-max-busy", opt + b"--max-busy=0\x00--max-busy\x00-1"),
    ("opt-deadline", opt + b"--deadline\x000x10\x00--deadline=1e3"),
    ("opt-db", opt + b"--db\x00host=/tmp dbname=x\x00--db=--library"),
    ("opt-repeated", opt + b"--library\x005\x00--library\x006"),
    ("opt-positional", opt + b"12\x0012x\x00007\x00-0"),
    ("opt-value-is-option", opt + b"--library\x00--max-steps\x003"),
    ("opt-deadline-ok", opt + b"--deadline\x002\x00--deadline=0.5\x00--deadline\x00604800"),
    ("opt-deadline-bad", opt + b"--deadline\x00.5\x00--deadline=1.\x00--deadline\x00inf\x00--deadline=nan"),
    ("opt-deadline-long", opt + b"--deadline\x001234567890\x00--deadline=000000001.000000001"),
    ("opt-offset", opt + b"--offset\x00-1000\x00--offset=-0\x00--offset\x00--5\x00--offset=1001"),
    ("opt-signed-extremes", opt + b"-9223372036854775808\x00-9223372036854775809\x00-\x00"),
    ("json-plain", js + b"job 12 refused"),
    ("json-escapes", js + b'quote " backslash \\ newline \n tab \t cr \r bell \x07 esc \x1b del \x7f'),
    ("json-utf8", js + "café 日本語 \u0085 \U0001F600".encode()),
    ("json-invalid-utf8", js + b"caf\xe9 \xff\xfe \xc0\xaf"),
    ("json-separators-bidi", js + "a\u2028b\u2029c\u202ed\u2066e".encode()),
    ("json-astral", js + "\U0001F600\U0010FFFF".encode()),
    ("safe-plain", b"\x04\x00\x40library 7 (Caf\xc3\xa9)"),
    ("safe-escape", b"\x04\x00\x40name\x1b]0;pwned\x07\x1b[2J"),
    ("safe-c1-csi", b"\x04\x00\x40" + "x\u009b2Jy\u0085z".encode()),
    ("safe-bidi", b"\x04\x00\x40" + "abc\u202edcba\u2066x\u2069\u2028\u2029".encode()),
    ("safe-bad-bytes", b"\x04\x00\x40a\xe2\x82b\xc0\xafc\xed\xa0\x80d\xff"),
    ("safe-cell-pad", b"\x04\x10\x40ab"),
    ("safe-cell-cut", b"\x04\x03\x40" + "日本語日本語".encode()),
    ("safe-small-buffer", b"\x04\x00\x04" + "日本語".encode()),
    ("safe-tab-newline", b"\x04\x08\x40a\tb\nc\rd"),
]
write_corpus("cmdline", cmdlines)
write_dict("cmdline", [
    "--library", "--max-steps", "--max-busy", "--db", "--deadline", "=", b"\x00", "+", "-", " ",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1000000", "0x10",
    "step", "seal", "theme", "remove-library", "th", "\t", "\n", b"\x1b", b"\x03",
    b"\xf8\x00", b"\xf8\x01", b"\xf8\x02", b"\xf8\x03", b"\xf8\x04", b"\xf8\x05", b"\xf8\x06", b"\xf8\x07",
    b"\xf8\x08", b"\xf8\x09", b"\xf9\x10", b"\xf9\x02", b"\xfa", b"\xfb", "é", "日本", "\u0085",
], "Command lines: cleanupctl options, integers, console keys (see fuzz_cmdline.c).")

# ---- line editor ------------------------------------------------------------

def special(i):
    return b"\xf8" + bytes([i])

LEFT, RIGHT, HOME, END, BS, DC, UP, DOWN, ENTER = (special(i) for i in range(9))
C = lambda ch: bytes([ord(ch) & 0x1F])  # noqa: E731
le = [
    ("type", b"hello world"),
    ("move", b"abc" + LEFT + LEFT + b"X" + RIGHT + b"Y" + HOME + b"<" + END + b">"),
    ("emacs-move", b"abc" + C("b") * 2 + b"X" + C("f") + C("a") + b"<" + C("e") + b">"),
    ("backspace", b"abcd\x7f" + C("h") + BS),
    ("delete", b"abcd" + HOME + DC + C("d")),
    ("ctrl-d-empty", C("d")),
    ("rubout-word", b"step 12  seal" + C("w") + C("w") + b"x"),
    ("kill-yank", b"one two three" + LEFT * 5 + C("k") + HOME + C("y") + C("y")),
    ("kill-start", b"one two" + LEFT * 3 + C("u") + END + C("y")),
    ("transpose", b"ab" + C("t") + b"cd" + LEFT + C("t") + HOME + C("t")),
    ("transpose-utf8", "é日".encode() + C("t") + LEFT + C("t")),
    ("utf8-typed", "café 日本語 \U0001F600".encode() + BS + LEFT + BS),
    ("utf8-broken", b"a\xe2\x82b\xc3\xc3\xa9\xf0\x9f\x98c\x80\xff"),
    ("utf8-overlong", b"\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\xf4\x90\x80\x80z"),
    ("utf8-interrupted-by-key", b"\xe6\x97" + LEFT + b"\xa5x"),
    ("c1-typed", "a\u0085b\u009bc".encode()),
    ("controls", bytes(range(0, 32)) + b"\x7f"),
    ("submit-cancel", b"go\n" + b"\r" + b"\x1b" + C("c") + C("g") + b"\t"),
    ("history", b"one\xfb\xfetwo\xfb\xfe" + UP + UP + UP + DOWN + DOWN + DOWN),
    ("history-edit-saved", b"one\xfb\xfenew" + UP + b"!" + DOWN + DOWN),
    ("history-raw", b"\xfc\x05a\nb\x00c\xfc\x03\xc3\xa9\x07\xfc\x02  " + UP + UP),
    ("history-repeat", b"x\xfb\xfb\xfex\xfb" + UP),
    ("set-long", b"\xfa\xff\x04abcd" + HOME + b"X" + END + b"Y" + C("y")),
    ("set-long-utf8", b"\xfa\xff\x03\xe6\x97\xa5" + END + BS + "é".encode()),
    ("set-dirty", b"\xfa\x02\x06a\x07\xc3\xa9\xff"),
    ("insert", b"ab" + LEFT + b"\xf9\x03XYZ" + b"\xf9\x04\x07\xc3\xa9Q"),
    ("insert-full", b"\xfa\xff\x01z" + b"\xf9\x05abcde"),
    ("yank-full", b"\xfa\xa8\x01k" + HOME + C("k") + C("y") + C("y") + C("y")),
    ("complete-unique", b"rem\xfd"),
    ("complete-ambiguous", b"s\xfd"),
    ("complete-utf8", b"th\xfd"),
    ("complete-numbers", b"step 1\xfd"),
    ("complete-mid-word", b"stxx" + LEFT + LEFT + b"\xfd"),
    ("complete-none", b"zzz\xfd"),
    ("reset", b"abc\xfe" + C("y") + b"\xfe"),
    ("raw-f8-ff", b"\xff\x00\xff\x07a"),
    ("unknown-keys", special(10) + special(11) + special(13) + special(14) + special(16) + special(17)),
]
write_corpus("lineedit", le)
write_dict("lineedit", [
    special(i) for i in range(22)
] + [
    C(c) for c in "abdefhknptuwy"
] + [
    b"\x7f", b"\x1b", b"\n", b"\t", " ", "é", "日", "\U0001F600", "\u0085", b"\xe2\x82", b"\xfa\xff\x04",
    b"\xfb", b"\xfc\x04", b"\xfd", b"\xfe", b"\xf9\x04",
], "Line editor programs: curses keys (F8 K), control keys, UTF-8, operations (see fuzz_lineedit.c).")

print("seeds written under", os.path.relpath(HERE / "corpus"))
