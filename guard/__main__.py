import sys

if sys.argv[1:2] == ["hook"]:  # once per tool call: the thin client first, nothing else imported
    from guard.hookclient import main as hook

    code = hook(sys.argv[2:])
    if code is not None:
        sys.exit(code)

from guard.cli import main

sys.exit(main())
