#!/usr/bin/env python3
"""check_layers.py: lists the includes and calls between the stages of tk
(the folders of lib/, runtime/, src/) and checks them against the stage
order the README's architecture section gives, one line:

    Stage order: support < front < ir < ... < runtime < src

A stage may include only its own headers and the interface header
(lib/<s>/<s>.h) of a stage before it, and may call only functions defined
in its own folder or a stage before it. grammar/ belongs to front.
Exit status 0 when every edge goes down, 1 with one line per violation.

    scripts/check_layers.py [--root DIR] [--list] [--self-check]
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A function definition: at column 0, a name and '(' and no ';' before the
# body's '{' (which may be on a later line).
DEFINITION = re.compile(r'^(?!static\b)[A-Za-z_][\w \t\*]*?\b([a-z_]\w*)\s*\(([^;{]*?)\)\s*\{',
                        re.M)
CALL = re.compile(r'\b([a-z_]\w*)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def stage_order(root):
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        for line in f:
            if line.startswith('Stage order:'):
                return [s.strip() for s in line[len('Stage order:'):].split('<')]
    sys.exit('check_layers: README.md has no "Stage order: a < b < ..." line')


def stage_of(rel, stages):
    parts = rel.split('/')
    if parts[0] == 'grammar':
        return 'front'
    if parts[0] in ('runtime', 'src'):
        return parts[0] if parts[0] in stages else None
    if parts[0] == 'lib' and len(parts) > 2 and parts[1] in stages:
        return parts[1]
    return None


def sources(root, stages):
    """(relative path, stage, text) of every C source, header and grammar file."""
    out = []
    for top in ('lib', 'runtime', 'src', 'grammar'):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(('.c', '.h', '.l', '.y')):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                st = stage_of(rel, stages)
                if st is None:
                    continue
                with open(path, encoding='utf-8', errors='replace') as f:
                    out.append((rel, st, f.read()))
    return sorted(out)


def code_only(text):
    return STRING.sub('""', COMMENT.sub(' ', text))


def definitions(files):
    """Every non-static function name -> the stage defining it."""
    where = {}
    for rel, st, text in files:
        if rel.endswith('.c'):
            for m in DEFINITION.finditer(code_only(text)):
                where.setdefault(m.group(1), st)
    return where


def check_include(rel, st, inc, rank):
    """None when the include is allowed, else why not."""
    target = inc.split('/')[0] if '/' in inc else None
    if target is None or target not in rank or target == st:
        return None  # own folder, a generated or public header (tk/tk.h)
    if rank[target] > rank[st]:
        return f'{rel}: {st} includes "{inc}" of {target}, a stage above it'
    if inc != f'{target}/{target}.h':
        return f'{rel}: {st} includes "{inc}", which is not the interface of {target} ' \
               f'({target}/{target}.h)'
    return None


def scan(files, rank):
    """The include and call edges between stages, and the violations."""
    defined = definitions(files)
    edges, problems = {}, []
    for rel, st, text in files:
        for inc in INCLUDE.findall(text):
            target = inc.split('/')[0]
            if target in rank and target != st:
                edges.setdefault((st, target, 'include'), set()).add(inc)
            why = check_include(rel, st, inc, rank)
            if why:
                problems.append(why)
        for name in set(CALL.findall(code_only(text))):
            target = defined.get(name)
            if target is None or target == st:
                continue
            edges.setdefault((st, target, 'call'), set()).add(name)
            if rank[target] > rank[st]:
                problems.append(f'{rel}: {st} calls {name}() of {target}, a stage above it')
    return edges, problems


def self_check(files, rank):
    """The checks must catch an upward include, a private header and an upward call."""
    fake = [('lib/sema/fake.c', 'sema',
             '#include "codegen/codegen.h"\n#include "ir/verify.h"\n'
             'void f(void) { cg_compile(0, 0, 0, 0, 0); }\n')]
    _, problems = scan(files + fake, rank)
    wanted = ['includes "codegen/codegen.h" of codegen, a stage above it',
              'includes "ir/verify.h", which is not the interface of ir',
              'calls cg_compile() of codegen, a stage above it']
    missing = [w for w in wanted if not any(w in p for p in problems)]
    for w in missing:
        print(f'check_layers: self-check: not reported: {w}')
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..'))
    ap.add_argument('--list', action='store_true', help='print every edge between stages')
    ap.add_argument('--self-check', action='store_true',
                    help='check that violations planted in a fake file are reported')
    args = ap.parse_args()
    stages = stage_order(args.root)
    rank = {s: i for i, s in enumerate(stages)}
    files = sources(args.root, stages)
    if args.self_check:
        return self_check(files, rank)
    edges, problems = scan(files, rank)
    if args.list:
        print('Stage order: ' + ' < '.join(stages))
        for (a, b, kind), names in sorted(edges.items(), key=lambda e: (rank[e[0][0]], e[0])):
            shown = ', '.join(sorted(names)[:6]) + (', ...' if len(names) > 6 else '')
            print(f'{a:>8} -> {b:<8} {kind:<7} {len(names):3}  {shown}')
    for p in problems:
        print(p)
    if problems:
        print(f'check_layers: {len(problems)} edge(s) against the stage order in README.md')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
