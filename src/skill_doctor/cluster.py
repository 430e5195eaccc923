"""cluster: `batch --dask ADDRESS`, grading the sessions on an existing Dask distributed cluster.

An optional extra (`pip install 'skill-doctor[dask]'`): nothing here is imported unless
`--dask` is given, and the base install does not need the `distributed` package.

Each file is one task, `batch.grade_one`, the function `-j N` runs in its processes, so the
pages are the same bytes. The task reads the session from the path it was given (a relative
one under the submitting machine's working directory) and writes the pages into the batch's
staging folder, which is why session files and the output folder must be on a path every
worker sees at the same place; the main process then only moves folders and writes the
index. The rubric is sent to every worker once (scattered), not with each task; the home
folder that pages show as `~` is the submitting user's, not the worker's.

Workers must run the same skill-doctor version (checked when connecting: the generator
version is in every report.json, and a different grader would grade differently).
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from . import __version__
from .batch import Collect, Start, grade_one
from .errors import UsageError

if TYPE_CHECKING:
    from .rubric import Rubric

CONNECT_TIMEOUT = 10.0  # seconds to reach the scheduler
WORKER_TIMEOUT = 60.0  # seconds to wait for a first worker when none is connected yet
INSTALL = "pip install 'skill-doctor[dask]'"


class Cluster:
    """A connected Dask client and the number of sessions its workers grade at once."""

    def __init__(self, client: Any, address: str, workers: int) -> None:
        self.client = client
        self.address = address
        self.workers = workers

    def starter(self, paths: Sequence[str], rubric: Rubric, options: Mapping[str, Any]) -> Start:
        """A `batch.Start` that submits `grade_one(paths[index], ...)` to the cluster."""
        from concurrent.futures import CancelledError

        from .redact import home_dir

        client = self.client
        shared = client.scatter(rubric, broadcast=True, hash=False)
        remote = dict(options, base=os.getcwd(), home=home_dir() or "")
        if remote.get("out_dir") is not None:
            remote["out_dir"] = os.path.abspath(remote["out_dir"])
        batch_key = uuid.uuid4().hex[:12]  # tasks of two batches on one cluster never clash

        def start(index: int, done: Callable[[], None]) -> Collect:
            future = client.submit(grade_one, paths[index], shared, index=index, **remote,
                                   key=f"skill-doctor-{batch_key}-{index}", pure=False)
            future.add_done_callback(lambda _: done())

            def collect() -> Any:
                try:
                    return future.result()
                except CancelledError:  # the client lost the scheduler
                    raise UsageError(f"lost the Dask scheduler at {self.address} during the "
                                     "batch; nothing was written") from None
                finally:
                    future.release()
            return collect
        return start


def _worker_version() -> str:
    """Runs on each worker: the skill-doctor version it imports."""
    from skill_doctor import __version__ as version

    return version


@contextmanager
def connect(address: str) -> Iterator[Cluster]:
    """A client of the scheduler at `address`, checked to have workers that run this
    skill-doctor version; every problem is a one-line usage error (exit 2)."""
    try:
        from distributed import Client
        from distributed.comm import resolve_address
    except ImportError:
        raise UsageError(f"--dask needs the distributed package: {INSTALL}") from None
    # Checked before a client is made: one that fails on a malformed address is left behind
    # half made, and hangs the interpreter's exit.
    try:
        resolve_address(address)
    except ValueError as exc:
        raise UsageError(f"--dask {address!r} is not a scheduler address "
                         f"(tcp://HOST:PORT): {exc}") from None
    except OSError as exc:  # the host name does not resolve
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except Exception as exc:  # OSError, TimeoutError
        raise UsageError(f"cannot reach the Dask scheduler at {address}: "
                         f"{type(exc).__name__}: {exc}") from None
    try:
        yield Cluster(client, address, _checked_workers(client, address))
    finally:
        client.close()


def _checked_workers(client: Any, address: str) -> int:
    """The number of worker threads; a usage error when there is none or one cannot import
    this skill-doctor version."""
    try:
        client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
    except Exception:
        raise UsageError(f"no Dask worker joined the scheduler at {address} within "
                         f"{WORKER_TIMEOUT:g} s") from None
    try:
        versions = client.run(_worker_version)
    except Exception as exc:  # most often ModuleNotFoundError, raised on the worker
        raise UsageError(f"the Dask workers at {address} cannot run skill-doctor "
                         f"({type(exc).__name__}: {exc}); install skill-doctor {__version__} "
                         f"on every worker") from None
    other = sorted(set(versions.values()) - {__version__})
    if other:
        raise UsageError(f"the Dask workers at {address} run skill-doctor {', '.join(other)}, "
                         f"this is {__version__}: install the same version on every worker")
    return max(1, sum(client.nthreads().values()))
