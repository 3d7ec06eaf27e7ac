import sys

if sys.argv[1:2] == ["hook"]:  # once per tool call: the thin client first, nothing else imported
    from guard.hookclient import run

    run(sys.argv[2:])  # answers and ends the process, unless the full parser must explain

from guard.cli import main

sys.exit(main(sys.argv[1:]))
