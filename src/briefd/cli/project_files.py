"""Reading and writing the config files ``briefd init`` changes, all or none: every file is
read and every folder checked before anything is written, then each new text goes to a
temporary file beside its target and all are renamed into place together. A problem is one
:class:`~briefd.errors.ConfigError` naming the file and what to do."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from briefd.errors import ConfigError


def read_text(path: Path) -> str | None:
    """The file's text, None when it does not exist. A UTF-8 byte order mark (Windows editors
    and PowerShell's ``Set-Content -Encoding UTF8`` write one) is read past and not written
    back: JSON and TOML parsers refuse it (Python's ``json`` and ``tomllib``, Node's
    ``JSON.parse``: Claude Code's desktop app ignores such a settings file), and none refuses
    a file without it."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):  # the second: check_writable says why
        return None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save it as UTF-8, then rerun") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({_reason(exc)}); {_fix(exc)}") from None


def check_writable(path: Path) -> None:
    """Refuse ``path`` when a file stands where a folder must be, when the file is read-only
    (renaming the new text into place would replace it all the same), or when the folder it
    goes into (or the nearest one that exists) cannot be written. A symbolic link is judged
    by the file it points to, which is what init writes."""
    path = through_link(path)
    if path.is_dir():
        raise ConfigError(f"{path} is a folder where init writes a file; move it aside, then rerun")
    _check_file_writable(path)
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(
            f"{folder} is a file where init needs a folder; move it aside, then rerun"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{path}: cannot write in {folder} (read-only or not yours); make it writable or "
            "run init where you can write, then rerun"
        )


def _check_file_writable(path: Path) -> None:
    """A file its owner made read-only (no write bit, which root's access check ignores) or
    that this user may not write is left as it is."""
    try:
        found = path.stat()
    except OSError:  # not there (or not reachable: the folder check says why)
        return
    mode = found.st_mode & 0o777
    if not mode & 0o222:
        raise ConfigError(
            f"{path}: read-only (mode {mode:o}); make it writable (chmod u+w) to let init "
            "change it, then rerun"
        )
    if not os.access(path, os.W_OK):
        raise ConfigError(
            f"{path}: not yours to write (owner uid {found.st_uid}, mode {mode:o}); ask its "
            "owner, or run init as a user who may write it, then rerun"
        )


def write_all(changes: list[tuple[Path, str | None]]) -> None:
    """Write (text) or remove (None) each file: staged beside its target first, so a failure
    leaves every file as it was."""
    staged: list[tuple[Path, Path]] = []
    made: list[Path] = []
    try:
        for link, text in changes:
            if text is not None:
                path = through_link(link)
                made += _make_folders(path.parent)
                staged.append((path, stage(path, text)))
    except OSError as exc:
        for _, temp in staged:
            temp.unlink()
        for folder in reversed(made):
            folder.rmdir()
        raise ConfigError(
            f"{exc.filename or path}: cannot write it ({_reason(exc)}); {_fix(exc)}"
        ) from None
    for path, temp in staged:
        temp.replace(path)
    for path, text in changes:
        if text is None:
            path.unlink(missing_ok=True)


def through_link(path: Path) -> Path:
    """Where the text of ``path`` goes: the file a symbolic link points to (settings kept in a
    dotfiles repository and linked into the project), so the link stays a link."""
    return path.resolve() if path.is_symlink() else path


def _make_folders(folder: Path) -> list[Path]:
    missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    for p in missing:
        p.mkdir()
    return missing


def stage(path: Path, text: str) -> Path:
    """A temporary file beside ``path`` holding ``text``, with ``path``'s mode (a new file's:
    what the umask allows)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        temp.chmod(_mode(path))
    except OSError:
        temp.unlink()
        raise
    return temp


def _mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _fix(exc: OSError) -> str:
    if isinstance(exc, PermissionError) or exc.errno == 30:  # EROFS
        return "make it writable (or run init where you can write), then rerun"
    return "fix that, then rerun"
