"""Engines: where the batch tasks run. Each yields results as tasks finish.

* ``local``: a process pool on this machine (``-j`` processes, started once for the run;
  ``-j 1`` runs in-process);
* ``dask``: a ``dask.distributed`` cluster: the scheduler at ``address``, or a
  ``LocalCluster`` of ``-j`` single-threaded worker processes started for the run;
* ``ray``: ``ray.init(address)`` (or a local ray with ``-j`` CPUs), one CPU per task.

Every engine runs :func:`traceconv.batch.jobs.convert_one` on the same picklable tasks, so
the outputs do not depend on the engine. A worker process that traceconv starts (the local
pool, a ``LocalCluster``, a local ray) first gets the command line's heap settings
(:func:`~traceconv.process_setup.keep_freed_memory`): dask starts its workers with glibc
giving back every freed block over 64 kB, which made each conversion there 1.45x the CPU
of the same conversion in the command line. Workers of a cluster at ``address`` are left
as their owner set them up. A worker runs one task at a time (one thread per
dask worker, one CPU per ray task), so its memory is bounded by the largest single input.
Remote workers must see the input and output paths (a shared file system).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import Any

from ..errors import TraceconvError
from .jobs import BatchResult, Task

ENGINES = ("local", "dask", "ray")
Job = Callable[[Task], Any]


CONNECT_TIMEOUT = 10.0   # seconds a cluster at --address has to answer
RETRIES = 1              # a task whose worker died is run once more, then reported


def _in_tuned_process(job: Job, task: Task) -> Any:
    """``job(task)`` in a worker process traceconv started: the process's heap settings
    are made before its first task."""
    global _tuned
    if not _tuned:
        from ..process_setup import keep_freed_memory

        keep_freed_memory()
        _tuned = True
    return job(task)


_tuned = False


def _tuned_job(job: Job) -> Job:
    return partial(_in_tuned_process, job)


def lost(task: Task, reason: str) -> BatchResult:
    """The result of a task whose worker died (twice) or that raised unexpectedly."""
    return BatchResult(task.path, None, "failed",
                       error=f"{task.path}: not converted, its worker failed twice ({reason})")


class Pool:
    """Workers that take tasks as they come (:meth:`submit`) and hand back every result
    (:meth:`results`, in the order they finish). Workers live for the whole run: no
    process starts per task."""

    def submit(self, task: Task) -> None:
        raise NotImplementedError

    def results(self) -> Iterator[Any]:
        raise NotImplementedError


class _InProcess(Pool):
    """``-j 1``: the tasks run here, in order, when the results are asked for."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.tasks: list[Task] = []

    def submit(self, task: Task) -> None:
        self.tasks.append(task)

    def results(self) -> Iterator[Any]:
        yield from map(self.job, self.tasks)


class _Processes(Pool):
    """A process pool started once for the run. A process that dies breaks the pool for
    every task it held, so each of those is run once more alone, in a process of its own:
    only the task that dies there too is reported."""

    def __init__(self, job: Job, jobs: int) -> None:
        self.job, self.jobs = job, jobs
        self.pool = _process_pool(jobs)
        self.futures: dict[Any, Task] = {}

    def submit(self, task: Task) -> None:
        self.futures[self.pool.submit(self.job, task)] = task

    def results(self) -> Iterator[Any]:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        died = []
        for future in as_completed(list(self.futures)):
            task = self.futures.pop(future)
            try:
                yield future.result()
            except BrokenProcessPool:
                died.append(task)
        for task in died:
            yield self._alone(task)

    def _alone(self, task: Task) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        with _process_pool(1) as alone:
            try:
                return alone.submit(self.job, task).result()
            except BrokenProcessPool as exc:
                return lost(task, str(exc) or "its process ended")

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _process_pool(workers: int) -> Any:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # spawn, not fork: the parent may hold a progress-bar thread and large objects
    return ProcessPoolExecutor(workers, mp_context=get_context("spawn"))


class _Dask(Pool):
    """A dask client; a task whose worker died is rescheduled once by the scheduler."""

    def __init__(self, job: Job, client: Any) -> None:
        self.job, self.client = job, client
        self.futures: dict[Any, Task] = {}

    def submit(self, task: Task) -> None:
        future = self.client.submit(self.job, task, pure=False, retries=RETRIES)
        self.futures[future] = task

    def results(self) -> Iterator[Any]:
        from dask.distributed import as_completed

        for future in as_completed(list(self.futures)):
            task = self.futures.pop(future)
            try:
                result = future.result()
            except Exception as exc:   # noqa: BLE001  (KilledWorker, a worker's crash)
                result = lost(task, f"{type(exc).__name__}: {exc}".splitlines()[0])
            # each result is released once taken: a worker would otherwise hold every result
            # it made until the run ends (100 MB over 15,000 tasks)
            future.release()
            yield result


class _Ray(Pool):
    def __init__(self, job: Job, tuned: bool) -> None:
        import ray

        # (ray makes remote functions of functions only: not of a partial; its stubs type the
        # remote call by the one function's arity, and this holds either of two)
        self.remote: Any = ray.remote(num_cpus=1, max_retries=RETRIES)(
            _in_tuned_process if tuned else job)
        self.first = (job,) if tuned else ()
        self.pending: dict[Any, Task] = {}

    def submit(self, task: Task) -> None:
        self.pending[self.remote.remote(*self.first, task)] = task

    def results(self) -> Iterator[Any]:
        import ray

        while self.pending:
            done, _ = ray.wait(list(self.pending), num_returns=1)
            task = self.pending.pop(done[0])
            try:
                yield ray.get(done[0])
            except Exception as exc:   # noqa: BLE001  (a worker's crash)
                yield lost(task, f"{type(exc).__name__}: {exc}".splitlines()[0])


@contextmanager
def _local(job: Job, jobs: int, _address: str | None, _timeout: float) -> Iterator[Pool]:
    if jobs <= 1:
        yield _InProcess(job)
        return
    pool = _Processes(_tuned_job(job), jobs)
    try:
        yield pool
    finally:
        pool.close()


def _missing(engine: str, module: str) -> TraceconvError:
    return TraceconvError(f"--engine {engine} needs {module}, which is not installed: "
                          f"pip install 'traceconv[{engine}]'")


def _unreachable(engine: str, address: str, timeout: float, exc: BaseException) -> TraceconvError:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return TraceconvError(f"--engine {engine}: no scheduler answered at {address} within "
                          f"{timeout:g} s ({reason}); check --address, or leave it out to "
                          "start a cluster here")


@contextmanager
def _dask(job: Job, jobs: int, address: str | None, timeout: float) -> Iterator[Pool]:
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise _missing("dask", "dask.distributed") from None
    cluster = None
    if address is None:
        # ":0": any free port for the scheduler's HTTP server (None still takes 8787 and
        # warns on stderr when another cluster holds it); a task whose worker dies is
        # rescheduled once, then reported (the scheduler's default is three times); a
        # worker holds only the task it runs (saturation 1.0: the others wait at the
        # scheduler), so a task that kills its worker takes no healthy one with it
        with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES,
                              "distributed.scheduler.worker-saturation": 1.0}):
            cluster = LocalCluster(n_workers=max(jobs, 1), threads_per_worker=1,
                                   processes=True, dashboard_address=":0",
                                   silence_logs=logging.ERROR)
    try:
        client = Client(address, timeout=timeout) if address else Client(cluster)
    except (OSError, TimeoutError) as exc:   # nothing listening, or no answer in time
        if cluster is not None:
            cluster.close()
        raise _unreachable("dask", address or "", timeout, exc) from None
    try:
        yield _Dask(job if address else _tuned_job(job), client)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


@contextmanager
def _ray(job: Job, jobs: int, address: str | None, timeout: float) -> Iterator[Pool]:
    try:
        import ray
    except ImportError:
        raise _missing("ray", "ray") from None
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=address, num_cpus=None if address else max(jobs, 1),
                     include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR)
        except (ConnectionError, TimeoutError) as exc:
            raise _unreachable("ray", address or "", timeout, exc) from None
    try:
        yield _Ray(job, tuned=not address)
    finally:
        if started:
            ray.shutdown()


_RUNNERS = {"local": _local, "dask": _dask, "ray": _ray}


def open_pool(job: Job, engine: str = "local", jobs: int = 1, address: str | None = None,
              *, connect_timeout: float = CONNECT_TIMEOUT) -> AbstractContextManager[Pool]:
    """Workers of ``engine`` running ``job``, open for the ``with`` block: submit tasks
    as they become ready (``split`` submits each piece as soon as it is written), then
    take the results.

    >>> import tempfile
    >>> from traceconv.batch import plan
    >>> from traceconv.batch.jobs import convert_one
    >>> with open_pool(convert_one, "local", jobs=1) as pool:
    ...     for task in plan(["samples/torch/cnn_step5.pt.trace.json"], tempfile.mkdtemp(), "chrome"):
    ...         pool.submit(task)
    ...     statuses = [r.status for r in pool.results()]
    >>> statuses
    ['ok']
    """
    if engine not in _RUNNERS:
        raise TraceconvError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    return _RUNNERS[engine](job, jobs, address, connect_timeout)


def run_batch(job: Job, tasks: Sequence[Task], engine: str = "local", jobs: int = 1,
              address: str | None = None, *,
              connect_timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """Run ``job`` on every task with ``engine``; yield what each returns, as they finish.

    A cluster at ``address`` that does not answer within ``connect_timeout`` seconds is a
    :class:`~traceconv.errors.TraceconvError` saying so.

    >>> import tempfile
    >>> from traceconv.batch import plan
    >>> from traceconv.batch.jobs import convert_one
    >>> tasks = plan(["samples/torch/cnn_step5.pt.trace.json"], tempfile.mkdtemp(), "chrome")
    >>> [r.status for r in run_batch(convert_one, tasks, "local", jobs=1)]
    ['ok']
    """
    with open_pool(job, engine, jobs, address, connect_timeout=connect_timeout) as pool:
        for task in tasks:
            pool.submit(task)
        yield from pool.results()
