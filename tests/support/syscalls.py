"""Stop a process at a chosen system call of SQLite's, as a ``SIGKILL`` at that instant would.

SQLite's unix VFS makes its system calls through a table that ``xSetSystemCall`` can change
(https://sqlite.org/c3ref/vfs.html; every build of the unix VFS has it, no option needed).
:func:`kill_right_after_wal_truncation` replaces its ``ftruncate`` with one that truncates and then
kills the process when the file is a ``-wal``: the files are left exactly as a kill right after
SQLite cut the WAL leaves them, with nothing else of SQLite's run in between.  SQLite cuts the WAL
in three places (``wal.c``): the first commit after a restart when ``journal_size_limit`` is set
(``walLimitSize``, before that commit lists its frames in the ``-shm``), a ``TRUNCATE`` checkpoint,
and the close of a persistent WAL.

Only for a process that is meant to die (a child the test started): the hook stays for the
process's life.
"""

from __future__ import annotations

import ctypes
import os
import signal

import _sqlite3

_VFS_FUNCTIONS = ("xOpen", "xDelete", "xAccess", "xFullPathname", "xDlOpen", "xDlError", "xDlSym",
                  "xDlClose", "xRandomness", "xSleep", "xCurrentTime", "xGetLastError",
                  "xCurrentTimeInt64", "xSetSystemCall", "xGetSystemCall", "xNextSystemCall")


class _Vfs(ctypes.Structure):  # struct sqlite3_vfs, version 3 (sqlite3.h)
    _fields_ = [("iVersion", ctypes.c_int), ("szOsFile", ctypes.c_int), ("mxPathname", ctypes.c_int),
                ("pNext", ctypes.c_void_p), ("zName", ctypes.c_char_p), ("pAppData", ctypes.c_void_p),
                *((name, ctypes.c_void_p) for name in _VFS_FUNCTIONS)]


_SET_SYSTEM_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_FTRUNCATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int64, use_errno=True)
_installed = []  # the callback must outlive the call that installs it


def kill_right_after_wal_truncation() -> None:
    """From now on, SQLite's ``ftruncate`` of a ``-wal`` file in this process truncates it, writes one
    line to stderr and sends this process ``SIGKILL``."""
    # The library the sqlite3 module uses, whether linked to it or built into it.
    library = ctypes.CDLL(_sqlite3.__file__)
    library.sqlite3_vfs_find.restype = ctypes.POINTER(_Vfs)
    library.sqlite3_vfs_find.argtypes = [ctypes.c_char_p]
    vfs = library.sqlite3_vfs_find(None)
    if not vfs or vfs.contents.iVersion < 3 or not vfs.contents.xSetSystemCall:
        raise RuntimeError("SQLite's default VFS cannot change its system calls")

    def ftruncate(fd: int, size: int) -> int:
        try:
            os.ftruncate(fd, size)
        except OSError as exc:
            ctypes.set_errno(exc.errno)
            return -1
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.endswith("-wal"):
            os.write(2, f"killed right after SQLite's ftruncate({name}, {size})\n".encode())
            os.kill(os.getpid(), signal.SIGKILL)
        return 0

    _installed.append(_FTRUNCATE(ftruncate))
    status = _SET_SYSTEM_CALL(vfs.contents.xSetSystemCall)(
        ctypes.cast(vfs, ctypes.c_void_p), b"ftruncate", ctypes.cast(_installed[-1], ctypes.c_void_p))
    if status != 0:
        raise RuntimeError(f"xSetSystemCall('ftruncate') returned {status}")
