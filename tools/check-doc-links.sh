#!/usr/bin/env bash
# Checks that every relative link and image in the repository's Markdown resolves: the file or
# folder exists, and a #anchor names a heading of the target page (GitHub's rule for heading
# ids); and that every source path named in code type (`src/views/tasks.h`) exists. Links to
# other sites are not followed (CI has no network). Prints one line per broken reference,
# file:line, and exits 1 if there is any. Fast (well under a second); CTest runs it as
# `doc_links`.
#   tools/check-doc-links.sh [FILE.md ...]     (default: every tracked or new .md but build*/ and tests/docs/)
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# == 0)); then
  # tests/docs/ holds a page broken on purpose, for the test of this script.
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.md' ':!tests/docs/' 2>/dev/null ||
                       find . -name '*.md' -not -path './build*' -not -path './.git/*' -not -path './tests/docs/*')
  set -- "${files[@]}"
fi

exec /usr/bin/python3 - "$@" <<'EOF'
import os
import re
import sys

LINK = re.compile(r'!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')


def prose_lines(path):
    """(line number, text) of the lines outside fenced code."""
    fence = None
    for number, line in enumerate(open(path, encoding='utf-8'), 1):
        stripped = line.lstrip()
        mark = re.match(r'(`{3,}|~{3,})', stripped)
        if mark:
            if fence is None:
                fence = mark.group(1)
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading):
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    return ''.join(c for c in text if c.isalnum() or c in '-_ ').replace(' ', '-')


def anchors(path):
    seen, ids = {}, set()
    for _, line in prose_lines(path):
        m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            ids.add(base if n == 0 else f'{base}-{n}')
    return ids


broken = 0
for path in sys.argv[1:]:
    for number, line in prose_lines(path):
        prose = re.sub(r'(`+).+?\1', '', line)  # a link inside inline code is an example
        for target in LINK.findall(prose):
            if re.match(r'[a-z][a-z0-9+.-]*:', target):  # http:, https:, mailto:
                continue
            name, _, anchor = target.partition('#')
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
            why = None
            if not os.path.exists(resolved):
                why = 'no such file'
            elif anchor and resolved.endswith('.md') and anchor not in anchors(resolved):
                why = f'no heading #{anchor} in {resolved}'
            if why:
                print(f'{path}:{number}: broken link {target}: {why}')
                broken += 1
        # A source path named in code type (`src/engine/gemm.h`, `engine/zip_extract.h`) is a
        # link too, from the repository's root or src/; paths with patterns or placeholders are
        # examples and are left alone.
        for named in re.findall(r'`((?:src|tools|tests|lessons|shaders|assets|app|cli|engine|figure|'
                                r'hub|lessons|model|views)/[^`\s:]*)', line):
            if re.search(r'[*<>{}]|\.\.|NNN', named):
                continue
            if not any(os.path.exists(os.path.join(root, named)) for root in ('.', 'src')):
                print(f'{path}:{number}: no such path {named}')
                broken += 1
print(f'doc links: {len(sys.argv) - 1} Markdown files, {broken} broken links')
sys.exit(1 if broken else 0)
EOF
