"""Where build steps and proofs run: the host, a debootstrapped root entered with
bubblewrap, or a podman/docker image; creating them (env.json), the proof sandbox and the proof
runner, and the runtime Containerfile for hosts that run the userspace in a container."""
