"""A podman/docker image as a build environment: an engine that cannot start containers."""

from __future__ import annotations

from xdnaforge.environments.container import engine_fault


def test_engine_that_cannot_start_containers() -> None:
    # podman in a nested sandbox, and docker without its daemon (recorded on this machine)
    podman = (
        "Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied"
    )
    assert "cannot start containers here (setrlimit refused" in engine_fault("podman", podman)
    docker = (
        "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
        "Is the docker daemon running?"
    )
    assert engine_fault("docker", docker) == (
        "docker is installed but its service is not reachable by this user"
    )
