#!/usr/bin/env python3
"""Every module a target imports is one it declares in Package.swift (issue 45).

A target that imports another of the package's modules without declaring it builds only while some
declared dependency happens to drag that module in (Actions imported Capture through
PoseEstimation): the graph in Package.swift is then not the real one, and the build breaks when the
dependency that dragged it in changes. This reads the package's own description
(`swift package dump-package`) and every `import` in each target's Swift files, and fails on an
import of a package module that the target does not declare directly.

Usage: .ci/check-imports.py [PACKAGE_DIR]   (exit 0: every import declared; 1: lists the others)
"""
import json
import os
import re
import subprocess
import sys

IMPORT = re.compile(r'^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)')


def main() -> int:
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
    description = json.loads(subprocess.run(['swift', 'package', 'dump-package'], cwd=root, check=True,
                                            capture_output=True, text=True).stdout)
    targets = {target['name']: target for target in description['targets']}
    problems = []
    for name, target in sorted(targets.items()):
        declared = set()
        for dependency in target['dependencies']:
            for kind in ('byName', 'target', 'product'):
                if kind in dependency:
                    declared.add(dependency[kind][0])
        folder = target.get('path') or os.path.join('Tests' if target['type'] == 'test' else 'Sources', name)
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for file in sorted(files):
                if not file.endswith('.swift'):
                    continue
                path = os.path.join(directory, file)
                with open(path, encoding='utf-8') as source:
                    for number, line in enumerate(source, 1):
                        match = IMPORT.match(line)
                        if not match:
                            continue
                        module = match.group(1)
                        if module in targets and module != name and module not in declared:
                            problems.append(f'{os.path.relpath(path, root)}:{number}: {name} imports {module}, '
                                            f'which Package.swift does not declare for it')
    for problem in problems:
        print(problem)
    if problems:
        print(f'check-imports: {len(problems)} undeclared import(s): add each module to its target\'s dependencies '
              f'in Package.swift, or stop importing it')
        return 1
    print(f'check-imports: every import of the package\'s {len(targets)} targets is declared')
    return 0


if __name__ == '__main__':
    sys.exit(main())
