"""Files inside the project, which is untrusted ground (README "Security model", REL-4): every
write reached from the project root without following a link, whole files replaced atomically,
reads that never block and stay inside the project. The one owner of those reads and writes
(tests/unit/test_owners.py): `dirs` (folders reached without a link, names removed), `write`
(files created, appended to, replaced, placed) and `read` (files read)."""

# The project directory itself is the user's choice and trusted; everything below it may have
# been planted by a cloned repository or the agent. So every path aidd writes is reached from the
# project root one directory at a time with O_NOFOLLOW (a symlinked `.automaker` or subdirectory
# is refused, never followed), files are created or appended to with O_NOFOLLOW and must be
# regular files with one link, and whole files are replaced atomically (temp file + fsync +
# rename, LAY-12) in that verified directory. Reads open without blocking (a FIFO cannot hang
# aidd), must land on a regular file inside the project, and are capped in size.

from aidd.fsio.dirs import (
    TMP_PREFIX,
    FileTooLargeError,
    UnsafePathError,
    check_dir,
    check_file,
    make_dirs,
    open_dir,
    remove_stale_temps,
    unlink,
)
from aidd.fsio.read import open_read, open_regular, read_file
from aidd.fsio.write import (
    AtomicFile,
    Rewriter,
    atomic_file,
    open_append,
    open_file,
    place,
    write_all,
    write_atomic,
    write_crash_file,
)

__all__ = ["TMP_PREFIX", "AtomicFile", "FileTooLargeError", "Rewriter", "UnsafePathError",
           "atomic_file", "check_dir", "check_file", "make_dirs", "open_append", "open_dir",
           "open_file", "open_read", "open_regular", "place", "read_file", "remove_stale_temps",
           "unlink", "write_all", "write_atomic", "write_crash_file"]
