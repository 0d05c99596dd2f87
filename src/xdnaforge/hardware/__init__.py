"""The bottom-up hardware gates (host, memlock, device, runtime, examine, validate, pyxrt),
what they may use (the gate context, the NPU's user), the host checks they share with install,
and the benchmark figures they judge."""
