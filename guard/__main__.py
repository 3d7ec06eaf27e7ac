import sys

if sys.argv[1:2] == ["hook"]:  # once per tool call: the thin client first, nothing else imported
    import gc

    # A hook decides one call and exits: the collector would walk the ~200k objects the decision
    # code's import allocates ~40 times (~5 ms) and free nothing. guard.cli.hook turns it back on.
    gc.disable()
    from guard.hookclient import finish
    from guard.hookclient import main as thin

    read = thin(sys.argv[2:])
    if isinstance(read, int):  # the daemon answered
        finish(read)
    from guard.cli.hook import program

    program(sys.argv[2:], read)  # decides here and ends the process, unless the parser must explain

from guard.cli import main

sys.exit(main(sys.argv[1:]))
