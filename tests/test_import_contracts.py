"""The layers contract names every package of Core (import-linter checks exhaustiveness only in containers)."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The worker and the two distributions it shares with Core (wire/, sandbox/).
WORKER_PACKAGES = {"quire_worker", "quire_wire", "quire_sandbox"}


def _importlinter() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _layers_contract() -> dict:
    (contract,) = [c for c in _importlinter()["contracts"] if c["type"] == "layers" and not c.get("containers")]
    return contract


def _named_in(layers: list[str]) -> set[str]:
    return {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}


def _top_level_packages() -> set[str]:
    """Core's packages: every top-level package but the tests and the scripts (benchmarks and the cluster's
    tools), which are not shipped."""
    return {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "scripts"}


def test_every_top_level_package_of_core_is_a_layer_of_the_contexts_contract():
    assert _named_in(_layers_contract()["layers"]) == _top_level_packages()


def test_every_package_the_linter_reads_is_in_the_contract_or_the_worker():
    assert set(_importlinter()["root_packages"]) == _top_level_packages() | WORKER_PACKAGES


def test_the_distribution_ships_every_package_of_core():
    shipped = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert {pattern.rstrip("*") for pattern in shipped["include"]} >= _top_level_packages()


def test_the_composition_root_is_on_top_and_the_ground_floor_at_the_bottom():
    layers = _layers_contract()["layers"]
    assert (layers[0], layers[-1]) == ("config", "foundation")
