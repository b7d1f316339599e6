"""Engines: where the batch tasks run. Each yields results as tasks finish.

* ``local``: a process pool on this machine (``-j`` processes; ``-j 1`` runs in-process);
* ``dask``: a ``dask.distributed`` cluster: the scheduler at ``address``, or a
  ``LocalCluster`` of ``-j`` single-threaded worker processes started for the run;
* ``ray``: ``ray.init(address)`` (or a local ray with ``-j`` CPUs), one CPU per task.

Every engine runs :func:`traceconv.batch.jobs.convert_one` on the same picklable tasks, so
the outputs do not depend on the engine. A worker runs one task at a time (one thread per
dask worker, one CPU per ray task), so its memory is bounded by the largest single input.
Remote workers must see the input and output paths (a shared file system).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..errors import TraceconvError
from .jobs import Task

ENGINES = ("local", "dask", "ray")
Job = Callable[[Task], Any]


CONNECT_TIMEOUT = 10.0   # seconds a cluster at --address has to answer


def _local(job: Job, tasks: Sequence[Task], jobs: int, _address: str | None,
           _timeout: float) -> Iterator[Any]:
    if jobs <= 1:
        yield from map(job, tasks)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    # spawn, not fork: the parent may hold a progress-bar thread and large objects
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(job, task) for task in tasks]
        for future in as_completed(futures):
            yield future.result()


def _missing(engine: str, module: str) -> TraceconvError:
    return TraceconvError(f"--engine {engine} needs {module}, which is not installed: "
                          f"pip install 'traceconv[{engine}]'")


def _unreachable(engine: str, address: str, timeout: float, exc: BaseException) -> TraceconvError:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return TraceconvError(f"--engine {engine}: no scheduler answered at {address} within "
                          f"{timeout:g} s ({reason}); check --address, or leave it out to "
                          "start a cluster here")


def _dask(job: Job, tasks: Sequence[Task], jobs: int, address: str | None,
          timeout: float) -> Iterator[Any]:
    try:
        from dask.distributed import Client, LocalCluster
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise _missing("dask", "dask.distributed") from None
    cluster = None
    if address is None:
        # ":0": any free port for the scheduler's HTTP server (None still takes 8787 and
        # warns on stderr when another cluster holds it)
        cluster = LocalCluster(n_workers=max(jobs, 1), threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.ERROR)
    try:
        client = Client(address, timeout=timeout) if address else Client(cluster)
    except (OSError, TimeoutError) as exc:   # nothing listening, or no answer in time
        if cluster is not None:
            cluster.close()
        raise _unreachable("dask", address or "", timeout, exc) from None
    try:
        # each result is released once taken: a worker would otherwise hold every result
        # it made until the run ends (100 MB over 15,000 tasks)
        for future in dask_completed(client.map(job, tasks, pure=False)):
            result = future.result()
            future.release()
            yield result
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _ray(job: Job, tasks: Sequence[Task], jobs: int, address: str | None,
         timeout: float) -> Iterator[Any]:
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
        remote = ray.remote(num_cpus=1)(job)
        pending = [remote.remote(task) for task in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


_RUNNERS = {"local": _local, "dask": _dask, "ray": _ray}


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
    if engine not in _RUNNERS:
        raise TraceconvError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    return _RUNNERS[engine](job, tasks, jobs, address, connect_timeout)
