"""Reading a file someone else may have put there: by type and size first, never blindly.

A path can name a FIFO (opening it waits for a writer forever), a device (/dev/zero never ends),
a folder, or a file far bigger than any tool, theme or config file. `read_bytes` refuses all of
these before reading a byte, with an OSError whose `strerror` says what the path is, so every
caller that already reports unreadable files in one line reports these the same way.

Standard library only: the config reader uses it at start-up.
"""

from __future__ import annotations

import errno
import os
import stat

# No tool, theme or config file comes close; the limit only stops a file that never ends.
MAX_FILE_BYTES = 64 << 20


class NotARegularFile(OSError):
    """A path refused by its type or size, before it was read."""


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, refusing any other kind of file and files over `limit` bytes.

    Opened non-blocking (a FIFO with no writer would otherwise block the open itself) and typed
    from the open descriptor (fstat), so a path swapped for a device between a check and the
    read cannot slip through. Raises OSError (NotARegularFile for type and size).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(
                errno.EINVAL, f"{kind_of(st.st_mode)}, not a regular file", str(path)
            )
        if st.st_size > limit:
            raise NotARegularFile(errno.EFBIG, f"{st.st_size >> 20} MiB is too big", str(path))
        chunks: list[bytes] = []
        size = 0
        while True:  # a file that grows while read (or lies about its size) still stops
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise NotARegularFile(
                    errno.EFBIG, f"more than {limit >> 20} MiB is too big", str(path)
                )
        return b"".join(chunks)
    finally:
        os.close(fd)
