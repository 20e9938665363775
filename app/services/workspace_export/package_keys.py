"""Storage keys of a workspace-export package, built from ids by these functions only (INV-14).

    packages/w<workspace>/e<execution>/a<attempt>/                      the package prefix
    packages/w<workspace>/e<execution>/a<attempt>/<dataset>/<dataset>-00001.csv.zip   a volume
    packages/w<workspace>/e<execution>/a<attempt>/SHA256SUMS           every volume's checksum
    packages/w<workspace>/e<execution>/a<attempt>/manifest.json        the manifest

Each attempt of an execution writes under a prefix of its own, so a restarted attempt can remove
everything an earlier one left without touching its own work. Ids must be positive integers and
dataset names plain lower-case identifiers; every key is checked with `check_key_under` so that
nothing lands outside the package prefix, whatever a caller passes.
"""

from __future__ import annotations

import re

from app.storage import InvalidKey, check_key, check_key_under
from app.vocabulary import PackageFormat

PACKAGES_ROOT = "packages"
MANIFEST_NAME = "manifest.json"
CHECKSUMS_NAME = "SHA256SUMS"
# A volume's name ends with its format's suffix: zipped text, or a Parquet file as it is.
VOLUME_SUFFIXES: dict[str, str] = {
    PackageFormat.CSV: "csv.zip",
    PackageFormat.JSONL: "jsonl.zip",
    PackageFormat.PARQUET: "parquet",
}
_DATASET_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


def _positive_id(value: object, what: str) -> int:
    # bool is an int in Python; True must not become "1".
    if type(value) is not int or value <= 0:
        raise InvalidKey(f"{what} for a package key must be a positive integer, not {value!r}")
    return value


def package_prefix(workspace_id: int, execution_id: int, attempt: int) -> str:
    prefix = (
        f"{PACKAGES_ROOT}/w{_positive_id(workspace_id, 'workspace id')}"
        f"/e{_positive_id(execution_id, 'execution id')}/a{_positive_id(attempt, 'attempt')}/"
    )
    check_key(prefix.rstrip("/"))
    return prefix


def volume_key(prefix: str, dataset: str, sequence: int, fmt: str) -> str:
    if not isinstance(dataset, str) or not _DATASET_NAME.match(dataset):
        raise InvalidKey(f"dataset name {dataset!r} cannot be part of a package key")
    if fmt not in VOLUME_SUFFIXES:
        raise InvalidKey(f"package format {fmt!r} cannot be part of a package key")
    number = _positive_id(sequence, "volume sequence")
    return check_key_under(f"{prefix}{dataset}/{dataset}-{number:05d}.{VOLUME_SUFFIXES[fmt]}", prefix)


def manifest_key(prefix: str) -> str:
    return check_key_under(f"{prefix}{MANIFEST_NAME}", prefix)


def checksums_key(prefix: str) -> str:
    return check_key_under(f"{prefix}{CHECKSUMS_NAME}", prefix)


def relative_to_package(key: str, prefix: str) -> str:
    """A key as the manifest names it: relative to the package prefix."""
    return check_key_under(key, prefix)[len(prefix) :]
