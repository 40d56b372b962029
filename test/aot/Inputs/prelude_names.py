"""Lists the names the AOT prelude defines at file scope (macros, typedefs,
struct tags, enumerators, static functions and variables) and runs
`tkc --emit=header --out-name NAME` for each: every one must be refused.
Usage: prelude_names.py PRELUDE TKC KERNEL_FILE KERNEL SIGNATURE"""
import re
import subprocess
import sys


def file_scope_names(text):
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    names = set(re.findall(r"^\s*#\s*(?:define|ifndef)\s+(\w+)", text, flags=re.M))
    names |= set(re.findall(r"\b(?:struct|enum)\s+(\w+)", text))
    code = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    depth, stmt, in_enum = 0, "", False
    for c in code:
        if c == "{":
            in_enum = depth == 0 and re.search(r"\benum\b", stmt) is not None
            if depth == 0 and not in_enum:
                m = re.search(r"(\w+)\s*\([^()]*\)\s*$", stmt)  # a function
                if m:
                    names.add(m.group(1))
            depth += 1
            stmt = ""
        elif c == "}":
            depth -= 1
            if in_enum and depth == 0:
                names |= set(re.findall(r"(?:^|,)\s*(\w+)", stmt))
            stmt = ""
        elif c == ";" and depth == 0:
            m = re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*(?:=[^=].*)?$", stmt.strip(), flags=re.S)
            if m and stmt.strip():
                names.add(m.group(1))  # a typedef's or a variable's name
            stmt = ""
        elif c == "," and in_enum and depth == 1:
            stmt += c
        else:
            stmt += c
    return sorted(n for n in names if n not in ("struct", "enum", "int", "void"))


def main():
    prelude, tkc, src, kernel, sig = sys.argv[1:6]
    names = file_scope_names(open(prelude).read())
    accepted = []
    for n in names:
        r = subprocess.run([tkc, "--emit=header", src, "-k", kernel, "-D", "BLOCK=64", "-s", sig,
                            "--out-name", n, "-o", "-"], capture_output=True, text=True)
        if r.returncode == 0 or "--out-name '%s'" % n not in r.stderr:
            accepted.append(n)
    print("%d names checked" % len(names))
    print("accepted:", " ".join(accepted) if accepted else "none")
    print("checked:", " ".join(names))
    return 1 if accepted else 0


if __name__ == "__main__":
    sys.exit(main())
