"""Outputs written whole: a file, or a directory of files, replaced in one step.

Why: a reader (a person, a browser, the next script) must see the previous output or the new one, never half
of one. A report killed after writing its CSVs but before report.md left new tables beside a stale report.md
and a 0-byte report.html. So a file is written to a temporary name beside it and renamed over it
(``os.replace``); a directory is built as a temporary sibling and swapped in: with Linux's
``renameat2(RENAME_EXCHANGE)`` the two names trade places in one step, elsewhere the old one is renamed aside
first (a window of two renames). A failure or a kill before the swap leaves the previous output as it was, and
the temporary sibling is removed by the next writer of that directory.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

__all__ = ["replace_file", "whole_directory", "write_text_whole"]

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_WRITING = ".writing-"


def replace_file(path: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)`` writes the new content to ``tmp`` (beside ``path``), which then replaces ``path``; a
    failure leaves ``path`` as it was and removes ``tmp``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_whole(path: Path, text: str) -> None:
    """``path.write_text(text)`` (UTF-8), replacing the file in one step."""
    replace_file(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux renameat2); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_leftovers(out: Path) -> None:
    """Temporary siblings of ``out`` whose writer is gone (killed before its swap)."""
    for left in out.parent.glob(f".{out.name}{_WRITING}*"):
        pid = left.name.rsplit(_WRITING, 1)[-1].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(left, ignore_errors=True)


@contextlib.contextmanager
def whole_directory(out: Path, owned: Iterable[str] = ()) -> Iterator[Path]:
    """A temporary sibling of ``out`` to write the new directory into; swapped in for ``out`` when the block
    ends without an error, removed when it raises. Entries of the old ``out`` the new one lacks are carried
    over (a user's own files stay), but for the names in ``owned``: outputs of the writer that this run does
    not write (a table only some suites have) go, rather than stay stale beside the new ones."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}{_WRITING}{os.getpid()}-", dir=out.parent))
    try:
        yield tmp
        if out.is_dir():
            for entry in out.iterdir():
                if entry.name not in owned and not (tmp / entry.name).exists():
                    _carry(entry, tmp / entry.name)
        os.chmod(tmp, 0o755)
        if not out.exists():
            os.rename(tmp, out)
        elif not _exchange(tmp, out):
            aside = Path(tempfile.mkdtemp(prefix=f".{out.name}{_WRITING}{os.getpid()}-old-", dir=out.parent))
            os.rename(out, aside / out.name)
            os.rename(tmp, out)
            shutil.rmtree(aside, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # after an exchange: the previous directory


def _carry(entry: Path, to: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.copytree(entry, to, symlinks=True)
    else:
        shutil.copy2(entry, to, follow_symlinks=False)
