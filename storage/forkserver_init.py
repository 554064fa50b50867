"""The first module the conversion forkserver imports (its preload, ``storage.conversion``).

Ctrl-C reaches every process in the group. The forkserver ignores SIGINT itself, but
only once its preload is imported, and importing the converters takes a second: a
Ctrl-C in that second ended it with a KeyboardInterrupt traceback, and every worker
slot waiting on it with another. Imported first, this makes the forkserver ignore
SIGINT from the start; the server decides when conversion stops (and its workers
ignore SIGINT too).
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
