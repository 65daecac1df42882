"""Stages mapped over partitions: on prefect-dask's DaskTaskRunner when a scheduler address (or `local:N`) is given,
else on the flow's own runner; the Wikidata and site-tree flows both fan out through it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from prefect import Task
from prefect.task_runners import TaskRunner

from timelyqa.errors import ConfigError
from timelyqa.wikidata.request import dask_problem

DASK_ADDRESS_ENV = "TIMELYQA_DASK_ADDRESS"
"""The setting beside the flow's `dask_address`: `local:N` (a LocalCluster of N worker processes on this machine)
or a scheduler's address (`tcp://scheduler:8786`); unset or empty, the flow's own task runner."""


def dask_runner(address: str | None) -> TaskRunner[Any] | None:
    """The DaskTaskRunner `address` names (or the setting when it is None); None for the flow's own runner.
    A wrong value is a ConfigError naming the setting, before any work."""
    address = os.environ.get(DASK_ADDRESS_ENV) if address is None else address
    if not address:
        return None
    from prefect_dask import DaskTaskRunner  # imports dask and distributed: only for a run that uses them

    if (why := dask_problem(address)) is not None:
        raise ConfigError(f"dask_address {address!r} ({DASK_ADDRESS_ENV}): {why}")
    if address.startswith("local:"):
        workers = address.removeprefix("local:")
        # One thread a worker: the stages are CPU-bound Python; no dashboard port to collide with another run's.
        return DaskTaskRunner(cluster_kwargs={"n_workers": int(workers), "threads_per_worker": 1,
                                              "processes": True, "dashboard_address": None})
    return DaskTaskRunner(address=address)


class Fanout:
    """Runs a stage's partitions as mapped tasks: on the Dask runner when one is configured, else on the flow's
    own runner; results, never futures, cross between stages (prefect #15633)."""

    def __init__(self, runner: TaskRunner[Any] | None) -> None:
        self.runner = runner

    def map(self, stage: Task[..., Any], each: Callable[[int], None] | None = None, **params: Any) -> list[Any]:
        """The stage's results in order; `each(k)` called as the k-th is at hand (a progress report)."""
        futures = self.runner.map(stage, params) if self.runner is not None else stage.map(**params)
        results = []
        for k, f in enumerate(futures):
            results.append(f.result())
            if each is not None:
                each(k)
        return results


@contextmanager
def fanout(address: str | None) -> Iterator[Fanout]:
    runner = dask_runner(address)
    if runner is None:
        yield Fanout(None)
        return
    with runner:
        yield Fanout(runner)
