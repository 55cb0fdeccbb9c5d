"""``briefd recall`` as a script file, for ``python -S -P <this file> [options]``: the hook
command ``briefd init`` writes on POSIX systems (:func:`briefd.cli.init.hook_command`).

An agent spawns the hook on every prompt, and Python's ``site`` start-up (site-packages,
``.pth`` files) is ~2 ms of a ~9 ms bare interpreter start that the fast path does not need.
This file puts the directory holding the ``briefd`` package first on ``sys.path`` and runs the
hook; :func:`briefd.hook.need_site` loads ``site`` when the hook needs a package from
site-packages after all (a changed YAML config, an in-process answer). ``-P`` keeps this
file's own directory off ``sys.path``.
"""

from __future__ import annotations

import gc
import os
import sys

if __name__ == "__main__":
    # A hook process lives for one prompt and frees nothing it would need again: the cyclic
    # garbage collector's passes over the objects its imports create (~6 ms of a first prompt
    # answered in-process) buy nothing. :func:`briefd.hook.local.recall_here` turns it back on
    # before it loads an embedding model.
    gc.disable()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from briefd.hook.main import leave, main

    leave(main(sys.argv[1:]))
