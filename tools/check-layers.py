#!/usr/bin/env python3
"""Checks that includes run one way (DESIGN.md): inside src/model, down its rooms
   experiments -> training -> pass -> formats -> text
and out of src/model only into the engine. Prints one line per include that runs back up,
FILE:LINE -> INCLUDED, and exits 1 if there is any; then the rooms' file counts. CTest runs it
as `layers`.
    tools/check-layers.py [ROOT]      (default: the repository; ROOT/src is read)
"""
import os
import re
import sys

ROOMS = ['text', 'formats', 'pass', 'training', 'experiments']  # lowest first
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    model = os.path.join(root, 'src', 'model')
    up, counts = [], {}
    for level, room in enumerate(ROOMS):
        folder = os.path.join(model, room)
        names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        counts[room] = len(names)
        for name in names:
            if not name.endswith(('.h', '.cpp')):
                continue
            for number, line in enumerate(open(os.path.join(folder, name), encoding='utf-8'), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                path = m.group(1).split('/')
                where = f'src/model/{room}/{name}:{number}'
                if path[0] == 'model' and len(path) == 3 and path[1] in ROOMS:
                    if ROOMS.index(path[1]) > level:
                        up.append(f'{where} -> {m.group(1)} (up: {room} may not include {path[1]})')
                elif len(path) > 1 and path[0] != 'engine':
                    up.append(f'{where} -> {m.group(1)} (out of the model: only the engine is below it)')
    for line in up:
        print(line)
    print('rooms: ' + ', '.join(f'{r} {counts[r]} file' + ('' if counts[r] == 1 else 's') for r in ROOMS) + f'; {len(up)} includes run back up')
    return 1 if up else 0


if __name__ == '__main__':
    sys.exit(main())
