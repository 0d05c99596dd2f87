"""The NPU host: the bottom-up hardware gates (host, memlock, device, runtime, examine,
validate, pyxrt), what they may use (the gate context, the NPU's user), where the installed
XRT lives (its layout, read from the installed packages), the host checks they share with
install, and the benchmark figures they judge."""
