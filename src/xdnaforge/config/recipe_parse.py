"""Recipe validation from YAML data: every problem collected with its key path.

Pure: takes a parsed Document and returns a frozen Recipe or the list of problems. The source
and build sections are read by config/recipe_build.py; hosts, driver, audit, install and
validate here.
"""

from __future__ import annotations

import re
from typing import Any

from xdnaforge.config.kernel import KernelRange, parse_range
from xdnaforge.config.recipe import (
    CONTRACT_FIELDS,
    GATES,
    KINDS,
    Baseline,
    DriverContract,
    HostSpec,
    Npu,
    Recipe,
    Thresholds,
    Validation,
)
from xdnaforge.config.recipe_audit import parse_audit
from xdnaforge.config.recipe_build import (
    NAME_RE,
    parse_build,
    parse_distro_stack,
    parse_environment,
    parse_environment_keyring,
    parse_prebuilt,
    parse_source,
)
from xdnaforge.schema import Reader, did_you_mean
from xdnaforge.yamlfile import Document, KeyPath, shown_key

_PCI_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{4}$")
_REVISION_RE = re.compile(r"^0x[0-9a-f]{2}$")


def parse_recipe(document: Document, digest: str) -> tuple[Recipe | None, Reader]:
    """Validate one recipe document; the Reader holds every problem found."""
    reader = Reader(document)
    declared = document.data.get("kind") if isinstance(document.data, dict) else None
    distro_kind = declared == "distro"
    # a prebuilt recipe names the vendor's files instead of sources and build steps, a
    # distro recipe the archive and its packages: neither compiles anything
    prebuilt_kind = declared == "prebuilt" or distro_kind
    specific = (
        ("distro",) if distro_kind else ("prebuilt",) if prebuilt_kind else ("source", "build")
    )
    top = reader.mapping(
        document.data,
        (),
        required=(
            "schema",
            "name",
            "description",
            "hosts",
            "driver",
            *specific,
            "install",
            "validate",
        ),
        optional=("kind", "patches", "audit"),
    )
    if top is None:
        return None, reader
    schema = reader.integer(top, "schema", ())
    if schema is not None and schema != 1:
        reader.problem(("schema",), "unsupported schema; this xdnaforge reads schema 1")
    name = reader.string(top, "name", ())
    if name is not None and not NAME_RE.match(name):
        reader.problem(("name",), "must be lowercase letters, digits, '.', '_' or '-'")
    kind = reader.choice(top, "kind", (), KINDS) if "kind" in top else "source"
    description = reader.string(top, "description", ())
    hosts = _hosts(reader, top.get("hosts"), ("hosts",))
    driver = _driver(reader, top.get("driver"), ("driver",))
    source = None if prebuilt_kind else parse_source(reader, top.get("source"), ("source",))
    prebuilt = (
        parse_prebuilt(reader, top.get("prebuilt"), ("prebuilt",))
        if prebuilt_kind and not distro_kind
        else ()
    )
    stack = parse_distro_stack(reader, top.get("distro"), ("distro",)) if distro_kind else None
    patch_sets = reader.strings(top, "patches", ())
    if prebuilt_kind and patch_sets:
        reader.problem(("patches",), f"a {declared} recipe has nothing to patch")
    steps, depends, known_failures, compat = (
        ((), (), (), ()) if prebuilt_kind else parse_build(reader, top.get("build"), ("build",))
    )
    environment = None if prebuilt_kind else parse_environment(reader, top.get("build"))
    environment_keyring = (
        None if prebuilt_kind else parse_environment_keyring(reader, top.get("build"))
    )
    if (
        environment is not None
        and depends
        and f"{environment[0]}-{environment[1]}" not in {key for key, _ in depends}
    ):
        reader.problem(
            ("build", "environment"),
            "no build.depends list for the distro the build runs in",
            hint=f"build.depends has {', '.join(shown_key(key) for key, _ in depends)}",
        )
    install_order = _install(reader, top.get("install"), ("install",))
    validation = _validation(reader, top.get("validate"), ("validate",))

    produced = {p for step in steps for p in step.produces} | {p.package for p in prebuilt}
    if distro_kind:  # every name listed, also of entries with their own problems
        listed = (
            (top.get("distro") or {}).get("packages") if isinstance(top.get("distro"), dict) else []
        )
        produced |= {
            str(i["package"]) for i in listed or [] if isinstance(i, dict) and "package" in i
        }
    makes = f"the recipe produces: {', '.join(sorted(produced)) or 'nothing'}"
    audit = parse_audit(reader, top.get("audit", {}), ("audit",), produced)
    for index, package in enumerate(install_order):
        if package not in produced:
            reader.problem(
                ("install", "order", index),
                (
                    "is not among distro.packages"
                    if distro_kind
                    else "is not produced by any build step or prebuilt package"
                )
                + did_you_mean(package, produced),
                hint=makes,
            )

    if (
        reader.problems
        or name is None
        or kind is None
        or description is None
        or hosts is None
        or driver is None
        or (source is None and not prebuilt_kind)
        or (distro_kind and stack is None)
        or validation is None
    ):
        return None, reader
    line = document.where(())[0]
    return (
        Recipe(
            name=name,
            kind=kind,
            description=description,
            origin=f"{document.source}:{line}",
            digest=digest,
            hosts=hosts,
            driver=driver,
            source=source,
            prebuilt=prebuilt,
            patch_sets=patch_sets,
            steps=steps,
            build_depends=depends,
            known_test_failures=known_failures,
            compat=compat,
            waivers=audit.waivers,
            admit=audit.admit,
            script_waivers=audit.scripts,
            install_order=install_order,
            validation=validation,
            environment=environment,
            environment_keyring=environment_keyring,
            distro=stack,
        ),
        reader,
    )


def parse_npu(reader: Reader, value: Any, path: KeyPath) -> Npu | None:
    npu = reader.mapping(value, path, required=("pci",), optional=("revision", "name"))
    if npu is None:
        return None
    pci = reader.string(npu, "pci", path)
    if pci is not None and not _PCI_RE.match(pci):
        reader.problem((*path, "pci"), "is not vendor:device in lowercase hex, e.g. 1022:17f0")
        pci = None
    revision = reader.string(npu, "revision", path)
    if revision is not None and not _REVISION_RE.match(revision):
        reader.problem((*path, "revision"), "is not a PCI revision like 0x10")
        revision = None
    if pci is None:
        return None
    return Npu(pci=pci, revision=revision, name=reader.string(npu, "name", path))


def parse_distro(reader: Reader, value: Any, path: KeyPath) -> tuple[str, str] | None:
    distro = reader.mapping(value, path, required=("id", "version"))
    if distro is None:
        return None
    distro_id = reader.string(distro, "id", path)
    version = reader.string(distro, "version", path)
    if distro_id is None or version is None:
        return None
    return distro_id, version


def parse_kernel(reader: Reader, parent: dict[str, Any], path: KeyPath) -> KernelRange | None:
    text = reader.string(parent, "kernel", path)
    if text is None:
        return None
    try:
        return parse_range(text)
    except ValueError as error:
        reader.problem((*path, "kernel"), str(error))
        return None


RUNTIMES = ("host", "container")
# an OCI image reference: [registry/]name[:tag][@digest], lower case names
_IMAGE_RE = re.compile(
    r"^[a-z0-9][a-z0-9._-]*(:[0-9]+)?(/[a-z0-9][a-z0-9._-]*)*"
    r"(:\w[\w.-]{0,127})?(@sha256:[0-9a-f]{64})?$"
)


def _hosts(reader: Reader, value: Any, path: KeyPath) -> HostSpec | None:
    hosts = reader.mapping(
        value, path, required=("distro", "kernel", "npu"), optional=("runtime", "runtime_image")
    )
    if hosts is None:
        return None
    runtime = reader.choice(hosts, "runtime", path, RUNTIMES)
    image = reader.string(hosts, "runtime_image", path)
    if runtime == "container" and "runtime_image" not in hosts:
        reader.problem(
            path, "runtime: container needs runtime_image (the image the packages are built for)"
        )
    runs_on_host = runtime == "host" or "runtime" not in hosts  # a wrong value is its own problem
    if runs_on_host and "runtime_image" in hosts:
        reader.problem((*path, "runtime_image"), "only used with runtime: container")
    if image is not None and not _IMAGE_RE.match(image):
        reader.problem(
            (*path, "runtime_image"),
            "is not an image reference like ubuntu:24.04 or registry/name:tag",
        )
    distro = parse_distro(reader, hosts.get("distro"), (*path, "distro"))
    kernel = parse_kernel(reader, hosts, path)
    npus = []
    for index, item in enumerate(reader.sequence(hosts, "npu", path)):
        npu = parse_npu(reader, item, (*path, "npu", index))
        if npu is not None:
            npus.append(npu)
    if "npu" in hosts and not npus and not reader.problems:
        reader.problem((*path, "npu"), "list at least one NPU PCI function")
    if distro is None or kernel is None:
        return None
    return HostSpec(
        distro_id=distro[0],
        distro_version=distro[1],
        kernel=kernel,
        npus=tuple(npus),
        runtime=runtime or "host",
        runtime_image=image,
    )


def _driver(reader: Reader, value: Any, path: KeyPath) -> DriverContract | None:
    driver = reader.mapping(
        value,
        path,
        required=("driver",),
        optional=(
            "drm_version",
            "firmware_version",
            "firmware_protocol_major",
            "cmd_bo_max_bytes",
            "notes",
            "unknown",
        ),
    )
    if driver is None:
        return None
    name = reader.string(driver, "driver", path)
    if name is None:
        return None
    unknown = []
    if "unknown" in driver:
        where = (*path, "unknown")
        said = reader.mapping(driver["unknown"], where, optional=CONTRACT_FIELDS)
        for field, reason in (said or {}).items():
            text = reader.as_string(reason, (*where, field))
            if field in driver:
                reader.problem((*where, field), "is stated above: it is not unknown")
            elif text is not None:
                unknown.append((field, text))
    return DriverContract(
        unknown=tuple(unknown),
        driver=name,
        drm_version=reader.string(driver, "drm_version", path),
        firmware_version=reader.string(driver, "firmware_version", path),
        firmware_protocol_major=reader.integer(driver, "firmware_protocol_major", path, minimum=0),
        cmd_bo_max_bytes=reader.integer(driver, "cmd_bo_max_bytes", path, minimum=1),
        notes=reader.string(driver, "notes", path),
    )


def _install(reader: Reader, value: Any, path: KeyPath) -> tuple[str, ...]:
    install = reader.mapping(value, path, required=("order",))
    if install is None:
        return ()
    return reader.strings(install, "order", path)


def _validation(reader: Reader, value: Any, path: KeyPath) -> Validation | None:
    section = reader.mapping(
        value,
        path,
        required=("gates",),
        optional=(
            "memlock_min_kib",
            "xrt_version",
            "plugin_version",
            "firmware_version",
            "thresholds",
            "baseline",
        ),
    )
    if section is None:
        return None
    gates = reader.strings(section, "gates", path)
    for index, gate in enumerate(gates):
        if gate not in GATES:
            reader.problem(
                (*path, "gates", index),
                f"unknown gate{did_you_mean(gate, GATES)}",
                hint=f"gates: {', '.join(GATES)}",
            )
    memlock: int | None = None
    if section.get("memlock_min_kib", "unlimited") != "unlimited":
        memlock = reader.integer(section, "memlock_min_kib", path, minimum=1)
    here = (*path, "thresholds")
    limits = (
        reader.mapping(
            section.get("thresholds", {}),
            here,
            optional=("gemm_tops_min", "latency_us_max", "throughput_ops_min"),
        )
        or {}
    )
    thresholds = Thresholds(
        gemm_tops_min=reader.number(limits, "gemm_tops_min", here),
        latency_us_max=reader.number(limits, "latency_us_max", here),
        throughput_ops_min=reader.number(limits, "throughput_ops_min", here),
    )
    baseline = None
    if "baseline" in section:
        here = (*path, "baseline")
        base = reader.mapping(
            section["baseline"],
            here,
            required=("gemm_tops", "latency_us", "throughput_ops", "evidence"),
        )
        if base is not None:
            tops = reader.number(base, "gemm_tops", here)
            latency = reader.number(base, "latency_us", here)
            throughput = reader.number(base, "throughput_ops", here)
            evidence = reader.string(base, "evidence", here)
            if tops is not None and latency is not None and throughput is not None and evidence:
                baseline = Baseline(
                    gemm_tops=tops, latency_us=latency, throughput_ops=throughput, evidence=evidence
                )
    return Validation(
        gates=gates,
        memlock_min_kib=memlock,
        xrt_version=reader.string(section, "xrt_version", path),
        plugin_version=reader.string(section, "plugin_version", path),
        firmware_version=reader.string(section, "firmware_version", path),
        thresholds=thresholds,
        baseline=baseline,
    )
