"""Checks the diagnostics on stdin for what a terminal would show: no raw
control byte (tab and newline aside) and no invalid UTF-8 anywhere, and under
each error the caret below the text argv[1] starts with (counting a UTF-8
character as one column, as a terminal does). Prints, per error, the printed
source line's width and what stands above the caret, for FileCheck."""
import sys

data = sys.stdin.buffer.read()
bad = [b for b in data if (b < 0x20 and b not in (9, 10)) or b == 0x7f]
if bad:
    sys.exit("raw control bytes in the diagnostics: %r" % sorted(set(bad)))
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("invalid UTF-8 in the diagnostics: %s" % e)
lines = text.split("\n")
for i, line in enumerate(lines):
    if ": error: " not in line or i + 2 >= len(lines):
        continue
    src, caret = lines[i + 1], lines[i + 2]
    col = caret.index("^")
    under = src[col:]
    print("width %d, under the caret: %s" % (len(src), under[:20]))
    if len(sys.argv) > 1 and not under.startswith(sys.argv[1]):
        sys.exit("the caret is not under %r: %r" % (sys.argv[1], under[:40]))
