"""The deployments `make serve` and `make serve-demo` deploy: prefect.yaml's, and the registry's for every source of
another package that prefect.yaml does not list, each with its schedule, parameters and bundled demo inputs.

prefect.yaml lists the built-in sources by hand (with comments a user reads); a source installed from its own
package brings its `Deployment` in its registry entry (timelyqa.sources), and is deployed beside them, its output
folder added to the weekly release's sources, without editing prefect.yaml.
"""

from __future__ import annotations

import copy
import importlib
from typing import Any

from timelyqa.errors import ConfigError
from timelyqa.sources import BUILTIN, SourceSpec, sources

RELEASE_ENTRYPOINT = "flows.release:release_flow"
"""The deployment whose `sources` parameter lists the source output folders to release."""
DEMO_OUT = "out/serve-demo"
"""Where `make serve-demo`'s deployments write."""


def registry_deployment(spec: SourceSpec, pool: dict[str, Any]) -> dict[str, Any]:
    """The source's deployment as a prefect.yaml entry: its name, flow, tags, schedule (UTC) and parameters (its
    output folder `out/<source>` unless they name another), on `pool`."""
    deployment = spec.deployment
    return {"name": deployment.name, "description": spec.card.summary, "entrypoint": deployment.entrypoint,
            "tags": [spec.name], "parameters": {"out": f"out/{spec.name}", **deployment.parameters},
            "work_pool": copy.deepcopy(pool),
            "schedules": [{"cron": deployment.cron, "timezone": "UTC", "active": True}]}


def unlisted(config: dict[str, Any]) -> list[SourceSpec]:
    """The registered sources of other packages whose deployment `config` (prefect.yaml) does not list."""
    listed = {d["name"] for d in config.get("deployments") or []}
    return [spec for name, spec in sources().items() if name not in BUILTIN and spec.deployment.name not in listed]


def with_registry(config: dict[str, Any]) -> dict[str, Any]:
    """`config` (prefect.yaml, loaded) with a deployment for each source `unlisted` names, before the release's,
    whose `sources` (deployed and demo) then read its output too; its demo parameters in `definitions.demo`. A copy;
    `config` is left as it was."""
    config = copy.deepcopy(config)
    added = unlisted(config)
    if not added:
        return config
    deployments: list[dict[str, Any]] = config.setdefault("deployments", [])
    definitions = config.setdefault("definitions", {}) or {}
    config["definitions"] = definitions
    pool = (definitions.get("work_pools") or {}).get("local") or {"name": "local", "work_queue_name": "default",
                                                                  "job_variables": {"working_dir": "."}}
    demo = definitions.setdefault("demo", {})
    release = next((d for d in deployments if d.get("entrypoint") == RELEASE_ENTRYPOINT), None)
    at = deployments.index(release) if release is not None else len(deployments)
    for spec in added:
        entry = registry_deployment(spec, pool)
        deployments.insert(at, entry)
        at += 1
        demo[spec.deployment.name] = {"out": f"{DEMO_OUT}/{spec.name}", **spec.deployment.demo}
        if release is not None and "sources" in release.get("parameters", {}):
            release["parameters"]["sources"].append(entry["parameters"]["out"])
            if isinstance((demo.get(release["name"]) or {}).get("sources"), list):
                demo[release["name"]]["sources"].append(demo[spec.deployment.name]["out"])
    return config


def runner_deployment(entry: dict[str, Any], parameters: dict[str, Any] | None = None) -> Any:
    """The entry (a prefect.yaml deployment) as Prefect builds it, with no server: its flow imported from its
    entrypoint and checked against its parameters (`parameters` over them); ConfigError naming the deployment when
    the flow does not load or refuses them."""
    from prefect.flows import Flow  # noqa: PLC0415 - Prefect loads slowly; only the deployments' readers need it

    module, _, name = entry["entrypoint"].partition(":")
    try:
        flow = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"deployment {entry['name']}: entrypoint {entry['entrypoint']!r} does not load "
                          f"({type(exc).__name__}: {exc})") from None
    if not isinstance(flow, Flow):
        raise ConfigError(f"deployment {entry['name']}: entrypoint {entry['entrypoint']!r} is no Prefect flow")
    given = {**entry.get("parameters", {}), **(parameters or {})}
    try:
        flow.validate_parameters(given)  # what the server checks when a run is created
        return flow.to_deployment(entry["name"], parameters=given, tags=entry.get("tags"),
                                  cron=[s["cron"] for s in entry.get("schedules") or []] or None,
                                  description=entry.get("description"))
    except Exception as exc:  # noqa: BLE001 - Prefect's parameter errors have no common base; each is this entry's
        raise ConfigError(f"deployment {entry['name']}: {type(exc).__name__}: {exc}") from None
