"""Print the README's quick-start commands, one a line, as CI runs them.

The block is the fenced code block right after the `<!-- quickstart -->` marker in
README.md; each non-empty line is a command, its trailing `# comment` dropped. `.ci/run`
runs exactly these lines, so the README and CI cannot drift apart; tests/test_docs.py
checks the block holds the two documented commands. Standard library only: CI runs it
before any environment exists.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MARKER = "<!-- quickstart -->"


def quickstart_commands(readme: str) -> list[str]:
    """The commands of the block after MARKER (a ValueError when there is none)."""
    found = re.search(re.escape(MARKER) + r"\s*```[a-z]*\n(.*?)```", readme, re.S)
    if found is None:
        raise ValueError(f"README.md has no fenced code block right after {MARKER}")
    commands = []
    for line in found[1].splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command:
            commands.append(command)
    return commands


def main() -> int:
    readme = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    try:
        commands = quickstart_commands(readme.read_text(encoding="utf-8"))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
