#!/usr/bin/env python3
"""language_surface.py TKC LANGUAGE_MD SURFACE_TXT: checks the table of
Triton 3.6's language surface in the language reference against the list of
names (SURFACE_TXT) and against the compiler.

Every name of the list has exactly one row `| `NAME` | STATE | NOTE |`, and
every row names a listed name. STATE is one of:
  yes      tk compiles a kernel that reads the name;
  partial  the same, and NOTE says what is missing;
  no       tk refuses it, and NOTE says why;
  n/a      a name a kernel does not use (a module, a type or a helper of
           Triton's own implementation); NOTE says what it is.
For yes/partial/no the compiler is asked: a kernel whose body is
`a = NAME` must compile (yes, partial) or be refused (no). The text above
the table states the counts ("Of the N names, A are yes, B partial, C no
and D n/a"), which must be the table's."""
import os
import re
import subprocess
import sys
import tempfile

ROW = re.compile(r"^\|\s*`([A-Za-z0-9_.]+)`\s*\|\s*(yes|partial|no|n/a)\s*\|\s*(.*?)\s*\|\s*$")
COUNTS = re.compile(r"Of\s+the\s+(\d+)\s+names,\s+(\d+)\s+are\s+yes,\s+(\d+)\s+partial,\s+"
                    r"(\d+)\s+no\s+and\s+(\d+)\s+n/a")


def table(md):
    rows = {}
    for line in open(md, encoding="utf-8"):
        m = ROW.match(line)
        if m:
            name, state, note = m.groups()
            if name in rows:
                sys.exit(f"language_surface: {name} has two rows")
            rows[name] = (state, note)
    return rows


def compiles(tkc, name, tmp):
    path = os.path.join(tmp, "probe.py")
    with open(path, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n@triton.jit\n"
                f"def probe():\n    a = {name}\n")
    r = subprocess.run([tkc, "--emit=ir", path], capture_output=True, text=True)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[0]


def main():
    tkc, md, listing = sys.argv[1:4]
    names = [l.strip() for l in open(listing) if l.strip() and not l.startswith("#")]
    rows = table(md)
    bad = [f"{n}: no row in the table" for n in names if n not in rows]
    bad += [f"{n}: a row for a name Triton 3.6 does not list" for n in rows if n not in names]
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            if n not in rows:
                continue
            state, note = rows[n]
            counts[state] = counts.get(state, 0) + 1
            if state != "yes" and not note:
                bad.append(f"{n}: state '{state}' needs a note saying what or why")
            if state == "n/a":
                continue
            ok, err = compiles(tkc, n, tmp)
            if ok != (state in ("yes", "partial")):
                bad.append(f"{n}: the table says '{state}' but tkc "
                           + ("compiles it" if ok else f"refuses it: {err}"))
    stated = COUNTS.search(open(md, encoding="utf-8").read())
    table_counts = [len(names)] + [counts.get(s, 0) for s in ("yes", "partial", "no", "n/a")]
    if not stated:
        bad.append("no sentence 'Of the N names, A are yes, B partial, C no and D n/a'")
    elif [int(g) for g in stated.groups()] != table_counts:
        bad.append("the stated counts %s are not the table's %s"
                   % (list(stated.groups()), table_counts))
    for b in bad:
        print("language_surface: " + b)
    print("language_surface: %d names: %s" % (len(names), ", ".join(
        f"{counts.get(s, 0)} {s}" for s in ("yes", "partial", "no", "n/a"))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
